#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands/commands.h"
#include "cli/custom_submit.h"
#include "cli/format.h"
#include "cli/model_submit.h"
#include "cli/profile_format.h"
#include "common/csv_cases.h"
#include "common/lists.h"
#include "common/op_catalog.h"
#include "common/tflite_model.h"

namespace mculab::cli {

int CmdSubmit(Client& c, const SubmitOptions& o) {
  if (o.kind.empty() && o.board.empty()) throw UsageError{"give --kind KIND or --board NAME"};
  std::optional<PreparedGate> gate;
  if (!o.gate.baseline.empty()) {
    if (!o.wait) throw UsageError{"--baseline gates the finished job: add --wait"};
    auto p = PrepareGate(o.gate);
    if (!p.ok()) throw UsageError{p.error().message};
    gate = std::move(*p);
  } else if (!o.gate.reports.empty() || o.gate.max_regression != "0" ||
             !o.gate.max_improvement.empty()) {
    throw UsageError{
        "--report, --max-regression and --max-improvement belong to a gate: add --baseline "
        "JOB|label:TEXT|branch:NAME"};
  }
  v1::SubmitJobRequest req;
  // The code it measures: the flags, else the CI's variables.
  const CodeRefs ci = CodeRefsFromCi(Environment());
  req.set_commit(!o.commit.empty() ? o.commit : ci.commit);
  req.set_branch(!o.branch.empty() ? o.branch : ci.branch);
  req.set_url(!o.url.empty() ? o.url : ci.url);
  for (const std::string& t : o.tags) {
    const cli::ParsedTag tag = cli::ParseTag(t);
    if (!tag.error.empty()) throw UsageError{tag.error};
    (*req.mutable_tags())[tag.key] = tag.value;
  }
  if (!o.input.empty() && o.model.empty())
    throw UsageError{"--input is the input of a model: give --model FILE.tflite too"};
  if (!o.model.empty()) {
    // A .tflite model on the runner's own interpreter: the model (and input) go up as one blob.
    if (!o.firmware.empty() || !o.blob.empty() || (!o.op.empty() && o.op != kModelOp))
      throw UsageError{
          "--model runs the model on the lab's own runner; drop --op, --firmware "
          "and --blob"};
    if (!o.cases.empty()) throw UsageError{"--model runs one case; drop --cases"};
    auto blob = cli::ReadModelBlob(o.model, o.input);
    if (!blob.ok()) throw UsageError{blob.error().message};
    const std::string name = std::filesystem::path(o.model).filename().string();
    req.set_blob_artifact(Upload(c, name, std::string(blob->begin(), blob->end())).sha256());
    req.set_model_name(name);
    req.set_op(kModelOp);
    req.add_cases()->set_id(0);
  } else if (!o.firmware.empty()) {
    // Bring your own runtime: the runner (and blob) go up as artifacts, the job names their hashes.
    if (!o.op.empty() && o.op != "custom")
      throw UsageError{"--firmware runs your runner's own workload; drop --op " + o.op};
    if (!o.kernels.empty())
      throw UsageError{
          "--kernels chooses the lab's own kernels (--op and --model jobs); your "
          "runner (--firmware) runs its runtime's kernels, so drop --kernels " +
          o.kernels};
    if (Status st = cli::CheckFirmwareFile(o.firmware); !st.ok())
      throw UsageError{st.error().message};
    if (!o.cases.empty()) {
      const std::string csv = ReadFile(o.cases, kMaxCsvBytes);
      auto ids = ParseCaseIdsCsv(csv, o.cases);
      if (!ids.ok()) throw UsageError{ids.error().message};
      for (int64_t id : *ids) req.add_cases()->set_id(id);
      req.set_cases_artifact(
          Upload(c, std::filesystem::path(o.cases).filename().string(), csv).sha256());
    }
    req.set_firmware_artifact(UploadFile(c, o.firmware).sha256());
    if (!o.blob.empty()) req.set_blob_artifact(UploadFile(c, o.blob).sha256());
    req.set_op("custom");
  } else {
    if (!o.blob.empty())
      throw UsageError{"--blob needs --firmware (your runner, which reads the blob)"};
    if (o.op.empty())
      throw UsageError{"give --op OP (built-in ops: " + OpNames() + ") or --firmware runner.elf"};
    if (o.cases.empty()) throw UsageError{"--op needs --cases CSV (the parameter sweep)"};
    const OpInfo* op = FindOp(o.op);
    if (!op) throw UsageError{"unknown op '" + o.op + "'; built-in ops: " + OpNames()};
    const std::string csv = ReadFile(o.cases, kMaxCsvBytes);
    auto table = ParseCasesCsv(csv, *op, o.cases);
    if (!table.ok()) throw UsageError{table.error().message};
    for (const auto& w : table->warnings)
      std::cerr << "mculab: warning: " << o.cases << ": " << w << "\n";
    const std::string name = std::filesystem::path(o.cases).filename().string();
    v1::ArtifactRef ref = Upload(c, name, csv);
    req.set_op(o.op);
    req.set_cases_artifact(ref.sha256());
    for (const auto& row : table->rows) {
      auto* cs = req.add_cases();
      cs->set_id(row.id);
      for (int32_t p : row.params) cs->add_params(p);
    }
  }
  req.set_kind(o.kind);
  req.set_board(o.board);
  req.set_iterations(o.iterations);
  req.set_warmup(o.warmup);
  req.set_label(o.label);
  req.set_timeout_s(o.timeout_s);
  req.set_priority(o.priority);
  req.set_kernels(o.kernels);
  req.set_reruns(o.reruns);
  if (!o.gate.max_cv.empty()) {
    auto cv = ParsePercent(o.gate.max_cv, "--max-cv");
    if (!cv.ok()) throw UsageError{cv.error().message};
    req.set_max_cv_pct(*cv);
  }
  for (std::string& e : SplitList(o.events)) req.add_events(std::move(e));
  v1::SubmitJobReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().SubmitJob(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "submit");
  // Position 0: the job went to a board at once; otherwise why it waits (WaitText).
  std::string queue =
      rep.wait().position() > 0
          ? WaitText(rep.wait(), std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count())
          : std::string("on a board now");
  if (!o.priority.empty() && o.priority != "normal") queue += "; priority " + o.priority;
  if (!o.wait) {
    if (o.json) {
      std::cout << nlohmann::json{{"id", rep.id()},
                                  {"state", rep.state()},
                                  {"queue_position", rep.queue_position()},
                                  {"estimated_start_ms", rep.estimated_start_ms()},
                                  {"waiting_for_board", rep.wait().board()},
                                  {"holder", rep.wait().holder()},
                                  {"lease_until_ms", rep.wait().lease_until_ms()}}
                       .dump()
                << "\n";
    } else {
      std::cout << rep.id() << "\n";
      std::cerr << "job " << rep.id() << " " << rep.state() << " (" << queue
                << "); follow it with: mculab show " << rep.id() << "\n";
    }
    return 0;
  }
  if (!o.json) std::cerr << "job " << rep.id() << " " << rep.state() << " (" << queue << ")\n";
  const std::string final_state = Watch(c, rep.id(), o.json);
  v1::Results res = GetResults(c, rep.id(), o.json && !gate);
  if (gate) {
    // The gate's document (with the comparison) is the one JSON printed; as text, the results
    // come first.
    GateOptions printed = o.gate;
    printed.json = o.json;
    if (final_state != "succeeded") return GateFailedJob(c, res.job(), *gate, printed);
    if (!o.json) std::cout << RenderResults(res) << RenderEventStats(res) << RenderMemory(res);
    return RunGate(c, res.job(), *gate, printed);
  }
  if (o.json)
    std::cout << ResultsJson(res) << "\n";
  else  // what `mculab show` prints: statistics, events and memory
    std::cout << RenderResults(res) << RenderEventStats(res) << RenderMemory(res);
  return final_state == "succeeded" ? 0 : 1;
}

int CmdJobs(Client& c, const v1::ListJobsRequest& req, bool json) {
  v1::ListJobsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListJobs(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "listing jobs");
  if (json) {
    std::cout << JobListJson(rep) << "\n";
  } else if (rep.jobs_size() == 0) {
    std::cout << "no jobs\n";
  } else {
    std::cout << RenderJobs(rep);
  }
  return 0;
}

int CmdShow(Client& c, uint64_t id, bool json, bool ops) {
  v1::Results res = GetResults(c, id, json);
  if (ops) {
    std::cout << RenderOps(res);
    return 0;
  }
  if (json)
    std::cout << ResultsJson(res) << "\n";
  else
    std::cout << RenderResults(res) << RenderEventStats(res) << RenderMemory(res);
  return 0;
}

int CmdExport(Client& c, uint64_t id, const std::string& out_path, const std::string& format) {
  if (format != "csv" && format != "ops-csv" && format != "json")
    throw UsageError{"--format must be csv, ops-csv or json, got '" + format + "'"};
  v1::Results res = GetResults(c, id, format == "json");
  if (res.job().state() != "succeeded")
    throw UsageError{"job " + std::to_string(id) + " is " + res.job().state() +
                     "; only a succeeded job has results to export"};
  const std::string csv = format == "json"      ? ResultsJson(res) + "\n"
                          : format == "ops-csv" ? ExportCsv(res)
                                                : ExportFullCsv(res);
  if (out_path.empty() || out_path == "-") {
    std::cout << csv;
  } else {
    std::ofstream out(out_path, std::ios::binary);
    if (!out) throw UsageError{"cannot write " + out_path};
    out << csv;
    std::cerr << "wrote " << out_path << " (" << res.cases_size()
              << (res.cases_size() == 1 ? " case)\n" : " cases)\n");
  }
  return 0;
}

int CmdCancel(Client& c, uint64_t id) {
  v1::CancelJobRequest req;
  req.set_id(id);
  v1::Job job;
  auto ctx = c.Context();
  grpc::Status s = c.stub().CancelJob(ctx.get(), req, &job);
  if (!s.ok()) c.Fail(s, "cancel job " + std::to_string(id));
  std::cout << "job " << job.id() << " " << job.state() << "\n";
  return 0;
}

}  // namespace mculab::cli
