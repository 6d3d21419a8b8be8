#include "agent/link/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "agent/io/temp_dir.h"
#include "common/crash_point.h"

namespace mculab::agent {
namespace {

// Parses "<prefix><number>.pb".
bool NumberedName(const std::string& name, std::string_view prefix, std::uint64_t& out) {
  if (name.size() <= prefix.size() + 3 || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - 3, 3, ".pb") != 0) {
    return false;
  }
  const char* b = name.data() + prefix.size();
  const char* e = name.data() + name.size() - 3;
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e;
}

const char* KindOf(const v1::AgentMessage& m) {
  switch (m.msg_case()) {
    case v1::AgentMessage::kRunStarted:
      return "the run's start (RunStarted)";
    case v1::AgentMessage::kCaseDone:
      return "a case's results (CaseDone: operator profiles and memory entries)";
    case v1::AgentMessage::kBatch:
      return "a sample batch";
    case v1::AgentMessage::kRunFinished:
      return "the run's end (RunFinished)";
    default:
      return "a message";
  }
}

}  // namespace

Status CheckMessageSize(const v1::AgentMessage& m, std::size_t max_bytes) {
  const std::size_t size = m.ByteSizeLong();
  if (size <= max_bytes) return {};
  return MakeError(ErrorCode::kResourceExhausted,
                   std::string(KindOf(m)) + " is " + std::to_string(size) +
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
  return std::unique_ptr<Spool>(new Spool(dir, sync_writes, max_message_bytes));
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

Status Spool::Put(std::uint64_t run_id, const std::string& name, const v1::AgentMessage& m) const {
  if (auto s = CheckMessageSize(m, max_message_bytes_); !s) return s;
  std::string bytes;
  if (!m.SerializeToString(&bytes)) return MakeError(ErrorCode::kInternal, "cannot serialize");
  return WriteFileAtomically(RunDir(run_id) / name, bytes, sync_);
}

Status Spool::PutStarted(const v1::RunStarted& m) {
  v1::AgentMessage msg;
  *msg.mutable_run_started() = m;
  return Put(m.run_id(), "started.pb", msg);
}

Status Spool::PutCaseDone(const v1::CaseDone& m) {
  v1::AgentMessage msg;
  *msg.mutable_case_done() = m;
  return Put(m.run_id(), "case-" + std::to_string(m.case_index()) + ".pb", msg);
}

Status Spool::PutFinished(const v1::RunFinished& m) {
  v1::AgentMessage msg;
  *msg.mutable_run_finished() = m;
  return Put(m.run_id(), "finished.pb", msg);
}

Status Spool::PutBatch(const v1::SampleBatch& m) {
  v1::AgentMessage msg;
  *msg.mutable_batch() = m;
  return PutBatch(msg);
}

Status Spool::PutBatch(const v1::AgentMessage& msg) {
  const v1::SampleBatch& m = msg.batch();
  if (auto s = Put(m.run_id(), "batch-" + std::to_string(m.sequence()) + ".pb", msg); !s) return s;
  CrashPoint(crash_points::kAgentAfterSpoolBatch);
  const std::uint64_t next = std::max(NextSequence(m.run_id()), m.sequence() + 1);
  {
    std::lock_guard lock(mu_);
    next_seq_[m.run_id()] = next;
  }
  return WriteNextSequence(m.run_id(), next);
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
  std::error_code ec;
  std::filesystem::remove(RunDir(run_id) / ("batch-" + std::to_string(sequence) + ".pb"), ec);
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
  return std::filesystem::exists(RunDir(run_id) / "finished.pb", ec);
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

Result<std::size_t> Spool::Replay(std::uint64_t run_id,
                                  const std::function<bool(const v1::AgentMessage&)>& send,
                                  std::uint64_t from_sequence) const {
  std::vector<std::pair<std::uint64_t, std::string>> cases, batches;
  bool started = false, finished = false;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(RunDir(run_id), ec)) {
    const std::string name = e.path().filename().string();
    std::uint64_t n = 0;
    if (name == "started.pb")
      started = true;
    else if (name == "finished.pb")
      finished = true;
    else if (NumberedName(name, "case-", n))
      cases.emplace_back(n, name);
    else if (NumberedName(name, "batch-", n) && n >= from_sequence)
      batches.emplace_back(n, name);
  }
  std::sort(cases.begin(), cases.end());
  std::sort(batches.begin(), batches.end());
  std::vector<std::string> order;
  if (started) order.push_back("started.pb");
  for (auto& c : cases) order.push_back(c.second);
  for (auto& b : batches) order.push_back(b.second);
  if (finished) order.push_back("finished.pb");
  std::size_t sent = 0;
  for (const auto& name : order) {
    auto bytes = ReadFile(RunDir(run_id) / name);
    if (!bytes) continue;  // acked or closed meanwhile
    v1::AgentMessage m;
    if (!m.ParseFromString(*bytes)) {
      return MakeError(ErrorCode::kDataLoss,
                       "corrupt spool file " + (RunDir(run_id) / name).string());
    }
    if (!send(m)) break;
    ++sent;
  }
  return sent;
}

}  // namespace mculab::agent
