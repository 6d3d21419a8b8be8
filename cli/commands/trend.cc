#include <iostream>

#include "cli/commands/commands.h"
#include "cli/format.h"
#include "cli/trend_format.h"
#include "common/lists.h"
#include "common/op_catalog.h"
#include "common/tflite_model.h"
#include "proto/json/documents.h"

namespace mculab::cli {

int CmdTrend(Client& c, const TrendOptions& o) {
  v1::GetSeriesRequest req;
  req.set_kind(o.kind);
  req.set_op(o.op);
  if (o.job != 0) {
    if (!o.has_case) throw UsageError{"--job needs --case: the id of one of its cases"};
    v1::Results res = GetResults(c, o.job, false);
    if (req.kind().empty()) req.set_kind(res.job().kind());
    if (req.op().empty()) req.set_op(res.job().op());
    // A model job's series is its model's: never every model job on the board kind.
    if (o.model.empty() && res.job().op() == kModelOp) {
      if (res.job().model_name().empty()) {
        throw UsageError{"job " + std::to_string(o.job) +
                         " was stored before the lab kept model names: give --kind, --op model, "
                         "--case 0 and --model FILE.tflite"};
      }
      req.set_model(res.job().model_name());
    }
    // Likewise a custom runner's: never every custom job on the board kind.
    if (o.runner.empty() && res.job().op() == "custom") {
      if (res.runner_name().empty()) {
        throw UsageError{"job " + std::to_string(o.job) +
                         "'s runner upload is gone: give --runner NAME (the runner's file name as "
                         "uploaded)"};
      }
      req.set_runner(res.runner_name());
    }
    const v1::CaseStats* found = nullptr;
    for (const auto& cs : res.cases())
      if (cs.case_id() == o.case_id) found = &cs;
    if (!found) {
      throw UsageError{"job " + std::to_string(o.job) + " has no case with id " +
                       std::to_string(o.case_id)};
    }
    if (FindOp(req.op()) != nullptr) {
      req.set_has_params(true);
      for (int32_t p : found->params()) req.add_params(p);
    } else {
      req.set_has_case_id(true);
      req.set_case_id(o.case_id);
    }
  } else {
    if (o.kind.empty() || o.op.empty())
      throw UsageError{"give --kind and --op with --params (or --case), or --job ID --case ID"};
    if (!o.params.empty()) {
      req.set_has_params(true);
      auto params = ParseIntList(o.params);
      if (!params)
        throw UsageError{"--params must be integers separated by commas, got '" + o.params + "'"};
      for (std::int32_t p : *params) req.add_params(p);
    }
    if (o.has_case) {
      req.set_has_case_id(true);
      req.set_case_id(o.case_id);
    }
  }
  if (!o.runner.empty()) req.set_runner(o.runner);
  if (!o.model.empty()) req.set_model(o.model);
  req.set_user(o.user);
  req.set_label(o.label);
  for (const std::string& t : o.tags) {
    ParsedTag p = ParseTag(t);
    if (!p.error.empty()) throw UsageError{p.error};
    (*req.mutable_tags())[p.key] = p.value;
  }
  req.set_limit(o.limit);
  req.set_window(o.window);
  req.set_min_step(o.min_step);
  v1::Series rep;
  auto ctx = c.Context(120);
  grpc::Status s = c.stub().GetSeries(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "series");
  if (o.json)
    std::cout << SeriesDocument(rep).dump(2) << "\n";
  else
    std::cout << RenderTrend(rep);
  return 0;
}

}  // namespace mculab::cli
