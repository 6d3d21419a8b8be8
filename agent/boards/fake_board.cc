#include "agent/boards/fake_board.h"

#include <signal.h>

#include <algorithm>
#include <deque>

#include "common/frame_stream.h"
#include "common/reference.h"
#include "common/runner_messages.h"
#include "common/sha256.h"
#include "mculab/ops.h"
#include "mculab/workload.h"

namespace mculab::agent {
namespace {

struct FaultName {
  FakeFault fault;
  const char* name;
};
constexpr FaultName kFaultNames[] = {
    {FakeFault::kNone, "none"},
    {FakeFault::kCrash, "crash"},
    {FakeFault::kGarbage, "garbage"},
    {FakeFault::kBadCrc, "bad_crc"},
    {FakeFault::kLoseSample, "lose_sample"},
    {FakeFault::kRunnerError, "runner_error"},
    {FakeFault::kWrongChecksum, "wrong_checksum"},
    {FakeFault::kHang, "hang"},
    {FakeFault::kNoHello, "no_hello"},
    {FakeFault::kIgnoreAbort, "ignore_abort"},
    {FakeFault::kFloodOps, "flood_ops"},
};

// Flips one bit inside an encoded frame (never the delimiter) so that its CRC no longer matches.
Bytes Corrupt(Bytes frame) {
  const std::size_t i = frame.size() / 2;
  frame[i] ^= frame[i] == 0x01 ? 0x02 : 0x01;
  return frame;
}

class FakeRunnerProcess final : public RunnerProcess {
 public:
  FakeRunnerProcess(const FakeOptions& options, Clock& clock, std::vector<std::uint8_t> workload,
                    std::shared_ptr<FakeRunLog> log, std::vector<std::string> emulated,
                    std::string custom_sha256)
      : o_(options),
        clock_(clock),
        workload_(std::move(workload)),
        log_(std::move(log)),
        emulated_(std::move(emulated)),
        custom_(!custom_sha256.empty()) {
    prov_.firmware_sha256 =
        custom_ ? custom_sha256 : Sha256Hex(std::string("mculab fake runner 1.0.0"));
    prov_.toolchain = "none (in-process fake runner)";
    prov_.note = "fake board: a simulated runner, the values are synthetic";
    prov_.emulated = o_.board_emulates;
    prov_.icount_shift = o_.icount_shift;
    if (o_.fault != FakeFault::kNoHello) {
      Hello h;
      h.runner_major = 1;
      h.emulated = o_.hello_emulated;
      h.clock_hz = 32'000'000;
      h.timer_unit = "cycles";
      h.max_counters = o_.max_counters;
      h.workload_max = 1 << 20;
      h.arena_bytes = 4 << 20;
      h.port = "fake";
      h.cpu = o_.cpu;
      if (custom_) {
        h.custom_workload = true;
        h.runtime = "fake-custom";
      } else {
        // As the generic runner of an M55 build: the kernel set from the workload's flags.
        const bool reference =
            workload_.size() >= MCULAB_WORKLOAD_HEADER_LEN &&
            (mculab_get_u32(workload_.data() + 20) & MCULAB_WORKLOAD_REFERENCE_KERNELS) != 0;
        h.runtime = reference ? "builtin" : "builtin-helium";
      }
      h.counters = o_.counters;
      Append(ToWire(h));
    }
  }

  Result<std::size_t> Read(std::span<std::uint8_t> buf,
                           std::chrono::milliseconds timeout) override {
    if (killed_) return MakeError(ErrorCode::kUnavailable, "end of stream (killed)");
    while (out_.empty()) {
      if (crashed_ || finished_) return MakeError(ErrorCode::kUnavailable, "end of stream");
      if (hung_ || !running_) {
        clock_.SleepFor(timeout);
        return std::size_t{0};
      }
      Produce();
    }
    const std::size_t n = std::min(buf.size(), out_.size());
    std::copy_n(out_.begin(), n, buf.begin());
    out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(n));
    return n;
  }

