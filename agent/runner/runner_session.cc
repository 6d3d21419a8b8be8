#include "agent/runner/runner_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cstdio>

#include "common/frame_stream.h"
#include "common/reference.h"
#include "mculab/ops.h"
#include "mculab/runner.h"

namespace mculab::agent {
namespace {

std::string Hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string JoinNames(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "nothing besides its timer" : s;
}

// Runner errors that say the link or the agent misbehaved rather than the workload.
bool IsInfraError(std::uint16_t code) {
  return code == MCULAB_ERR_BAD_FRAME || code == MCULAB_ERR_BAD_STATE;
}

constexpr int kMaxBadFrameLogs = 10;

// What one case may report besides its samples: the runner library aggregates at most
// MCULAB_PROTOCOL_MAX_OPS operators per case and sends one MEMORY report per case. More is a runner
// that floods the link (it would grow the agent's batches and spool without bound): the job's
// failure.
constexpr std::uint32_t kMaxOpSamplesPerCase = MCULAB_PROTOCOL_MAX_OPS;
constexpr std::uint32_t kMaxMemoryReportsPerCase = 4;

std::string Seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

class Session {
 public:
  Session(RunnerProcess& runner, Clock& clock, const SessionConfig& config,
          SessionListener& listener, const CancelToken& cancel)
      : runner_(runner), clock_(clock), cfg_(config), listener_(listener), cancel_(cancel) {}

  SessionResult Run();

 private:
  enum class Phase { kAwaitHello, kRunning, kDone };

  void Fail(RunOutcome outcome, std::string message) {
    if (failed_) return;
    failed_ = true;
    result_.outcome = outcome;
    result_.message = std::move(message);
  }
  void Fatal(RunOutcome outcome, std::string message) {
    Fail(outcome, std::move(message));
    fatal_ = true;
  }
  void BeginAbort() {
    if (aborting_) return;
    aborting_ = true;
    abort_deadline_ = clock_.Now() + cfg_.abort_grace;
    if (phase_ == Phase::kRunning) {
      if (auto s = runner_.Write(ToWire(AbortMsg{})); !s) {
        spdlog::warn("{}: could not send ABORT: {}", cfg_.log_prefix, s.error().message);
      }
    }
  }
  std::string CaseName(std::uint16_t index) const {
    std::string s = "case " + std::to_string(index);
    if (index < cfg_.cases.size()) s += " (id " + std::to_string(cfg_.cases[index].id) + ")";
    return s;
  }
  std::string Where() const {
    if (phase_ == Phase::kAwaitHello) return " before the runner's HELLO";
    if (open_case_ >= 0) {
      return " in " + CaseName(static_cast<std::uint16_t>(open_case_)) + " at iteration " +
             std::to_string(next_iteration_);
    }
    return " after " + std::to_string(result_.stats.cases_done) + " of " +
           std::to_string(cfg_.cases.size()) + " cases";
  }
  std::chrono::milliseconds SinceStart() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - start_);
  }
  // How a runner that breaks the protocol (no HELLO, an early exit, link errors) fails the run: the
  // board's fault for the lab's own runner, the job's for a job's own runner.
  RunOutcome RunnerMisbehaved() const {
    return cfg_.custom_runner ? RunOutcome::kWorkloadFailed : RunOutcome::kInfraFailed;
  }
  std::string Whose() const { return cfg_.custom_runner ? "the job's own runner" : "the runner"; }
  std::string WithDiagnostics(std::string msg) {
    if (auto d = runner_.Diagnostics(); !d.empty()) msg += "; the board said: " + d;
    return msg;
  }

  void HandleEvent(const FrameEvent& ev);
  void OnHello(const FrameEvent& ev);
  void OnCaseStart(const CaseStart& m);
  void OnSample(const SampleMsg& m);
  void OnCaseEnd(const CaseEnd& m);
  void OnError(const ErrorMsg& m);
  void OnDone(const Done& m);

