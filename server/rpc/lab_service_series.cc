// LabService::GetSeries: the trend view over gRPC, and its translation.
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
  q.user = m.user();
  q.label_contains = m.label();
  for (const auto& [k, v] : m.tags()) q.tags[k] = v;
  if (m.limit() != 0) q.limit = m.limit();
  if (m.window() != 0) r.detector.window = m.window();
  if (m.min_step() > 0) r.detector.min_relative_step = m.min_step();
  return r;
}

void ToProto(const Trend& t, v1::Series* out) {
  v1::GetSeriesRequest* r = out->mutable_request();
  const SeriesQuery& q = t.query;
  r->set_kind(q.kind);
  r->set_op(q.op);
  r->set_has_params(q.params.has_value());
  if (q.params) r->mutable_params()->Add(q.params->begin(), q.params->end());
  r->set_has_case_id(q.case_id.has_value());
  r->set_case_id(q.case_id.value_or(0));
  r->set_runner(q.runner);
  r->set_user(q.user);
  r->set_label(q.label_contains);
  for (const auto& [k, v] : q.tags) (*r->mutable_tags())[k] = v;
  r->set_limit(q.limit);
  r->set_window(static_cast<std::uint32_t>(t.detector.window));
  r->set_min_step(t.detector.min_relative_step);
  for (const std::string& n : t.param_names) out->add_param_names(n);
  out->set_unit(t.unit);
  for (const TrendJob& j : t.jobs) {
    v1::SeriesJob* o = out->add_jobs();
    o->set_id(static_cast<std::uint64_t>(j.id));
    o->set_label(j.label);
    o->set_user(j.user);
    o->set_board(j.board);
    o->set_created_ms(j.created_ms);
    o->set_finished_ms(j.finished_ms);
    o->set_case_index(j.case_index);
    o->set_case_id(j.case_id);
    o->set_n(j.n);
    o->set_median(j.median);
    o->set_lo(j.lo);
    o->set_hi(j.hi);
    o->set_unit(j.unit);
    o->set_emulated(j.emulated);
    o->set_port(j.port);
    o->set_firmware_sha256(j.firmware_sha256);
    o->set_runner_version(j.runner_version);
    o->set_runner_name(j.runner_name);
    o->set_runner_changed(j.runner_changed);
  }
  for (const TrendChange& c : t.changes) {
    v1::SeriesChange* o = out->add_changes();
    o->set_index(static_cast<std::uint32_t>(c.index));
    o->set_before_job(static_cast<std::uint64_t>(c.before_job));
    o->set_after_job(static_cast<std::uint64_t>(c.after_job));
    o->set_before(c.before);
    o->set_after(c.after);
    o->set_ratio(c.ratio);
  }
}

}  // namespace

grpc::Status LabService::GetSeries(grpc::ServerContext* context,
                                   const v1::GetSeriesRequest* request, v1::Series* reply) {
  auto trend = lab_.GetTrend(CallerOf(*context), FromProto(*request));
  if (!trend.ok()) return ToGrpcStatus(trend.error());
  ToProto(*trend, reply);
  return grpc::Status::OK;
}

}  // namespace mculab::server::rpc