  // The emulated events asked for, one region per measured iteration.
  Result<RegionCounts> EmulatedCounts() override {
    if (emulated_.empty()) return RunnerProcess::EmulatedCounts();
    RegionCounts out = counts_;
    out.columns = emulated_;
    out.ended = true;
    return out;
  }

  Status Write(std::span<const std::uint8_t> bytes) override {
    if (killed_ || crashed_ || finished_) return MakeError(ErrorCode::kUnavailable, "link closed");
    in_.Feed(bytes);
    while (auto ev = in_.Next()) {
      if (!ev->ok()) continue;
      {
        std::lock_guard lock(log_->mu);
        log_->frames_received.push_back(ev->type);
      }
      switch (ev->type) {
        case Configure::kType:
          if (auto c = DecodeConfigure(ev->payload)) {
            config_ = *c;
            configured_ = true;
          }
          break;
        case RunMsg::kType:
          StartRun();
          break;
        case AbortMsg::kType:
          if (o_.fault == FakeFault::kHang || o_.fault == FakeFault::kIgnoreAbort) break;
          Append(ToWire(ErrorMsg{MCULAB_ERR_ABORTED, MCULAB_NO_CASE, "aborted by the agent"}));
          Finish(MCULAB_ERR_ABORTED);
          break;
        default:
          break;
      }
    }
    return {};
  }

  void Kill() override {
    killed_ = true;
    std::lock_guard lock(log_->mu);
    log_->killed = true;
  }

  Result<ExitStatus> Wait(std::chrono::milliseconds timeout) override {
    if (killed_) return ExitStatus{false, 0, SIGKILL};
    if (crashed_) return ExitStatus{false, 0, SIGSEGV};
    if (finished_) return ExitStatus{};
    clock_.SleepFor(timeout);
    return MakeError(ErrorCode::kDeadlineExceeded, "fake runner still running");
  }

  const RunProvenance& provenance() const override { return prov_; }

 private:
  enum class Step { kCaseStart, kSamples, kCaseEnd };

  void Append(const Bytes& b) { out_.insert(out_.end(), b.begin(), b.end()); }

  void Finish(std::uint16_t status) {
    Append(ToWire(Done{cases_run_, status}));
    finished_ = true;
    running_ = false;
  }

  void StartRun() {
    if (!configured_) {
      Append(ToWire(ErrorMsg{MCULAB_ERR_BAD_STATE, MCULAB_NO_CASE, "RUN before CONFIGURE"}));
      Finish(MCULAB_ERR_BAD_STATE);
      return;
    }
    auto st = mculab_workload_parse(workload_.data(), workload_.size(), &wl_);
    if (st == MCULAB_WORKLOAD_OK && custom_ != (wl_.op == MCULAB_OP_CUSTOM)) {
      Append(ToWire(ErrorMsg{MCULAB_ERR_UNKNOWN_OP, MCULAB_NO_CASE,
                             custom_ ? "this custom runner takes a custom (blob) workload"
                                     : "the generic runner does not run custom workloads"}));
      Finish(MCULAB_ERR_UNKNOWN_OP);
      return;
    }
    if (st == MCULAB_WORKLOAD_OK && custom_) {
      std::lock_guard lock(log_->mu);
      log_->blob.assign(wl_.blob, wl_.blob + wl_.blob_len);
    }
    if (st != MCULAB_WORKLOAD_OK) {
      Append(ToWire(ErrorMsg{MCULAB_ERR_BAD_WORKLOAD, MCULAB_NO_CASE,
                             std::string("workload: ") + mculab_workload_status_name(st)}));
      Finish(MCULAB_ERR_BAD_WORKLOAD);
      return;
    }
    running_ = true;
  }

  bool AtFaultCase() const { return case_ == o_.fault_case; }