  RunnerProcess& runner_;
  Clock& clock_;
  const SessionConfig& cfg_;
  SessionListener& listener_;
  const CancelToken& cancel_;

  SessionResult result_;
  bool failed_ = false;
  bool fatal_ = false;
  bool aborting_ = false;
  Clock::TimePoint abort_deadline_{};
  Clock::TimePoint start_{};
  Phase phase_ = Phase::kAwaitHello;
  FrameStream stream_{FrameSender::kRunner};
  int open_case_ = -1;
  std::uint16_t next_case_ = 0;
  std::uint32_t next_iteration_ = 0;
  std::size_t counters_per_sample_ = 0;
  int bad_frames_logged_ = 0;
  std::uint32_t mismatches_ = 0;
  std::uint32_t op_samples_in_case_ = 0;
  std::uint32_t memory_reports_in_case_ = 0;
};

SessionResult Session::Run() {
  const auto start = clock_.Now();
  start_ = start;
  const auto run_deadline = start + cfg_.run_timeout;
  const auto hello_deadline = start + std::min(cfg_.hello_timeout, cfg_.run_timeout);
  bool link_closed = false;
  std::array<std::uint8_t, 4096> buf;

  while (phase_ != Phase::kDone && !fatal_) {
    if (!aborting_ && cancel_.cancelled()) {
      if (cancel_.reason() == CancelReason::kShutdown) {
        Fail(RunOutcome::kInfraFailed, "the agent was stopped during the run");
      } else if (cancel_.reason() == CancelReason::kBoardGone) {
        Fail(RunOutcome::kInfraFailed,
             "the board went offline during the run (its debug probe disappeared)" + Where());
      } else if (cancel_.reason() == CancelReason::kAgentFault) {
        Fail(RunOutcome::kInfraFailed, "the agent stopped the run" + Where());
      } else {
        Fail(RunOutcome::kCancelled, "cancelled" + Where());
      }
      BeginAbort();
    }
    const auto now = clock_.Now();
    const auto deadline = aborting_                      ? abort_deadline_
                          : phase_ == Phase::kAwaitHello ? hello_deadline
                                                         : run_deadline;
    if (now >= deadline) {
      if (aborting_) {
        spdlog::warn("{}: the runner did not finish within {} ms of ABORT; killing it",
                     cfg_.log_prefix, cfg_.abort_grace.count());
        break;
      }
      if (phase_ == Phase::kAwaitHello && hello_deadline < run_deadline) {
        Fatal(RunnerMisbehaved(),
              WithDiagnostics("no HELLO from " + Whose() + " within " +
                              std::to_string(cfg_.hello_timeout.count()) + " ms"));
        break;
      }
      Fail(RunOutcome::kTimedOut,
           "the run exceeded its timeout of " + Seconds(cfg_.run_timeout) + Where());
      BeginAbort();
      continue;
    }
    auto slice = std::min(cfg_.poll_slice, Remaining(clock_, deadline));
    if (slice.count() <= 0) slice = std::chrono::milliseconds(1);
    auto n = runner_.Read(buf, slice);
    if (!n) {
      if (n.error().code == ErrorCode::kUnavailable) {
        link_closed = true;
        break;
      }
      Fatal(RunOutcome::kInfraFailed, "reading from the runner failed: " + n.error().message);
      break;
    }
    if (*n == 0) continue;
    stream_.Feed(std::span<const std::uint8_t>(buf.data(), *n));
    while (phase_ != Phase::kDone && !fatal_) {
      auto ev = stream_.Next();
      if (!ev) break;
      HandleEvent(*ev);
    }
  }

  if (link_closed && phase_ != Phase::kDone) {
    if (auto st = runner_.Wait(std::chrono::seconds(1))) result_.exit = *st;
    std::string how = result_.exit ? " (runner " + result_.exit->ToString() + ")" : "";
    Fail(RunnerMisbehaved(),
         WithDiagnostics(Whose() + "'s link closed before DONE" + Where() + how));
  }
  if (phase_ == Phase::kDone && !aborting_ && !fatal_ && !runner_.ExitsAfterDone()) {
    // The runner parked its core after DONE (QEMU has no semihosting to exit with): stop it.
    runner_.Kill();
    if (auto st = runner_.Wait(std::chrono::seconds(2))) {
      result_.exit = ExitStatus{true, 0, 0};  // stopped by the agent, as planned
    }
  } else if (phase_ == Phase::kDone && !aborting_ && !fatal_) {
    // The runner ends by itself after DONE (the host runner exits).
    if (auto st = runner_.Wait(cfg_.exit_grace)) {
      result_.exit = *st;
      if (!st->success()) {
        spdlog::warn("{}: the runner ended with {} after DONE", cfg_.log_prefix, st->ToString());
      }
    }
  }
  if (!result_.exit || aborting_) {
    runner_.Kill();
    if (auto st = runner_.Wait(std::chrono::seconds(2))) result_.exit = *st;
  }
  if (result_.exit) result_.stats.to_exit = SinceStart();
  if (mismatches_ > 1 && result_.outcome == RunOutcome::kWorkloadFailed) {
    result_.message += "; " + std::to_string(mismatches_) + " cases in all had wrong checksums";
  }
  result_.stats.bad_frames = stream_.bad_frames();
  result_.stats.skipped_bytes = stream_.skipped_bytes();
  result_.stats.frames = stream_.good_frames();
  // The runner starts with a lone delimiter (to end any boot noise): one skipped byte is normal.
  if (result_.stats.bad_frames > 0 || result_.stats.skipped_bytes > 1) {
    spdlog::warn("{}: {} bad frames and {} stray bytes on the runner link", cfg_.log_prefix,
                 result_.stats.bad_frames, result_.stats.skipped_bytes);
  }
  if (!failed_) result_.outcome = RunOutcome::kSucceeded;
  return result_;
}

