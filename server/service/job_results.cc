#include "server/service/job_results.h"

#include <algorithm>
#include <map>
#include <utility>

#include "common/op_catalog.h"
#include "common/tflite_model.h"
#include "server/service/lab.h"
#include "server/service/run_statistics.h"

namespace mculab::server {
namespace {

// Before its run starts, a job measures as the boards it can run on: emulated when a board of its
// kind is, host when the board it runs on, asked for or, without one, a board of its kind is.
void MeasuredBeforeTheRun(const std::vector<BoardView>& boards, JobResults& out) {
  const Job& j = out.job;
  const std::string& named = !j.assigned_board.empty() ? j.assigned_board : j.board;
  bool host = false;
  for (const BoardView& v : boards) {
    const Board& b = v.board;
    if (b.kind == j.kind && b.emulated) out.emulated = true;
    if (IsHostBoard(b) && (named.empty() ? b.kind == j.kind : b.name == named)) host = true;
  }
  out.measured = std::string(MeasuredOfBoard(out.emulated, host));
}

}  // namespace

Result<JobResults> ReadJobResults(Lab& lab, Store& store, const Caller& caller, JobId id,
                                  bool include_samples) {
  auto job = lab.jobs().GetJob(caller, id);
  if (!job.ok()) return job.error();
  JobResults out;
  out.job = std::move(*job);
  const Job& j = out.job;
  if (const OpInfo* op = FindOp(j.op)) {
    for (const OpParam& p : op->params) out.param_names.push_back(p.name);
  }
  if (j.last_run_id != 0) {
    auto run = store.GetRun(j.last_run_id);
    if (run.ok()) {
      out.run = std::move(*run);
    } else if (run.error().code != ErrorCode::kNotFound) {
      return run.error();
    }
  }
  const bool started = out.run && out.run->started;
  if (started) {
    out.emulated = out.run->provenance.emulated;
    out.measured = std::string(MeasuredOfRun(out.run->provenance));
  } else {
    auto boards = lab.boards().ListBoards(caller);
    if (!boards.ok()) return boards.error();
    MeasuredBeforeTheRun(*boards, out);
  }

  auto cases = store.GetJobCases(id);
  if (!cases.ok()) return cases.error();
  out.cases.reserve(cases->size());
  for (std::size_t i = 0; i < cases->size(); ++i) {
    CaseOutcome c;
    c.index = static_cast<std::uint32_t>(i);
    c.case_id = (*cases)[i].id;
    c.params = std::move((*cases)[i].params);
    out.cases.push_back(std::move(c));
  }
  if (!j.firmware_artifact.empty()) {
    auto artifact = store.GetArtifact(j.firmware_artifact);
    if (!artifact.ok()) return artifact.error();
    if (*artifact) out.runner_name = (*artifact)->name;
  }
  auto stats = store.GetCaseStats(id);
  if (!stats.ok()) return stats.error();
  std::vector<bool> timed(out.cases.size(), false);
  for (CaseStats& s : *stats) {
    if (s.case_index >= out.cases.size()) continue;
    if (s.metric_index == 0) timed[s.case_index] = true;
    out.cases[s.case_index].stats.push_back(std::move(s));
  }
  // Cases without stored statistics (the run has not succeeded): the timer's computed from the
  // raw samples of the cases whose every iteration is stored, so they show as they finish.
  if (started && std::find(timed.begin(), timed.end(), false) != timed.end()) {
    auto computed = ComputeRunStatistics(store, id, out.run->id, out.run->provenance, 1, 0);
    if (!computed.ok()) return computed.error();
    for (CaseStats& s : computed->stats) {
      if (s.metric_index != 0 || s.n < j.iterations || s.case_index >= out.cases.size() ||
          timed[s.case_index]) {
        continue;
      }
      timed[s.case_index] = true;
      out.cases[s.case_index].stats.push_back(std::move(s));
    }
  }
  for (CaseOutcome& c : out.cases) {
    std::sort(c.stats.begin(), c.stats.end(), [](const CaseStats& a, const CaseStats& b) {
      return a.metric_index < b.metric_index;
    });
  }

  auto events = store.GetJobEvents(id);
  if (!events.ok()) return events.error();
  out.events = std::move(events->events);
  if (!out.run) return out;
  const RunId run = out.run->id;
  auto results = store.GetCaseResults(run);
  if (!results.ok()) return results.error();
  for (CaseResult& r : *results) {
    if (r.case_index < out.cases.size()) out.cases[r.case_index].result = r;
  }
  auto passes = store.GetRunPasses(run);
  if (!passes.ok()) return passes.error();
  out.passes = std::move(*passes);
  auto ops = store.GetOpProfiles(run);
  if (!ops.ok()) return ops.error();
  out.ops = std::move(*ops);
  // A runner names operators in 31 characters and types in 15; the lab knows the model.
  if (j.op == kModelOp && !out.ops.empty()) {
    if (auto layers = lab.uploads().ModelLayers(j.blob_artifact); layers.ok()) {
      for (OpProfileRow& row : out.ops) {
        if (row.op_index >= (*layers)->size()) continue;
        const ModelLayerName& layer = (**layers)[row.op_index];
        row.type = layer.type;
        row.name = layer.name;
      }
    }
  }
  auto memory = store.GetMemory(run);
  if (!memory.ok()) return memory.error();
  out.memory = std::move(*memory);
  if (include_samples) {
    auto samples = store.GetSamples(run);
    if (!samples.ok()) return samples.error();
    out.samples = GroupSamples(out.run->provenance, *samples);
  }
  return out;
}

}  // namespace mculab::server
