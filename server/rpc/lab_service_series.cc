// LabService::GetSeries and Compare: the trend view and the comparison of jobs over gRPC (the
// replies' translation is in convert.h); Follow, ListFollows, Unfollow and ReportGate: the alerts
// (server/service/alerts.h).
#include "server/rpc/lab_service.h"
#include "server/rpc/status.h"
#include "server/wire/convert.h"

namespace mculab::server::rpc {

using wire::FromProto;
using wire::ToProto;
namespace {

namespace v1 = mculab::v1;

TrendRequest FromProto(const v1::GetSeriesRequest& m) {
  TrendRequest r;
  SeriesQuery& q = r.series;
  q.kind = m.kind();
  q.op = m.op();
  if (m.has_params()) q.params = std::vector<std::int32_t>(m.params().begin(), m.params().end());
  if (m.has_case_id()) q.case_id = m.case_id();
  q.runner = m.runner();
  q.model = m.model();
  q.user = m.user();
  q.label_contains = m.label();
  for (const auto& [k, v] : m.tags()) q.tags[k] = v;
  if (m.limit() != 0) q.limit = m.limit();
  if (m.window() != 0) r.detector.window = m.window();
  if (m.min_step() > 0) r.detector.min_relative_step = m.min_step();
  return r;
}

void ToProto(const FollowView& v, v1::FollowInfo* out) {
  out->set_id(v.id);
  out->set_user(v.user);
  out->set_description(v.description);
  out->set_created_ms(v.created_ms);
  out->set_notified_to(static_cast<std::uint64_t>(v.notified_to));
}

// Without an alerts service: the caller is checked as the service would, then told.
grpc::Status NoAlerts(const Caller& caller, Role least) {
  if (Status s = RequireRole(caller, least, "alerts"); !s.ok()) return ToGrpcStatus(s);
  return ToGrpcStatus(MakeError(ErrorCode::kUnavailable, "this server has no alerts service"));
}

}  // namespace

grpc::Status LabService::Follow(grpc::ServerContext* context, const v1::FollowRequest* request,
                                v1::FollowInfo* reply) {
  const Caller caller = CallerOf(*context);
  if (alerts_ == nullptr) return NoAlerts(caller, Role::kViewer);
  FollowSpec spec;
  if (request->has_series()) spec.series = FromProto(request->series()).series;
  spec.label = request->label();
  spec.branch = request->branch();
  spec.kind = request->kind();
  auto view = alerts_->Follow(caller, std::move(spec));
  if (!view.ok()) return ToGrpcStatus(view.error());
  ToProto(*view, reply);
  return grpc::Status::OK;
}

grpc::Status LabService::ListFollows(grpc::ServerContext* context, const v1::ListFollowsRequest*,
                                     v1::ListFollowsReply* reply) {
  const Caller caller = CallerOf(*context);
  if (alerts_ == nullptr) return NoAlerts(caller, Role::kViewer);
  auto follows = alerts_->ListFollows(caller);
  if (!follows.ok()) return ToGrpcStatus(follows.error());
  for (const FollowView& v : *follows) ToProto(v, reply->add_follows());
  reply->set_webhooks(alerts_->webhooks());
  return grpc::Status::OK;
}

grpc::Status LabService::Unfollow(grpc::ServerContext* context, const v1::UnfollowRequest* request,
                                  v1::UnfollowReply*) {
  const Caller caller = CallerOf(*context);
  if (alerts_ == nullptr) return NoAlerts(caller, Role::kViewer);
  return ToGrpcStatus(alerts_->Unfollow(caller, request->id()));
}

grpc::Status LabService::ReportGate(grpc::ServerContext* context,
                                    const v1::ReportGateRequest* request,
                                    v1::ReportGateReply* reply) {
  const Caller caller = CallerOf(*context);
  if (alerts_ == nullptr) return NoAlerts(caller, Role::kMember);
  GateReport report;
  report.job = static_cast<JobId>(request->job());
  report.baseline = static_cast<JobId>(request->baseline());
  report.summary = request->summary();
  auto posted = alerts_->ReportGate(caller, std::move(report));
  if (!posted.ok()) return ToGrpcStatus(posted.error());
  reply->set_posted(*posted);
  return grpc::Status::OK;
}

grpc::Status LabService::GetSeries(grpc::ServerContext* context,
                                   const v1::GetSeriesRequest* request, v1::Series* reply) {
  auto trend = queries_.GetTrend(CallerOf(*context), FromProto(*request));
  if (!trend.ok()) return ToGrpcStatus(trend.error());
  ToProto(*trend, reply);
  return grpc::Status::OK;
}

grpc::Status LabService::Compare(grpc::ServerContext* context, const v1::CompareRequest* request,
                                 v1::Comparison* reply) {
  std::vector<JobId> ids(request->ids().begin(), request->ids().end());
  auto comparison = queries_.Compare(CallerOf(*context), ids, request->max_cv_pct());
  if (!comparison.ok()) return ToGrpcStatus(comparison.error());
  ToProto(*comparison, reply);
  return grpc::Status::OK;
}

}  // namespace mculab::server::rpc
