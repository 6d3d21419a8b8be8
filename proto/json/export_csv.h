// The CSV exports of a job's results, written once for `mculab export` and the page's "Download
// CSV" (GET /api/v1/jobs/{id}/export.csv), so the two files are the same bytes.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "lab.pb.h"

namespace mculab {

// The unit a result is exported in and the factor from the stored unit (ns → us).
struct ExportUnit {
  std::string unit;
  double divide_by = 1.0;
};
ExportUnit ExportUnitFor(const std::string& timer_unit);

// The operator-benchmark layout (`export --format ops-csv`, DESIGN.md section 1): "id,<unit>"
// then "id,median" per case.
std::string ExportCsv(const mculab::v1::Results& results);
// The full table (`export --csv`, the default; the page's download): id, the op's parameters, n,
// min, median, mean, p90, p99, stddev, cv, stability, overhead, the median of each counted event,
// and the checksum state, one row per case; every figure's column names its unit ("median_us",
// "cv_percent"). A case that never ran has empty figures and checksum "not run".
std::string ExportFullCsv(const mculab::v1::Results& results);

}  // namespace mculab