  // Appends the next frames of the run.
  void Produce() {
    if (case_ >= wl_.num_cases) {
      Finish(0);
      return;
    }
    const std::uint32_t half = config_.iterations / 2;
    switch (step_) {
      case Step::kCaseStart: {
        if (o_.fault == FakeFault::kGarbage) {
          static const char kNoise[] = "\r\nboot: noise\r\n";
          Append(Bytes(kNoise, kNoise + sizeof(kNoise)));  // sizeof includes the 0x00
        }
        if (o_.fault == FakeFault::kBadCrc && AtFaultCase()) {
          Append(Corrupt(ToWire(LogMsg{1, "this frame arrives corrupted"})));
        }
        if (o_.fault == FakeFault::kRunnerError && AtFaultCase()) {
          Append(ToWire(
              ErrorMsg{MCULAB_ERR_BAD_PARAMS, case_,
                       "case " + std::to_string(case_) + ": kernel larger than the padded input"}));
          Finish(MCULAB_ERR_BAD_PARAMS);
          return;
        }
        mculab_workload_case(&wl_, case_, &case_id_, params_);
        Append(ToWire(CaseStart{case_, case_id_}));
        step_ = Step::kSamples;
        iter_ = 0;
        return;
      }
      case Step::kSamples: {
        if (iter_ >= config_.iterations) {
          step_ = Step::kCaseEnd;
          return;
        }
        if (AtFaultCase() && iter_ == half) {
          if (o_.fault == FakeFault::kCrash) {
            crashed_ = true;
            return;
          }
          if (o_.fault == FakeFault::kHang) {
            hung_ = true;
            return;
          }
        }
        if (o_.sample_delay.count() > 0) clock_.SleepFor(o_.sample_delay);
        SampleMsg s;
        s.case_index = case_;
        s.iteration = iter_;
        s.timer = FakeBoard::TimerValue(case_, iter_);
        for (std::uint32_t c = 0; c < 32; ++c) {
          if (config_.counter_mask & (1u << c))
            s.counters.push_back(FakeBoard::CounterValue(c, iter_));
        }
        Bytes wire = ToWire(s);
        if (o_.fault == FakeFault::kLoseSample && AtFaultCase() && iter_ == half) {
          wire = Corrupt(std::move(wire));
        }
        Append(wire);
        if (!emulated_.empty()) {
          CountedRegion r{case_, iter_, {}};
          for (const auto& e : emulated_) {
            const auto& all = o_.emulated_events;
            const auto k =
                static_cast<std::uint32_t>(std::find(all.begin(), all.end(), e) - all.begin());
            r.values.push_back(FakeBoard::EmulatedValue(k, case_, iter_));
          }
          counts_.iterations.push_back(std::move(r));
        }
        ++iter_;
        return;
      }
      case Step::kCaseEnd: {
        if (o_.fault == FakeFault::kFloodOps && AtFaultCase() && !flooded_) {
          flooded_ = true;
          for (std::uint16_t i = 0; i < 5000; ++i) {
            OpSample op;
            op.case_index = case_;
            op.op_index = i;
            op.count = 1;
            op.type = "FLOOD";
            op.name = "op" + std::to_string(i);
            Append(ToWire(op));
          }
          return;
        }
        // A custom runner digests its own output: here the blob's CRC-32.
        auto expected =
            custom_ ? Result<std::uint32_t>(mculab_crc32(0, wl_.blob, wl_.blob_len))
                    : ReferenceChecksum(
                          wl_.op, std::span<const std::int32_t>(params_, wl_.num_params), wl_.seed);
        if (!expected) {
          Append(ToWire(ErrorMsg{MCULAB_ERR_BAD_PARAMS, case_, expected.error().message}));
          Finish(MCULAB_ERR_BAD_PARAMS);
          return;
        }
        std::uint32_t checksum = *expected;
        if (o_.fault == FakeFault::kWrongChecksum && AtFaultCase()) checksum ^= 0x5a5a5a5au;
        CaseEnd end;
        end.case_index = case_;
        end.checksum = checksum;
        end.overhead = FakeBoard::kOverhead;
        for (std::uint32_t c = 0; c < 32; ++c) {
          if (config_.counter_mask & (1u << c)) end.counter_overhead.push_back(1);
        }
        Append(ToWire(end));
        ++cases_run_;
        ++case_;
        step_ = Step::kCaseStart;
        return;
      }
    }
  }

