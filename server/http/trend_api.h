// GET /api/v1/series (docs/http-api.md): its query parameters and its JSON.
// Thread-safety: pure functions.
#pragma once

#include "server/http/json_views.h"
#include "server/http/params.h"
#include "server/service/trend.h"

namespace mculab::server::http {

// kind, op, params ("1,16,32,..."), case, runner, user, label, tag ("key=value", several
// separated by commas), limit, window, min_step. kInvalidArgument naming the parameter.
Result<TrendRequest> ParseTrendRequest(const QueryParams& q);

// The series document is wire::TrendDocument (server/wire/documents.h), as the CLI prints it.

// GET /api/v1/changes: the history's "changed" filter. The job list of GET /api/v1/jobs (total,
// offset 0, limit = total, jobs) whose jobs also carry their "changes", plus "scanned" and
// "truncated".
Json ChangedJobsJson(const ChangedJobs& changed, const HostBoards& host);

}  // namespace mculab::server::http