void Session::HandleEvent(const FrameEvent& ev) {
  if (!ev.ok()) {
    if (bad_frames_logged_++ < kMaxBadFrameLogs) {
      spdlog::warn("{}: dropped a frame from the runner{}: {}", cfg_.log_prefix, Where(),
                   ev.Describe());
    }
    return;
  }
  if (phase_ == Phase::kAwaitHello && ev.type != Hello::kType) {
    // Output of an earlier run still in a real board's UART buffer: not ours.
    spdlog::debug("{}: ignoring {} before HELLO", cfg_.log_prefix, ev.Describe());
    return;
  }
  auto bad_payload = [&](const Error& e) {
    if (bad_frames_logged_++ < kMaxBadFrameLogs) {
      spdlog::warn("{}: malformed {}: {}", cfg_.log_prefix, ev.Describe(), e.message);
    }
  };
  switch (ev.type) {
    case Hello::kType:
      OnHello(ev);
      break;
    case CaseStart::kType:
      if (auto m = DecodeCaseStart(ev.payload))
        OnCaseStart(*m);
      else
        bad_payload(m.error());
      break;
    case SampleMsg::kType:
      if (auto m = DecodeSample(ev.payload))
        OnSample(*m);
      else
        bad_payload(m.error());
      break;
    case CaseEnd::kType:
      if (auto m = DecodeCaseEnd(ev.payload))
        OnCaseEnd(*m);
      else
        bad_payload(m.error());
      break;
    case LogMsg::kType:
      if (auto m = DecodeLog(ev.payload))
        listener_.OnLog(*m);
      else
        bad_payload(m.error());
      break;
    case ErrorMsg::kType:
      if (auto m = DecodeError(ev.payload))
        OnError(*m);
      else
        bad_payload(m.error());
      break;
    case Done::kType:
      if (auto m = DecodeDone(ev.payload))
        OnDone(*m);
      else
        bad_payload(m.error());
      break;
    case OpSample::kType:
      if (auto m = DecodeOpSample(ev.payload)) {
        if (open_case_ < 0 || m->case_index != open_case_) {
          Fatal(RunnerMisbehaved(), "an op profile of case " + std::to_string(m->case_index) +
                                        " arrived outside that case" + Where());
        } else if (++op_samples_in_case_ > kMaxOpSamplesPerCase) {
          Fatal(RunOutcome::kWorkloadFailed,
                "the runner sent more than " + std::to_string(kMaxOpSamplesPerCase) +
                    " operator profiles (OP_SAMPLE) for one case" + Where() +
                    ": a runner aggregates at most " + std::to_string(MCULAB_PROTOCOL_MAX_OPS) +
                    " operators per case");
        } else {
          listener_.OnOpSample(*m);
        }
      } else {
        bad_payload(m.error());
      }
      break;
    case MemoryReport::kType:
      if (auto m = DecodeMemory(ev.payload)) {
        if (open_case_ < 0 || m->case_index != open_case_) {
          Fatal(RunnerMisbehaved(), "a memory report of case " + std::to_string(m->case_index) +
                                        " arrived outside that case" + Where());
        } else if (++memory_reports_in_case_ > kMaxMemoryReportsPerCase) {
          Fatal(RunOutcome::kWorkloadFailed, "the runner sent more than " +
                                                 std::to_string(kMaxMemoryReportsPerCase) +
                                                 " memory reports (MEMORY) for one case" + Where());
        } else {
          listener_.OnMemory(*m);
        }
      } else {
        bad_payload(m.error());
      }
      break;
    default:
      spdlog::debug("{}: ignoring {}", cfg_.log_prefix, ev.Describe());
      break;
  }
}

