#include "agent/run/spool.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>

#include "agent/io/temp_dir.h"
#include "agent/run/spool_record.h"
#include "common/crash_point.h"

namespace mculab::agent {
namespace {

constexpr std::string_view kRecordSuffix = ".rec";

// Parses "<prefix><number>.rec".
bool NumberedName(const std::string& name, std::string_view prefix, std::uint64_t& out) {
  const std::size_t tail = kRecordSuffix.size();
  if (name.size() <= prefix.size() + tail || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - tail, tail, kRecordSuffix) != 0) {
    return false;
  }
  const char* b = name.data() + prefix.size();
  const char* e = name.data() + name.size() - tail;
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e;
}

std::string NumberedFile(std::string_view prefix, std::uint64_t n) {
  return std::string(prefix) + std::to_string(n) + std::string(kRecordSuffix);
}

// What an encoded record holds, in words, from its header's kind.
const char* KindOf(std::string_view record) {
  if (record.size() < kSpoolRecordHeaderBytes) return "a message";
  const auto kind = static_cast<std::uint16_t>(static_cast<std::uint8_t>(record[6]) |
                                               static_cast<std::uint8_t>(record[7]) << 8);
  switch (static_cast<SpoolRecordKind>(kind)) {
    case SpoolRecordKind::kRunStarted:
      return "the run's start (RunStarted)";
    case SpoolRecordKind::kCaseDone:
      return "a case's results (CaseDone: operator profiles and memory entries)";
    case SpoolRecordKind::kSampleBatch:
      return "a sample batch";
    case SpoolRecordKind::kRunFinished:
      return "the run's end (RunFinished)";
  }
  return "a message";
}

}  // namespace

Status CheckRecordSize(std::string_view record, std::size_t max_bytes) {
  if (record.size() <= max_bytes) return {};
  return MakeError(ErrorCode::kResourceExhausted,
                   std::string(KindOf(record)) + " is " + std::to_string(record.size()) +
                       " bytes, more than the agent sends in one message (" +
                       std::to_string(max_bytes) + " bytes)");
}

Result<std::unique_ptr<Spool>> Spool::Open(const std::filesystem::path& dir, bool sync_writes,
                                           std::size_t max_message_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir / "runs", ec);
  if (ec) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cannot create spool dir " + (dir / "runs").string() + ": " + ec.message());
  }
  std::filesystem::create_directories(dir / "free", ec);
  if (ec) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cannot create spool dir " + (dir / "free").string() + ": " + ec.message());
  }
  std::unique_ptr<Spool> spool(new Spool(dir, sync_writes, max_message_bytes));
  for (const auto& e : std::filesystem::directory_iterator(dir / "free", ec)) {
    const std::string name = e.path().filename().string();
    std::uint64_t n = 0;
    auto [p, err] = std::from_chars(name.data(), name.data() + name.size(), n);
    if (err != std::errc() || p != name.data() + name.size()) continue;
    spool->next_free_ = std::max(spool->next_free_, n + 1);
    if (spool->free_.size() < kKeptFreeFiles) {
      spool->free_.push_back(n);
    } else {
      std::filesystem::remove(e.path(), ec);
    }
  }
  return spool;
}

std::filesystem::path Spool::FreeFile(std::uint64_t n) const {
  return dir_ / "free" / std::to_string(n);
}

std::filesystem::path Spool::RunDir(std::uint64_t run_id) const {
  return dir_ / "runs" / std::to_string(run_id);
}

Status Spool::BeginRun(std::uint64_t run_id) {
  std::error_code ec;
  std::filesystem::create_directories(RunDir(run_id), ec);
  if (ec) {
    return MakeError(ErrorCode::kInternal,
                     "cannot create " + RunDir(run_id).string() + ": " + ec.message());
  }
  return {};
}

Status Spool::Put(std::uint64_t run_id, const std::string& name, std::string_view record) const {
  if (auto s = CheckRecordSize(record, max_message_bytes_); !s) return s;
  return WriteFileAtomically(RunDir(run_id) / name, record, sync_);
}

Status Spool::PutStarted(const RunStartedRecord& m) {
  return Put(m.run_id, "started.rec", EncodeSpoolRecord(m));
}

Status Spool::PutCaseDone(const CaseDoneRecord& m) {
  return Put(m.run_id, NumberedFile("case-", m.case_index), EncodeSpoolRecord(m));
}

Status Spool::PutFinished(const RunFinishedRecord& m) {
  return Put(m.run_id, "finished.rec", EncodeSpoolRecord(m));
}

Status Spool::PutBatch(const SampleBatchRecord& m) {
  const std::string name = NumberedFile("batch-", m.sequence);
  const std::string record = EncodeSpoolRecord(m);
  if (auto s = CheckRecordSize(record, max_message_bytes_); !s) return s;
  std::optional<std::uint64_t> reuse;
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      reuse = free_.back();
      free_.pop_back();
    }
  }
  if (reuse) {
    // Written as a new file would be (WriteFileAtomically truncates its temporary file): when the
    // rename fails, it is created.
    std::filesystem::path tmp = RunDir(m.run_id) / name;
    tmp += ".tmp";
    (void)::rename(FreeFile(*reuse).c_str(), tmp.c_str());
  }
  if (auto s = Put(m.run_id, name, record); !s) return s;
  CrashPoint(crash_points::kAgentAfterSpoolBatch);
  const std::uint64_t next = std::max(NextSequence(m.run_id), m.sequence + 1);
  {
    std::lock_guard lock(mu_);
    next_seq_[m.run_id] = next;
  }
  return WriteNextSequence(m.run_id, next);
}

