// The JSON of docs/http-api.md, built from the service's results. Field order follows the
// document. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "db/store.h"
#include "server/service/job_watch.h"
#include "server/service/queries.h"

namespace mculab::server::http {

using Json = nlohmann::ordered_json;

Json JobJson(const db::JobRow& row);
Json JobPageJson(const db::JobPage& page, std::uint64_t offset, std::uint32_t limit);
Json JobDetailJson(const JobDetail& detail);
Json CaseSamplesJson(const CaseSamples& samples);
Json ComparisonJson(const Comparison& comparison);
Json BoardJson(const Board& board, std::uint32_t queue_length);
Json JobEventJson(const JobEvent& event);
Json ErrorJson(const std::string& message);

// Compact text; invalid UTF-8 (firmware strings) is replaced, never an exception.
std::string Dump(const Json& json);

}  // namespace mculab::server::http
