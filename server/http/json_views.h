// The JSON of docs/http-api.md, built from the service's results. Field order follows the
// document. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "server/service/job_watch.h"
#include "server/service/lab_feed.h"
#include "server/service/queries.h"
#include "server/service/store.h"

namespace mculab::server::http {

using Json = nlohmann::ordered_json;

// The job history, a job's results, a comparison and the boards are proto/json/documents.h's
// documents (server/wire/documents.h), as the CLI prints them.
Json CaseSamplesJson(const CaseSamples& samples);
Json JobEventJson(const JobEvent& event);
// A live-samples event of GET /api/v1/events?job=ID.
Json LiveSamplesJson(const LiveSamples& samples);
Json ErrorJson(const std::string& message);

// Compact text; invalid UTF-8 (firmware strings) is replaced, never an exception.
std::string Dump(const Json& json);

}  // namespace mculab::server::http
