// Pure formatting for the mculab CLI: tables, the progress bar, the operator-benchmark CSV export.
// No network here, so every output format is unit-tested.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/op_catalog.h"
#include "lab.pb.h"
#include "proto/json/export_csv.h"

namespace mculab::cli {

// A plain text table: columns padded to their widest cell, numbers right-aligned.
std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// "[##########..........] 31/50" (width = number of bar characters).
std::string ProgressBar(unsigned done, unsigned total, int width = 30);

// Shortest decimal text for a statistic: integers without a fraction, others with up to 3
// significant decimals ("1234", "1234.5", "0.012").
std::string FormatNumber(double v);

// The label shown for a measured kind: "EMULATED", "HOST (native)" or "silicon".
std::string MeasuredLabel(const std::string& kind);

// A case that never ran (its job queued, cancelled, timed out or refused before it): no
// statistics, and no checksum to call ok or MISMATCH.
inline bool CaseRan(const mculab::v1::CaseStats& c) { return c.n() > 0; }

// `mculab ops describe OP`: the op's parameters in the runner's order, whether each is required,
// its default, its limit and the CSV header synonyms it accepts.
std::string RenderOpDescription(const OpInfo& op);

// The board a job ran or runs on, else the board it asked for (--board), else "-".
std::string JobBoard(const mculab::v1::Job& job);
// What a job measured: its op, or "model kws.tflite" for a model job.
std::string JobWorkload(const mculab::v1::Job& job);
// `mculab jobs`' progress column: for a queued job "#2 in queue" or, waiting on someone's
// reservation, "waits for alice (until 18:00Z)"; "-" before any iteration was stored, "62%
// (31/50)" while measuring, "100%" when every iteration was stored.
std::string ProgressCell(const mculab::v1::Job& job);
// `mculab show`'s progress line while a job is on a board: cases done of total and measured
// iterations ("progress: 1 of 3 cases, 31/60 iterations [###...]"); empty otherwise.
std::string ProgressLine(const mculab::v1::Job& job);
// Why a queued job waits: its queue position, the reservation it waits on (board, holder,
// lease end, note) and the estimated start relative to now_ms ("queue position 2; waiting for
// board an547-0, reserved by alice until 2026-12-01 18:00:00 UTC; estimated start in about 5m").
std::string WaitText(const mculab::v1::QueueWait& wait, std::int64_t now_ms);

// Human-readable results: header lines (state, board, provenance) and the per-case table.
// now_ms: the time estimates are relative to (< 0: the system clock).
std::string RenderResults(const mculab::v1::Results& results, std::int64_t now_ms = -1);
std::string RenderJobs(const mculab::v1::ListJobsReply& jobs);
// The jobs table's kernel set: what the runner reported (`ran`), else what was asked for.
std::string KernelsText(const mculab::v1::Job& job, const std::string& ran);
std::string RenderBoards(const mculab::v1::ListBoardsReply& boards);

// `--tag KEY=VALUE`: the key and value, or an error message saying what is wrong.
struct ParsedTag {
  std::string key, value, error;  // error empty when the tag is good
};
ParsedTag ParseTag(const std::string& text);
// "cpu=cortex-m55,npu=ethos-u55-128" ("" for none).
std::string FormatTags(const google::protobuf::Map<std::string, std::string>& tags);

// Results as the JSON document GET /api/v1/jobs/{id} serves (proto/json/documents.h), with raw
// samples when present, indented.
std::string ResultsJson(const mculab::v1::Results& results);
// A page of the job history as the document GET /api/v1/jobs serves (proto/json/documents.h),
// indented.
std::string JobListJson(const mculab::v1::ListJobsReply& jobs);

}  // namespace mculab::cli