void Session::OnHello(const FrameEvent& ev) {
  if (phase_ != Phase::kAwaitHello) {
    Fatal(RunnerMisbehaved(), "the runner said HELLO again" + Where() + " (it restarted)");
    return;
  }
  auto hello = DecodeHello(ev.payload);
  if (!hello) {
    Fatal(RunnerMisbehaved(), "malformed HELLO from the runner: " + hello.error().message);
    return;
  }
  std::uint32_t mask = 0;
  for (const auto& requested : cfg_.events) {
    const std::string e = Lower(requested);
    if (e == "cycles" || e == "timer" || e == Lower(hello->timer_unit)) continue;
    auto it = std::find_if(hello->counters.begin(), hello->counters.end(),
                           [&](const std::string& c) { return Lower(c) == e; });
    if (it == hello->counters.end() || it - hello->counters.begin() >= 32) {
      for (const auto& unit : hello->units) {
        const bool in_unit = std::any_of(unit.events.begin(), unit.events.end(),
                                         [&](const std::string& ev) { return Lower(ev) == e; });
        if (in_unit && unit.external) {
          Fatal(RunOutcome::kWorkloadFailed,
                "\"" + requested + "\" is counted by the board backend (" + unit.name +
                    "), which this agent does not support yet");
          return;
        }
      }
      Fatal(RunOutcome::kWorkloadFailed, "the runner on this board cannot count \"" + requested +
                                             "\" (it counts: " + JoinNames(hello->counters) + ")");
      return;
    }
    mask |= 1u << (it - hello->counters.begin());
  }
  const int selected = std::popcount(mask);
  if (selected > hello->max_counters) {
    Fatal(RunOutcome::kWorkloadFailed,
          std::to_string(selected) +
              " counters were asked for at once but the runner reads at "
              "most " +
              std::to_string(hello->max_counters) + ": split them into passes");
    return;
  }
  std::vector<std::string> names;
  std::vector<int> per_unit(hello->units.size(), 0);
  for (std::size_t i = 0; i < hello->counters.size() && i < 32; ++i) {
    if (!(mask & (1u << i))) continue;
    names.push_back(hello->counters[i]);
    const int u = hello->CounterIndexUnit(i);
    if (u >= 0 && static_cast<std::size_t>(u) < per_unit.size()) ++per_unit[u];
  }
  for (std::size_t u = 0; u < per_unit.size(); ++u) {
    if (per_unit[u] > hello->units[u].max_simultaneous) {
      Fatal(RunOutcome::kWorkloadFailed,
            std::to_string(per_unit[u]) + " events of " + hello->units[u].name +
                " were asked for at once but it counts at most " +
                std::to_string(hello->units[u].max_simultaneous) + ": split them into passes");
      return;
    }
  }
  counters_per_sample_ = names.size();
  const std::uint32_t placed = runner_.provenance().workload_addr;
  if (placed != 0 && hello->workload_addr != 0 && placed != hello->workload_addr) {
    Fatal(RunnerMisbehaved(), "the runner reads its workload at " + Hex32(hello->workload_addr) +
                                  " but the board put it at " + Hex32(placed) +
                                  " (wrong firmware or workload_addr?)");
    return;
  }
  if (hello->workload_max != 0 && cfg_.workload_len > hello->workload_max) {
    Fatal(RunOutcome::kWorkloadFailed, "the workload is " + std::to_string(cfg_.workload_len) +
                                           " bytes but this runner holds at most " +
                                           std::to_string(hello->workload_max));
    return;
  }
  result_.stats.to_hello = SinceStart();
  listener_.OnStarted(*hello, names);
  Configure c;
  c.iterations = cfg_.iterations;
  c.warmup = cfg_.warmup;
  c.workload_len = cfg_.workload_len;
  c.counter_mask = mask;
  c.flags = (cfg_.profile_ops ? MCULAB_CONFIGURE_OP_PROFILE : 0u) |
            (cfg_.report_memory ? MCULAB_CONFIGURE_MEMORY : 0u);
  Bytes out = ToWire(c);
  Bytes run = ToWire(RunMsg{});
  out.insert(out.end(), run.begin(), run.end());
  if (auto s = runner_.Write(out); !s) {
    Fatal(RunOutcome::kInfraFailed, "could not send CONFIGURE and RUN: " + s.error().message);
    return;
  }
  phase_ = Phase::kRunning;
}

