// CopyStore: moves a lab from one store to another (`mculab-server admin migrate-store`), e.g. from
// its SQLite file to PostgreSQL, whichever backend each side is.
//
// Both stores are migrated to this build's latest schema first. Then every table of the lab's
// schema (read from the source's catalogue, so a table added later is copied too) is copied in a
// dependency order (accounts, artifacts, boards, jobs, runs, samples, results, audit rows ...), in
// primary-key order, in batches of about `batch_rows` rows, each batch one transaction on the
// destination, with every id as it was (job, run, audit row, follow ids): into PostgreSQL by
// binary COPY, into SQLite by prepared multi-row INSERTs. A table without a primary key (samples)
// is copied in whole groups of its grouping column (a run's samples all in one batch). Tables a
// database derives from others are not copied but rebuilt: SQLite's job counts and label search
// (its triggers fill them as jobs are inserted), PostgreSQL's samples counter. Last, PostgreSQL's
// identity sequences are set past the largest id copied, so a new row never takes a copied row's
// id.
//
// Resuming: the destination must be empty of lab data, or hold what an interrupted copy from the
// same source left: in each table a prefix of the source's rows in key order (its last row equal
// to the source's row of that key, as many rows as the source has up to it), and nothing in the
// tables after the first incomplete one. A copy then goes on from each table's last key; anything
// else is refused (kFailedPrecondition) before a row is written. The source is read in one
// transaction (a consistent snapshot); the server should not run on it meanwhile.
//
// At the end the rows of every table are counted on both sides; a difference is reported in
// StoreCopyReport::status, naming the table. Messages never show a password (RedactStoreUrl).
// Thread-safety: a plain function; the stores must not be written by anyone else during the copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace mculab::db {

// Where a table's copy stands, after each batch of a table that takes more than one.
struct CopyProgress {
  std::string table;
  std::uint64_t copied = 0;  // rows in the destination so far
  std::uint64_t total = 0;   // rows in the source
};

struct StoreCopyOptions {
  std::filesystem::path home;       // what a relative sqlite:PATH is relative to
  std::size_t batch_rows = 20'000;  // rows per destination transaction (about; see above)
  std::function<void(const CopyProgress&)> progress;  // optional
  // Test hook: end the copy (kCancelled) after this many batches were committed, as a kill would
  // between two transactions; 0: never.
  std::size_t stop_after_batches = 0;
};

struct TableCount {
  std::string table;
  std::uint64_t source = 0;
  std::uint64_t destination = 0;
  std::uint64_t copied = 0;  // by this run (a resumed copy's earlier rows not counted)
};

struct StoreCopyReport {
  std::vector<TableCount> tables;  // in the order they were copied
  Status status;                   // the count check: an error names the first table that differs
};

// Copies the lab in store `from` to store `to` (store URLs as db/lab_store.h's). An error before
// the report (a bad URL, a database that can't be reached or is newer than this build, a
// destination holding other data, a failed batch) leaves the destination as the batches committed
// so far, which a rerun completes.
Result<StoreCopyReport> CopyStore(const std::string& from, const std::string& to,
                                  const StoreCopyOptions& options);

}  // namespace mculab::db
