// LabService::GetSeries and Compare: the trend view and the comparison of jobs over gRPC (the
// replies' translation is in convert.h).
#include "server/rpc/convert.h"
#include "server/rpc/lab_service.h"
#include "server/rpc/status.h"

namespace mculab::server::rpc {
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

}  // namespace

grpc::Status LabService::GetSeries(grpc::ServerContext* context,
                                   const v1::GetSeriesRequest* request, v1::Series* reply) {
  auto trend = lab_.GetTrend(CallerOf(*context), FromProto(*request));
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
