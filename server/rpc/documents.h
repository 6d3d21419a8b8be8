// A job's results and a board as the JSON documents both the CLI's `--json` and the HTTP API
// (GET /api/v1/jobs/{id}, /api/v1/boards) print: the gRPC reply's conversion (convert.h), then the
// one writer (proto/json/documents.h). The HTTP layer calls these and never sees a proto message.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "server/service/lab.h"
#include "server/service/results.h"

namespace mculab::server::rpc {

nlohmann::ordered_json JobDocument(const JobResults& results);
// A board as `mculab boards --json` lists it (proto/json/documents.h BoardDocument).
nlohmann::ordered_json BoardDocument(const BoardView& board);

}  // namespace mculab::server::rpc
