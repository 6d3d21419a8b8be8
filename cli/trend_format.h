// `mculab trend`: a case's series over time as a table (its JSON document, the one GET
// /api/v1/series serves, is proto/json/documents.h SeriesDocument). Pure: tested without a
// network.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "lab.pb.h"

namespace mculab::cli {

// The header (which case, how many jobs, the unit), the change points (each with the two jobs
// and the commands that compare them), then one row per job: its median with the 95% interval,
// the runner (marked where its hash or version changed) and the change point it starts.
std::string RenderTrend(const mculab::v1::Series& series);

}  // namespace mculab::cli
