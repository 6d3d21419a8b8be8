// A job's results (and a board) as the JSON document both the CLI's `--json` and the HTTP API
// (GET /api/v1/jobs/{id}, /api/v1/boards) print:
// the gRPC reply's conversion (convert.h) and the one writer (proto/json/results_json.h). The
// HTTP layer calls this and never sees a proto message. Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "server/service/lab.h"
#include "server/service/results.h"

namespace mculab::server::rpc {

nlohmann::ordered_json JobDocument(const JobResults& results);
// A board as `mculab boards --json` lists it (proto/json/results_json.h BoardDocument).
nlohmann::ordered_json BoardDocument(const BoardView& board);

}  // namespace mculab::server::rpc
