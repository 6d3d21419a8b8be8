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
// change", "unclear"), "missing" where a job lacks the case.
std::string RenderComparison(const mculab::v1::Comparison& comparison);

// "N=1,in_features=8" (the comparison's parameter names with the case's values).
std::string CaseParamsText(const mculab::v1::Comparison& comparison,
                           const mculab::v1::ComparedCase& compared_case);

// "+12.3%" for a ratio of 1.123.
std::string RatioPercent(double ratio);

}  // namespace mculab::cli