void Session::OnCaseStart(const CaseStart& m) {
  if (open_case_ >= 0) {
    Fatal(RunnerMisbehaved(), "the end of " + CaseName(static_cast<std::uint16_t>(open_case_)) +
                                  " was lost (CASE_START of case " + std::to_string(m.case_index) +
                                  " came first)");
    return;
  }
  if (m.case_index != next_case_) {
    Fatal(RunnerMisbehaved(), "expected the start of " + CaseName(next_case_) +
                                  ", the runner started case " + std::to_string(m.case_index) +
                                  ": frames were lost");
    return;
  }
  if (m.case_index >= cfg_.cases.size()) {
    Fatal(RunnerMisbehaved(), "the runner started case " + std::to_string(m.case_index) +
                                  " but the workload has " + std::to_string(cfg_.cases.size()) +
                                  " cases");
    return;
  }
  open_case_ = m.case_index;
  next_iteration_ = 0;
  op_samples_in_case_ = 0;
  memory_reports_in_case_ = 0;
}

void Session::OnSample(const SampleMsg& m) {
  if (open_case_ < 0 || m.case_index != open_case_) {
    Fatal(RunnerMisbehaved(), "a sample of case " + std::to_string(m.case_index) +
                                  " arrived outside that case" + Where() + ": frames were lost");
    return;
  }
  if (m.iteration != next_iteration_) {
    Fatal(RunnerMisbehaved(), "lost samples in " + CaseName(m.case_index) +
                                  ": expected iteration " + std::to_string(next_iteration_) +
                                  ", got " + std::to_string(m.iteration) +
                                  " (the link dropped data; not storing a hole)");
    return;
  }
  if (m.counters.size() != counters_per_sample_) {
    Fatal(RunnerMisbehaved(), "a sample of " + CaseName(m.case_index) + " carries " +
                                  std::to_string(m.counters.size()) + " counters, expected " +
                                  std::to_string(counters_per_sample_));
    return;
  }
  listener_.OnSample(m);
  ++next_iteration_;
  ++result_.stats.samples;
}

