// A job's results, the job history, a trend and a board as the JSON documents both the CLI's
// `--json` and the HTTP API (GET /api/v1/jobs/{id}, /api/v1/jobs, /api/v1/series, /api/v1/boards)
// print: the gRPC reply's conversion (convert.h), then the one writer (proto/json/documents.h). The
// HTTP layer calls these and never sees a proto message. Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "server/service/board_requests.h"
#include "server/service/job_requests.h"
#include "server/service/queries.h"
#include "server/service/results.h"
#include "server/service/store.h"

namespace mculab::server::wire {

nlohmann::ordered_json JobDocument(const JobResults& results);
// A job's results as `mculab export --format csv` (full: ExportFullCsv) or `--format ops-csv`
// (ExportCsv) writes them, byte for byte (proto/json/export_csv.h).
std::string JobCsv(const JobResults& results, bool ops_layout);
// The job history as `mculab jobs --json` and GET /api/v1/jobs print it (JobListDocument), and one
// of its jobs (ListedJobDocument; GET /api/v1/changes lists them too).
nlohmann::ordered_json JobListDocument(const JobPage& page, const JobQuery& query);
nlohmann::ordered_json ListedJobDocument(const JobRow& row);
// A case's series over time as `mculab trend --json` and GET /api/v1/series print it.
nlohmann::ordered_json TrendDocument(const Trend& trend);
// Jobs compared as `mculab compare --json` and GET /api/v1/compare print them.
nlohmann::ordered_json ComparisonDocument(const Comparison& comparison);
// A board as `mculab boards --json` lists it (proto/json/documents.h BoardDocument).
nlohmann::ordered_json BoardDocument(const BoardView& board);

}  // namespace mculab::server::wire