  const FakeOptions o_;
  Clock& clock_;
  std::vector<std::uint8_t> workload_;
  std::shared_ptr<FakeRunLog> log_;
  std::vector<std::string> emulated_;  // RunSpec::emulated_events
  RegionCounts counts_;                // the iterations counted so far
  const bool custom_;  // a job's own runner (RunSpec::firmware): custom workload, blob CRC
  RunProvenance prov_;
  FrameStream in_{FrameSender::kAgent};
  std::deque<std::uint8_t> out_;
  Configure config_;
  bool configured_ = false;
  bool running_ = false;
  bool finished_ = false;
  bool crashed_ = false;
  bool hung_ = false;
  bool flooded_ = false;
  std::atomic<bool> killed_{false};
  mculab_workload wl_{};
  Step step_ = Step::kCaseStart;
  std::uint16_t case_ = 0;
  std::uint16_t cases_run_ = 0;
  std::uint32_t iter_ = 0;
  std::int64_t case_id_ = 0;
  std::int32_t params_[MCULAB_MAX_PARAMS] = {};
};

}  // namespace

const char* FakeFaultName(FakeFault f) {
  for (const auto& n : kFaultNames)
    if (n.fault == f) return n.name;
  return "?";
}

Result<FakeFault> ParseFakeFault(const std::string& name) {
  for (const auto& n : kFaultNames)
    if (name == n.name) return n.fault;
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown fault \"" + name + "\" (known: " + FakeFaultNames() + ")");
}

std::string FakeFaultNames() {
  std::string s;
  for (const auto& n : kFaultNames) s += (s.empty() ? "" : ", ") + std::string(n.name);
  return s;
}

std::uint64_t FakeBoard::TimerValue(std::uint16_t case_index, std::uint32_t iteration) {
  return 1000 + 100ull * case_index + iteration % 5;
}

std::uint32_t FakeBoard::CounterValue(std::uint32_t counter, std::uint32_t iteration) {
  return 10'000 * (counter + 1) + iteration;
}

std::uint64_t FakeBoard::EmulatedValue(std::uint32_t event, std::uint16_t case_index,
                                       std::uint32_t iteration) {
  return 500'000 + 1000ull * event + 10ull * case_index + iteration;
}

FakeBoard::FakeBoard(BoardInfo info, FakeOptions options, Clock& clock)
    : info_(std::move(info)), options_(std::move(options)), clock_(clock) {
  if (!options_.emulated_events.empty()) {
    info_.counter_units.push_back(CounterUnitInfo{"fake-emulator", options_.emulated_max,
                                                  options_.emulated_events, true, true});
  }
}

Result<std::unique_ptr<RunnerProcess>> FakeBoard::Start(const RunSpec& spec) {
  auto log = std::make_shared<FakeRunLog>();
  {
    std::lock_guard lock(mu_);
    last_run_ = log;
  }
  std::string custom_sha;
  if (!spec.firmware.empty()) {
    // The fake does not execute the file; it only stands for it (its hash is the provenance).
    auto sha = Sha256File(spec.firmware);
    if (!sha) return sha.error();
    custom_sha = *sha;
    std::lock_guard lock(log->mu);
    log->firmware = spec.firmware;
  }
  return std::unique_ptr<RunnerProcess>(new FakeRunnerProcess(options_, clock_, spec.workload,
                                                              std::move(log), spec.emulated_events,
                                                              std::move(custom_sha)));
}

std::shared_ptr<FakeRunLog> FakeBoard::last_run() const {
  std::lock_guard lock(mu_);
  return last_run_;
}

}  // namespace mculab::agent
