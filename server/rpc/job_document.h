// A job's results as the JSON document both the CLI's `--json` and GET /api/v1/jobs/{id} print:
// the gRPC reply's conversion (convert.h) and the one writer (proto/json/results_json.h). The
// HTTP layer calls this and never sees a proto message. Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "server/service/results.h"

namespace mculab::server::rpc {

nlohmann::ordered_json JobDocument(const JobResults& results);

}  // namespace mculab::server::rpc
