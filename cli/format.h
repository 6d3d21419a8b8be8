// Pure formatting for the mculab CLI: tables, the progress bar, the operator-benchmark CSV export.
// No network here, so every output format is unit-tested.
#pragma once

#include <string>
#include <vector>

#include "lab.pb.h"

namespace mculab::cli {

// A plain text table: columns padded to their widest cell, numbers right-aligned.
std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// "[##########..........] 31/50" (width = number of bar characters).
std::string ProgressBar(unsigned done, unsigned total, int width = 30);

// Shortest decimal text for a statistic: integers without a fraction, others with up to 3
// significant decimals ("1234", "1234.5", "0.012").
std::string FormatNumber(double v);

// The unit a result is exported in and the factor from the stored unit (ns → us).
struct ExportUnit {
  std::string unit;
  double divide_by = 1.0;
};
ExportUnit ExportUnitFor(const std::string& timer_unit);

// DESIGN.md §1 output: "id,<unit>" then "id,median" per case.
std::string ExportCsv(const mculab::v1::Results& results);

// Human-readable results: header lines (state, board, provenance) and the per-case table.
std::string RenderResults(const mculab::v1::Results& results);
std::string RenderJobs(const mculab::v1::ListJobsReply& jobs);
std::string RenderBoards(const mculab::v1::ListBoardsReply& boards);

// `--tag KEY=VALUE`: the key and value, or an error message saying what is wrong.
struct ParsedTag {
  std::string key, value, error;  // error empty when the tag is good
};
ParsedTag ParseTag(const std::string& text);
// "cpu=cortex-m55,npu=ethos-u55-128" ("" for none).
std::string FormatTags(const google::protobuf::Map<std::string, std::string>& tags);

// Results as JSON (with raw samples when present).
std::string ResultsJson(const mculab::v1::Results& results);

}  // namespace mculab::cli