Status Spool::WriteNextSequence(std::uint64_t run_id, std::uint64_t next) {
  const std::filesystem::path path = RunDir(run_id) / "next_seq";
  std::shared_ptr<UniqueFd> file;
  {
    std::lock_guard lock(mu_);
    if (auto it = next_seq_files_.find(run_id); it != next_seq_files_.end()) file = it->second;
  }
  if (!file) {
    file = std::make_shared<UniqueFd>(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    if (!file->valid())
      return MakeError(ErrorCode::kInternal, ErrnoMessage("open " + path.string(), errno));
    std::lock_guard lock(mu_);
    next_seq_files_.emplace(run_id, file);
  }
  // 20 digits and a newline: every value has the same length, so a rewrite covers the last one
  // whole (a shorter text written by an earlier agent is covered too).
  char text[32];
  const int n =
      std::snprintf(text, sizeof text, "%020llu\n", static_cast<unsigned long long>(next));
  if (::pwrite(file->get(), text, static_cast<std::size_t>(n), 0) != n) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("write " + path.string(), errno));
  }
  if (sync_ && ::fdatasync(file->get()) != 0) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("fdatasync " + path.string(), errno));
  }
  return {};
}

void Spool::Ack(std::uint64_t run_id, std::uint64_t sequence) {
  const std::filesystem::path path = RunDir(run_id) / NumberedFile("batch-", sequence);
  std::optional<std::uint64_t> keep;
  {
    std::lock_guard lock(mu_);
    if (free_.size() < kKeptFreeFiles) keep = next_free_++;
  }
  if (keep && ::rename(path.c_str(), FreeFile(*keep).c_str()) == 0) {
    std::lock_guard lock(mu_);
    free_.push_back(*keep);
    return;
  }
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

void Spool::Close(std::uint64_t run_id) {
  std::error_code ec;
  std::filesystem::remove_all(RunDir(run_id), ec);
  std::lock_guard lock(mu_);
  next_seq_.erase(run_id);
  next_seq_files_.erase(run_id);
}

std::vector<std::uint64_t> Spool::Runs() const {
  std::vector<std::uint64_t> runs;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "runs", ec)) {
    std::uint64_t id = 0;
    const std::string name = e.path().filename().string();
    auto [p, err] = std::from_chars(name.data(), name.data() + name.size(), id);
    if (err == std::errc() && p == name.data() + name.size()) runs.push_back(id);
  }
  std::sort(runs.begin(), runs.end());
  return runs;
}

bool Spool::Contains(std::uint64_t run_id) const {
  std::error_code ec;
  return std::filesystem::exists(RunDir(run_id), ec);
}

bool Spool::HasFinished(std::uint64_t run_id) const {
  std::error_code ec;
  return std::filesystem::exists(RunDir(run_id) / "finished.rec", ec);
}

std::vector<std::uint64_t> Spool::PendingBatches(std::uint64_t run_id) const {
  std::vector<std::uint64_t> seqs;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(RunDir(run_id), ec)) {
    std::uint64_t seq = 0;
    if (NumberedName(e.path().filename().string(), "batch-", seq)) seqs.push_back(seq);
  }
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

std::uint64_t Spool::NextSequence(std::uint64_t run_id) const {
  {
    std::lock_guard lock(mu_);
    if (auto it = next_seq_.find(run_id); it != next_seq_.end()) return it->second;
  }
  std::uint64_t next = 0;
  if (auto text = ReadFile(RunDir(run_id) / "next_seq")) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec == std::errc()) next = v;
  }
  for (auto seq : PendingBatches(run_id)) next = std::max(next, seq + 1);
  std::lock_guard lock(mu_);
  auto [it, inserted] = next_seq_.emplace(run_id, next);
  return it->second;
}

std::size_t Spool::Replay(std::uint64_t run_id, const std::function<bool(RunMessage&&)>& send,
                          std::uint64_t from_sequence) const {
  std::vector<std::pair<std::uint64_t, std::string>> cases, batches;
  bool started = false, finished = false;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(RunDir(run_id), ec)) {
    const std::string name = e.path().filename().string();
    std::uint64_t n = 0;
    if (name == "started.rec")
      started = true;
    else if (name == "finished.rec")
      finished = true;
    else if (NumberedName(name, "case-", n))
      cases.emplace_back(n, name);
    else if (NumberedName(name, "batch-", n) && n >= from_sequence)
      batches.emplace_back(n, name);
  }
  std::sort(cases.begin(), cases.end());
  std::sort(batches.begin(), batches.end());
  std::vector<std::string> order;
  if (started) order.push_back("started.rec");
  for (auto& c : cases) order.push_back(c.second);
  for (auto& b : batches) order.push_back(b.second);
  if (finished) order.push_back("finished.rec");
  std::size_t sent = 0;
  for (const auto& name : order) {
    const std::filesystem::path path = RunDir(run_id) / name;
    auto bytes = ReadFile(path);
    if (!bytes) continue;  // acked or closed meanwhile
    auto record = DecodeSpoolRecord(*bytes);
    if (!record) {
      // Sent it would be wrong, kept it would be refused again at every replay: set aside, so a
      // person can look at it, and the run's other files still go out.
      const std::filesystem::path aside = RunDir(run_id) / ("damaged-" + name);
      std::filesystem::rename(path, aside, ec);
      spdlog::error("run {}: damaged spool file {} ({}), set aside as {}", run_id, path.string(),
                    record.error().message, aside.filename().string());
      continue;
    }
    if (!send(ToRunMessage(std::move(*record)))) break;
    ++sent;
  }
  return sent;
}

}  // namespace mculab::agent
