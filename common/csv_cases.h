// Operator-benchmark CSV input (DESIGN.md §1): a header naming the parameters, then one case per
// line, first column the case id. Columns are matched to the op's parameters by name or synonym
// (case-insensitive), reordered into the op's order; extra columns are ignored with a warning;
// optional parameters missing from the header take their default. A missing or non-numeric value
// is an error naming the line and the column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/op_catalog.h"
#include "common/result.h"

namespace mculab {

struct CaseRow {
  std::int64_t id = 0;
  std::vector<std::int32_t> params;  // in the op's parameter order
};

struct CaseTable {
  std::vector<std::string> param_names;  // the op's canonical names, in order
  std::vector<CaseRow> rows;
  std::vector<std::string> warnings;  // ignored columns, defaults used
};

inline constexpr size_t kMaxCsvCases = 1024;
inline constexpr size_t kMaxCsvBytes = 1 << 20;

// `source` names the input in messages (a file name).
Result<CaseTable> ParseCasesCsv(std::string_view text, const OpInfo& op,
                                std::string_view source = "cases");

}  // namespace mculab