void Session::OnCaseEnd(const CaseEnd& m) {
  if (open_case_ < 0 || m.case_index != open_case_) {
    Fatal(RunnerMisbehaved(), "the end of case " + std::to_string(m.case_index) + " arrived" +
                                  Where() + ": frames were lost");
    return;
  }
  if (next_iteration_ != cfg_.iterations) {
    Fatal(RunnerMisbehaved(), CaseName(m.case_index) + " ended after " +
                                  std::to_string(next_iteration_) + " of " +
                                  std::to_string(cfg_.iterations) + " samples: samples were lost");
    return;
  }
  const auto& c = cfg_.cases[m.case_index];
  CaseResult r;
  r.case_index = m.case_index;
  r.case_id = c.id;
  r.checksum = m.checksum;
  r.overhead = m.overhead;
  r.counter_overhead = m.counter_overhead;
  r.samples = next_iteration_;
  // A custom runner's output comes from the user's runtime: the agent has no reference for it.
  // A model job's reference was computed once, before the run.
  auto expected = cfg_.model_checksum           ? Result<std::uint32_t>(*cfg_.model_checksum)
                  : cfg_.op == MCULAB_OP_CUSTOM ? Result<std::uint32_t>(0u)
                                                : ReferenceChecksum(cfg_.op, c.params, cfg_.seed);
  if (cfg_.op == MCULAB_OP_CUSTOM && !cfg_.model_checksum) {
    r.verified = false;
  } else if (!expected) {
    Fail(RunOutcome::kWorkloadFailed, "cannot compute the host reference for " +
                                          CaseName(m.case_index) + ": " + expected.error().message);
  } else {
    r.expected = *expected;
    r.checksum_ok = r.expected == r.checksum;
    if (!r.checksum_ok) {
      ++mismatches_;
      Fail(RunOutcome::kWorkloadFailed, "checksum mismatch in " + CaseName(m.case_index) +
                                            ": the runner reported " + Hex32(r.checksum) +
                                            ", the host reference is " + Hex32(r.expected));
    }
  }
  listener_.OnCaseEnd(r);
  open_case_ = -1;
  ++next_case_;
  ++result_.stats.cases_done;
}

void Session::OnError(const ErrorMsg& m) {
  listener_.OnError(m);
  if (aborting_ && m.code == MCULAB_ERR_ABORTED) return;
  std::string where = m.case_index == MCULAB_NO_CASE ? "" : " in " + CaseName(m.case_index);
  Fail(IsInfraError(m.code) ? RunnerMisbehaved() : RunOutcome::kWorkloadFailed,
       std::string("runner error ") + m.code_name() + where + ": " + m.text);
}

void Session::OnDone(const Done& m) {
  result_.stats.to_done = SinceStart();
  listener_.OnDone(m);
  phase_ = Phase::kDone;
  if (aborting_) return;
  if (m.status != 0) {
    Fail(RunOutcome::kWorkloadFailed,
         std::string("the runner stopped (") + mculab_error_name(m.status) + ") after " +
             std::to_string(m.cases_run) + " of " + std::to_string(cfg_.cases.size()) + " cases");
  } else if (result_.stats.cases_done != cfg_.cases.size()) {
    Fail(RunnerMisbehaved(), Whose() + " said DONE" + Where());
  }
}

}  // namespace

const char* RunOutcomeName(RunOutcome o) {
  switch (o) {
    case RunOutcome::kSucceeded:
      return "succeeded";
    case RunOutcome::kWorkloadFailed:
      return "workload failed";
    case RunOutcome::kInfraFailed:
      return "infrastructure failed";
    case RunOutcome::kCancelled:
      return "cancelled";
    case RunOutcome::kTimedOut:
      return "timed out";
  }
  return "?";
}

SessionResult RunSession(RunnerProcess& runner, Clock& clock, const SessionConfig& config,
                         SessionListener& listener, const CancelToken& cancel) {
  return Session(runner, clock, config, listener, cancel).Run();
}

}  // namespace mculab::agent
