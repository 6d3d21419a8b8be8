// Spool: what the agent owes the server for each run, on disk, until the server confirms it.
//
//   <dir>/runs/<run_id>/started.rec        RunStartedRecord   } kept until RunClosed: replayed
//                       case-<index>.rec   CaseDoneRecord     } after every reconnect (the server
//                       finished.rec       RunFinishedRecord  } treats repeats as no-ops)
//                       batch-<seq>.rec    SampleBatchRecord: moved to free/ on its BatchAck
//                       next_seq           one past the highest sequence ever spooled
//                       damaged-<name>     a file the decoder refused, set aside (never replayed)
//   <dir>/free/<n>                         an acknowledged batch's file, kept to be written again
//
// Each .rec file holds one record in the spool's own format (agent/run/spool_record.h,
// docs/agent-spool.md), written to a temporary name and renamed, so a crash of the agent leaves
// whole files only. Files are not fsync'd by default (a kill -9 of the agent loses nothing; a
// power cut may lose the last batches): pass sync_writes for the stronger promise at the cost of a
// disk flush per batch. A spool written by an agent before this format (.pb files holding
// protobuf AgentMessages) is converted by the link when it starts (agent/link/spool_import.h);
// the spool itself neither reads nor counts such files.
//
// next_seq is kept open while the run spools and rewritten in place (a fixed-width number that
// only grows, one pwrite per batch): creating and renaming a file per batch cost the agent more
// system time than its own work on the run.
//
// An acknowledged batch's file is not deleted: it is renamed into free/ (at most kKeptFreeFiles are
// kept) and the next batch of any run is written into it (renamed to the batch's temporary name,
// truncated, written and renamed as a new file would be), so the spool does not create and delete
// a file per batch. On ext4 without a journal a new inode costs a walk over every inode deleted in
// the last ≈ 30 s (`recently_deleted`), the agent's largest kernel cost in the fleet bench
// (bench/RESULTS.md). A replay that opened a batch's file just before its ack renamed it may read
// a later batch's bytes being written there: the record's CRC refuses a torn one (logged, nothing
// set aside: the name is gone), and a whole one is a batch of this agent the server stores once.
//
// Every record is checked against a size limit before it is spooled: a message the server would
// refuse would be replayed after every reconnect and wedge the run's spool, so it is never
// written; the caller fails the run instead. The limit applies to the encoded record, whose
// fixed-width fields make it at least as large as the message on the wire for every field but a
// batch's row form (at most about 1.6 times the record), well under what the server receives.
//
// A file that fails to decode is set aside as damaged-<name> and logged; the replay goes on with
// the run's other files, so one damaged file neither stops the run's replay nor is retried forever.
//
// Thread-safety: all members may be called from any thread. Replay may race with Ack and Close
// (a file that vanishes meanwhile is skipped).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "agent/io/fd.h"
#include "agent/run/run_types.h"
#include "common/result.h"

namespace mculab::agent {

// The largest message the agent spools and sends: well under what the server receives (16 MiB).
inline constexpr std::size_t kMaxAgentMessageBytes = 4 << 20;

// kResourceExhausted, naming what the encoded spool `record` holds (from its header's kind) and its
// size, when it is larger than `max_bytes`.
Status CheckRecordSize(std::string_view record, std::size_t max_bytes = kMaxAgentMessageBytes);

class Spool {
 public:
  // How many acknowledged batch files are kept in free/ for the next batches.
  static constexpr std::size_t kKeptFreeFiles = 64;

  static Result<std::unique_ptr<Spool>> Open(const std::filesystem::path& dir,
                                             bool sync_writes = false,
                                             std::size_t max_message_bytes = kMaxAgentMessageBytes);
  const std::filesystem::path& dir() const { return dir_; }

  Status BeginRun(std::uint64_t run_id);
  Status PutStarted(const RunStartedRecord& m);
  Status PutCaseDone(const CaseDoneRecord& m);
  // Written before the batch is sent.
  Status PutBatch(const SampleBatchRecord& m);
  Status PutFinished(const RunFinishedRecord& m);

  void Ack(std::uint64_t run_id, std::uint64_t sequence);
  // The server has everything of the run: forget it.
  void Close(std::uint64_t run_id);

  // Runs with something on disk, ascending.
  std::vector<std::uint64_t> Runs() const;
  bool Contains(std::uint64_t run_id) const;
  bool HasFinished(std::uint64_t run_id) const;
  // The sequence number the run's next batch must use: 0 for a new run; across restarts one past
  // the highest ever spooled, so no number is used twice.
  std::uint64_t NextSequence(std::uint64_t run_id) const;
  // Sequence numbers of the batches still waiting for their ack, ascending.
  std::vector<std::uint64_t> PendingBatches(std::uint64_t run_id) const;

  // Calls `send` with the run's spooled messages in the order the server needs them: RunStarted,
  // CaseDone by case, batches by sequence, RunFinished. Stops early when `send` returns false.
  // Batches below `from_sequence` are left out (they went out already). A damaged file is set
  // aside and skipped. Does not hold the spool's lock while calling `send`. Returns how many
  // messages were sent.
  std::size_t Replay(std::uint64_t run_id, const std::function<bool(RunMessage&&)>& send,
                     std::uint64_t from_sequence = 0) const;

 private:
  Spool(std::filesystem::path dir, bool sync, std::size_t max_bytes)
      : dir_(std::move(dir)), sync_(sync), max_message_bytes_(max_bytes) {}
  std::filesystem::path RunDir(std::uint64_t run_id) const;
  Status Put(std::uint64_t run_id, const std::string& name, std::string_view record) const;
  Status WriteNextSequence(std::uint64_t run_id, std::uint64_t next);

  // Kept in free/ for reuse.
  std::filesystem::path FreeFile(std::uint64_t n) const;

  const std::filesystem::path dir_;
  const bool sync_;
  const std::size_t max_message_bytes_;
  mutable std::mutex mu_;
  mutable std::map<std::uint64_t, std::uint64_t> next_seq_;  // cache of next_seq files
  // The next_seq files open for writing, by run (shared: written outside the lock).
  std::map<std::uint64_t, std::shared_ptr<UniqueFd>> next_seq_files_;
  std::vector<std::uint64_t> free_;  // the files in free/
  std::uint64_t next_free_ = 0;      // the next free/ name
};

}  // namespace mculab::agent
