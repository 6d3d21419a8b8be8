// RunReporter: turns one run's runner-session events into spooled, sequenced run messages.
//
//   RunStartedRecord   once per run, at the first pass's HELLO (provenance, the run's counters)
//   SampleBatchRecord  the samples as rows (metric 0 = the timer, then the plan's counters),
//                      flushed when a batch holds BatchLimits::max_samples rows or its first row is
//                      max_age old (checked at each sample and case end); sequence numbers
//                      continue from Spool::NextSequence, so none is used twice for a run
//   CaseDoneRecord     per case and pass, with the case's op profile and memory report
//
// Every message is written to the Spool before it is handed to the RunSink. A message that cannot
// be spooled stops the run (CancelToken, CancelReason::kAgentFault): spool_error() then says why;
// a message over the spool's size limit is neither spooled nor sent, and oversized() says why (the
// job's failure).
//
// Runs pass after pass: BeginPass() before each session, EndPass() after it. A pass with emulated
// events holds its samples and case ends until EndPass() has merged the board's counts into them
// (the counts exist once the emulator has exited); other passes send as they go.
//
// Thread-safety: one reporter per run, used on the run's thread (the session's listener).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/io/clock.h"
#include "agent/run/run_plan.h"
#include "agent/run/run_types.h"
#include "agent/run/spool.h"
#include "agent/runner/cancel_token.h"
#include "agent/runner/runner_session.h"

namespace mculab::agent {

struct BatchLimits {
  std::size_t max_samples = 1024;          // sample rows per batch (>= 256 per DESIGN §6)
  std::chrono::milliseconds max_age{200};  // so progress shows while a slow case runs
};

class RunReporter final : public SessionListener {
 public:
  // `a` and `plan` must outlive the reporter.
  RunReporter(const RunAssignment& a, const AgentPlan& plan, std::string workload_sha256,
              std::uint32_t seed, Spool& spool, RunSink& sink, Clock& clock, CancelToken& cancel,
              BatchLimits limits, std::string log_prefix);

  // Appended to the provenance note (a model job's input: given or seeded).
  void set_note_extra(std::string s) { note_extra_ = std::move(s); }

  // `pass` must outlive the pass.
  void BeginPass(const AgentPass& pass, const RunProvenance& prov);
  // After the pass's session: merges the board's emulated counts into the held samples and case
  // ends and sends them. An error (counts missing or not matching the samples) fails the run.
  Status EndPass(RunnerProcess& runner, bool session_ok);
  // Spools and sends the open batch, if it has rows.
  void Flush();

  void OnStarted(const Hello& h, const std::vector<std::string>& counters) override;
  void OnSample(const SampleMsg& sample) override;
  void OnOpSample(const OpSample& op) override;
  void OnMemory(const MemoryReport& mem) override;
  void OnCaseEnd(const CaseResult& r) override;
  void OnLog(const LogMsg& log) override;
  void OnError(const ErrorMsg& e) override;
  void OnDone(const Done&) override {}

  // The run's next sequence number: how many batches it has used, across agent restarts.
  std::uint64_t batches() const { return next_seq_; }
  std::uint64_t samples() const { return samples_; }
  const std::string& spool_error() const { return spool_error_; }
  const std::string& oversized() const { return oversized_; }

 private:
  // A timer reading in the unit the run reports (RunStartedRecord::timer_unit).
  std::uint64_t Timer(std::uint64_t ticks) const;
  void AddSample(const SampleMsg& s,
                 const std::vector<std::pair<std::uint32_t, std::int64_t>>* extra);
  void SendCaseDone(CaseDoneRecord cd);
  std::uint32_t CaseIndex(std::uint16_t workload_index) const;
  bool Keep(const Status& s);

  const RunAssignment& a_;
  const AgentPlan& plan_;
  const std::string workload_sha256_;
  const std::uint32_t seed_;
  Spool& spool_;
  RunSink& sink_;
  Clock& clock_;
  CancelToken& cancel_;
  const BatchLimits limits_;
  const std::string log_prefix_;

  RunProvenance prov_;
  std::uint32_t clock_hz_ = 0;    // the runner's clock (Hello)
  bool to_instructions_ = false;  // the timer's ticks are reported as instructions (Timer)
  const AgentPass* pass_ = nullptr;
  bool started_sent_ = false;
  std::vector<std::uint32_t> runner_metrics_;  // per runner counter of this pass
  std::vector<SampleMsg> held_samples_;
  std::vector<std::pair<std::uint16_t, CaseDoneRecord>> held_cases_;  // (workload case, message)
  CaseDoneRecord pending_;   // the open case's ops and memory
  SampleBatchRecord batch_;  // the open batch
  Clock::TimePoint batch_started_{};
  std::uint64_t next_seq_;
  std::uint64_t samples_ = 0;
  std::string spool_error_;
  std::string oversized_;  // why a message was too large to send: the job's failure
  std::string note_extra_;
};

}  // namespace mculab::agent
