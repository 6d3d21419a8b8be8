// A benchmark series as the store finds it (server/service/store.h): one case of the same op on the
// same board kind, job after job (the trend view, docs/http-api.md GET /api/v1/series).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/domain/job.h"
#include "server/domain/run.h"

namespace mculab::server {

inline constexpr std::uint32_t kMaxSeriesJobs = 1000;

// Which case: the same op and parameters (an operator benchmark), or the same op and case id
// (a custom runner, op "custom", whose cases have no parameters); at least one of the two.
// Every other set field narrows the series.
struct SeriesQuery {
  std::string kind;                                 // the board kind; required
  std::string op;                                   // required
  std::optional<std::vector<std::int32_t>> params;  // in the op's catalog order
  std::optional<std::int64_t> case_id;              // the sweep's case id
  std::string runner;                       // the custom runner's uploaded file name; empty: any
  std::string model;                        // op "model": the model's file name; required
  std::string user;                         // exact; empty: any
  std::string label_contains;               // case-insensitive (ASCII) substring
  std::map<std::string, std::string> tags;  // the job asked for each of these
  std::uint32_t limit = 200;                // the newest jobs that match, up to this
};

// A job of the series with its statistics of the case (metric 0, the timer). Only jobs a user
// submitted (health checks are the server's) whose case has stored statistics (the run
// succeeded).
struct SeriesRow {
  Job job;
  std::uint32_t case_index = 0;
  std::int64_t case_id = 0;
  std::vector<std::int32_t> params;
  CaseStats stats;
  std::string runner_name;  // the uploaded runner's file name; empty for the generic runner
};

}  // namespace mculab::server
