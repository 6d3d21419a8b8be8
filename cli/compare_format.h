// `mculab compare`: jobs compared case by case as a table (its JSON document, the one GET
// /api/v1/compare serves, is proto/json/documents.h ComparisonDocument). Pure: tested without a
// network.
#pragma once

#include <string>

#include "lab.pb.h"

namespace mculab::cli {

// The jobs (id, board, how they measured, what they ran, kernel set, label), why no ratio or no
// verdict stands when one does not, then one row per case: each job's median and, after the
// first, its ratio to the first with the 95% interval and the verdict ("slower", "faster", "no
// change", "unclear", "unstable"), "missing" where a job lacks the case; each job's cv beside its
// median ("exact" when emulated, "unstable" above the limit), then the outliers and warm-up found.
std::string RenderComparison(const mculab::v1::Comparison& comparison);

// "0.4%", "12.3% unstable (> 10%)" or "exact".
std::string VariationText(const mculab::v1::Variation& variation);
// "2 outliers of 20 (2 high, 0 low; iterations 0, 7), kept; warm-up: the first 1 iteration above
// the rest", "" when there are neither.
std::string OutlierText(const mculab::v1::Variation& variation);

// "N=1,in_features=8" (the comparison's parameter names with the case's values).
std::string CaseParamsText(const mculab::v1::Comparison& comparison,
                           const mculab::v1::ComparedCase& compared_case);

// "+12.3%" for a ratio of 1.123.
std::string RatioPercent(double ratio);

}  // namespace mculab::cli
