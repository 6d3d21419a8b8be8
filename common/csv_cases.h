// Case files (DESIGN.md §1), read by one CSV dialect (ReadCsvLines) for both kinds:
//
// Operator-benchmark sweeps (ParseCasesCsv): a header naming the parameters, then one case per
// line, first column the case id. Columns are matched to the op's parameters by name or synonym
// (case-insensitive), reordered into the op's order; extra columns are ignored with a warning;
// optional parameters missing from the header take their default. A missing or non-numeric value
// is an error naming the line and the column.
//
// A custom runner's case ids (ParseCaseIdsCsv): a header, then one case per line whose first
// column is the id; the other columns are the runner's business and are not read.
//
// Thread-safety: pure functions.
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

// One non-blank, non-comment line of a CSV file, split into fields.
struct CsvLine {
  std::size_t number = 0;  // 1-based, counting every line of the file
  std::vector<std::string> fields;
};

// The dialect: lines end in "\n" (a "\r" before it is dropped); a UTF-8 byte-order mark at the
// start is skipped; blank lines and lines whose first non-blank character is '#' are comments and
// skipped. Fields are separated by ','. A field may be double-quoted: then it keeps its commas and
// blanks, and "" inside is one quote; a quoted field cannot span lines (an error). Unquoted fields
// are trimmed of spaces and tabs. Text over kMaxCsvBytes is an error. `source` names the input in
// messages (a file name).
Result<std::vector<CsvLine>> ReadCsvLines(std::string_view text, std::string_view source);

// `source` names the input in messages (a file name).
Result<CaseTable> ParseCasesCsv(std::string_view text, const OpInfo& op,
                                std::string_view source = "cases");

// The ids in file order; errors name the line. No case lines is an error; ids must be unique.
Result<std::vector<std::int64_t>> ParseCaseIdsCsv(std::string_view text,
                                                  std::string_view source = "cases");

}  // namespace mculab
