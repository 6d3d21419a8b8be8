#include "server/wire/documents.h"

#include "proto/json/documents.h"
#include "proto/json/export_csv.h"
#include "server/wire/convert.h"

namespace mculab::server::wire {

nlohmann::ordered_json JobDocument(const JobResults& results) {
  mculab::v1::Results reply;
  ToProto(results, &reply);
  return ResultsDocument(reply);
}

std::string JobCsv(const JobResults& results, bool ops_layout) {
  mculab::v1::Results reply;
  ToProto(results, &reply);
  return ops_layout ? ExportCsv(reply) : ExportFullCsv(reply);
}

nlohmann::ordered_json JobListDocument(const JobPage& page, const JobQuery& query) {
  mculab::v1::ListJobsReply reply;
  ToProto(page, query, &reply);
  return mculab::JobListDocument(reply);
}

nlohmann::ordered_json ListedJobDocument(const JobRow& row) {
  mculab::v1::Job job;
  ToProto(row, &job);
  return mculab::JobDocument(job);
}

nlohmann::ordered_json TrendDocument(const Trend& trend) {
  mculab::v1::Series reply;
  ToProto(trend, &reply);
  return SeriesDocument(reply);
}

nlohmann::ordered_json ComparisonDocument(const Comparison& comparison) {
  mculab::v1::Comparison reply;
  ToProto(comparison, &reply);
  return mculab::ComparisonDocument(reply);
}

nlohmann::ordered_json BoardDocument(const BoardView& board) {
  mculab::v1::Board reply;
  ToProto(board, &reply);
  return mculab::BoardDocument(reply);
}

}  // namespace mculab::server::wire
