#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/format.h"
#include "cli/trend_format.h"
#include "common/lists.h"
#include "common/op_catalog.h"
#include "common/tflite_model.h"
#include "proto/json/documents.h"

namespace mculab::cli {
namespace {

nlohmann::ordered_json FollowJson(const v1::FollowInfo& f) {
  nlohmann::ordered_json j;
  j["id"] = f.id();
  j["user"] = f.user();
  j["description"] = f.description();
  j["created_ms"] = f.created_ms();
  j["notified_to"] = f.notified_to();
  return j;
}

// The webhooks the server posts to: a follow on a server with none alerts no one.
std::uint32_t Webhooks(Client& c) {
  v1::ListFollowsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListFollows(ctx.get(), v1::ListFollowsRequest{}, &rep);
  if (!s.ok()) c.Fail(s, "follows");
  return rep.webhooks();
}

int PrintFollow(Client& c, const v1::FollowInfo& f, bool json) {
  if (json) {
    std::cout << FollowJson(f).dump(2) << "\n";
    return 0;
  }
  std::cout << "following " << f.description() << " (follow " << f.id()
            << "): a new change point is posted to the lab's webhooks\n";
  if (Webhooks(c) == 0) {
    std::cerr << "mculab: warning: this server has no webhooks ([notify] webhooks in its "
                 "config): alerts go nowhere until it has\n";
  }
  return 0;
}

}  // namespace

int CmdFollow(Client& c, const std::string& label, const std::string& branch,
              const std::string& kind, bool json) {
  if (label.empty() && branch.empty()) {
    throw UsageError{
        "give --label TEXT or --branch NAME (or follow one series: mculab trend ... --follow)"};
  }
  v1::FollowRequest req;
  req.set_label(label);
  req.set_branch(branch);
  req.set_kind(kind);
  v1::FollowInfo info;
  auto ctx = c.Context();
  grpc::Status s = c.stub().Follow(ctx.get(), req, &info);
  if (!s.ok()) c.Fail(s, "follow");
  return PrintFollow(c, info, json);
}

int CmdFollows(Client& c, bool json) {
  v1::ListFollowsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListFollows(ctx.get(), v1::ListFollowsRequest{}, &rep);
  if (!s.ok()) c.Fail(s, "follows");
  if (json) {
    nlohmann::ordered_json j;
    j["webhooks"] = rep.webhooks();
    j["follows"] = nlohmann::ordered_json::array();
    for (const auto& f : rep.follows()) j["follows"].push_back(FollowJson(f));
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : rep.follows()) {
    rows.push_back({std::to_string(f.id()), f.user(), f.description(),
                    f.notified_to() ? "job " + std::to_string(f.notified_to()) : "-"});
  }
  if (rows.empty()) {
    std::cout << "no follows (mculab trend ... --follow, mculab follow --label/--branch)\n";
  } else {
    std::cout << RenderTable({"id", "user", "follows", "posted up to"}, rows);
  }
  std::cout << rep.webhooks() << " webhook" << (rep.webhooks() == 1 ? "" : "s")
            << " configured on the server\n";
  return 0;
}

int CmdUnfollow(Client& c, uint64_t id) {
  v1::UnfollowRequest req;
  req.set_id(id);
  v1::UnfollowReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().Unfollow(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "unfollow");
  std::cout << "follow " << id << " removed\n";
  return 0;
}

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
  if (o.follow) {
    v1::FollowRequest f;
    *f.mutable_series() = req;
    v1::FollowInfo info;
    auto ctx = c.Context();
    grpc::Status s = c.stub().Follow(ctx.get(), f, &info);
    if (!s.ok()) c.Fail(s, "follow");
    return PrintFollow(c, info, o.json);
  }
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
