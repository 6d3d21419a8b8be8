// The JSON documents of lab.proto's messages that the CLI's --json and the HTTP API both print
// (docs/http-api.md), written once so the two never drift: a job's results (`mculab show --json`,
// submit --wait --json, export --format json; GET /api/v1/jobs/{id}), the job history (`mculab
// jobs --json`; GET /api/v1/jobs), a case's series over time (`mculab trend --json`;
// GET /api/v1/series) and a board (`mculab boards --json`; GET /api/v1/boards).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "lab.pb.h"

namespace mculab {

// The job's fields at the top level ("board" is the board it ran or runs on, else the one it asked
// for; "requested_board" the one it asked for), "wait" while queued, "provenance" (null before
// the run's runner said hello), "param_names", "cases" (every case in sweep order; a case that has
// not run has n = 0 and null checksum fields; "samples" per metric when the results carry raw
// samples), "events" (counter statistics per case), "passes", "ops" (per-op rows with their share
// of the case's total; the timer as pass 0 measured it) and "memory" (null when none). Figures
// that are not finite are null.
nlohmann::ordered_json ResultsDocument(const mculab::v1::Results& results);

// One job as the history lists it: the job's fields of ResultsDocument, "emulated" and
// "measured" from the job's own fields (set by ListJobs).
nlohmann::ordered_json JobDocument(const mculab::v1::Job& job);
// A page of the history: {"total" (every match), "offset", "limit", "jobs": [JobDocument...]}.
nlohmann::ordered_json JobListDocument(const mculab::v1::ListJobsReply& reply);

// The series of one case over time (`mculab trend --json`; GET /api/v1/series): "series" (the
// query as the server applied it), "unit", "detector", "jobs" (each job's median and interval,
// "measured", the runner) and "changes" (the change points).
nlohmann::ordered_json SeriesDocument(const mculab::v1::Series& series);

// Jobs compared case by case (`mculab compare --json`; GET /api/v1/compare): "jobs" (each with
// "measured", "workload" and the build's "sha256"), "ratio_refused" and "verdict_refused" (null
// when the ratios and their verdicts stand), "param_names", "cases" (per case "medians" per job
// and "ratios": null for the first job and a missing case, else the ratio to the first job with
// its bootstrap 95% interval "lo"/"hi", "significant" and "verdict": slower, faster, no change,
// unclear, or null when verdict_refused says why not), and "layers" (model jobs of one model: per
// layer its "case", "op_index", "type", "name", the timer's mean per invocation per job in
// "means" and "ratios" as for a case, "lo"/"hi" null and no verdict unless the count is exact).
nlohmann::ordered_json ComparisonDocument(const mculab::v1::Comparison& comparison);

// One board as `mculab boards --json` lists it and GET /api/v1/boards (and the board events of
// GET /api/v1/events) serve it: state apart from health, "measured" ("host" for a board tagged
// timing=host), and the reservation in force ("holder", "lease_until_ms", "note": empty and 0 when
// none).
nlohmann::ordered_json BoardDocument(const mculab::v1::Board& board);

}  // namespace mculab
