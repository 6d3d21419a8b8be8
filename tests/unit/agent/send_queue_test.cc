// SendQueue with a stream the test opens and closes like a gate: a server that stops reading.
#include "agent/link/send_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <set>

#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

// Writes block while the gate is closed; what got through is recorded in order.
class GatedStream final : public MessageStream {
 public:
  bool Write(const v1::AgentMessage& m) override {
    std::unique_lock lock(mu_);
    ++writers_waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_ || broken_; });
    --writers_waiting_;
    if (broken_) return false;
    written_.push_back(m);
    cv_.notify_all();
    return true;
  }
  void WritesDone() override {
    std::lock_guard lock(mu_);
    writes_done_ = true;
    cv_.notify_all();
  }
  void set_open(bool open) {
    std::lock_guard lock(mu_);
    open_ = open;
    cv_.notify_all();
  }
  void Break() {
    std::lock_guard lock(mu_);
    broken_ = true;
    cv_.notify_all();
  }
  template <typename Pred>
  bool WaitFor(Pred pred) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return pred(); });
  }
  // Guarded by mu_: read in WaitFor predicates.
  std::vector<v1::AgentMessage> written_;
  int writers_waiting_ = 0;
  bool writes_done_ = false;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  bool broken_ = false;
};

class SendQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-send-queue-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
    auto s = Spool::Open(dir_->path());
    ASSERT_TRUE(s.ok());
    spool_ = std::move(*s);
  }
  // Spools, then sends, as the run executor does.
  void SendBatch(SendQueue& q, std::uint64_t run, std::uint64_t seq) {
    SampleBatchRecord b;
    b.run_id = run;
    b.sequence = seq;
    for (int i = 0; i < 64; ++i) {
      b.rows.push_back(SampleRow{0, static_cast<std::uint32_t>(seq * 64 + i), 0, 1'000'000 + i});
    }
    ASSERT_TRUE(spool_->PutBatch(b).ok());
    q.Send(std::move(b));
  }
  void SendFinished(SendQueue& q, std::uint64_t run, std::uint32_t batches) {
    const RunFinishedRecord f{run, RunOutcome::kSucceeded, "", batches};
    ASSERT_TRUE(spool_->PutFinished(f).ok());
    q.Send(f);
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Spool> spool_;
};

TEST_F(SendQueueTest, SendersNeverWaitForAStalledStreamAndTheQueueStaysWithinItsBound) {
  constexpr std::size_t kBound = 4096;  // about six of these batches
  SendQueue q(*spool_, kBound);
  GatedStream stream;
  q.Attach(stream);
  ASSERT_TRUE(spool_->BeginRun(1).ok());
  // The sender takes the first batch and blocks in the stream; everything after piles up.
  SendBatch(q, 1, 0);
  ASSERT_TRUE(stream.WaitFor([&] { return stream.writers_waiting_ == 1; }));
  for (std::uint64_t seq = 1; seq < 200; ++seq) SendBatch(q, 1, seq);
  SendFinished(q, 1, 200);
  const SendQueueStats s = q.stats();
  EXPECT_LE(s.peak_queued_bytes, kBound);
  EXPECT_GT(s.left_in_spool, 150u);

  stream.set_open(true);
  ASSERT_TRUE(stream.WaitFor(
      [&] { return !stream.written_.empty() && stream.written_.back().has_run_finished(); }));
  q.Detach([] {});
  // Every batch went out, in sequence order, and the run's end after all of them.
  std::vector<std::uint64_t> first_seen;
  std::set<std::uint64_t> seen;
  for (const auto& m : stream.written_) {
    if (m.has_batch() && seen.insert(m.batch().sequence()).second) {
      first_seen.push_back(m.batch().sequence());
    }
  }
  ASSERT_EQ(first_seen.size(), 200u);
  for (std::uint64_t i = 0; i < 200; ++i) EXPECT_EQ(first_seen[i], i);
  EXPECT_EQ(std::count_if(stream.written_.begin(), stream.written_.end(),
                          [](const v1::AgentMessage& m) { return m.has_run_finished(); }),
            1);
  // Caught up from the spool without resending what had gone out: about one copy each.
  EXPECT_LT(stream.written_.size(), 210u);
  EXPECT_GE(q.stats().catch_up_replays, 1u);
}

TEST_F(SendQueueTest, AttachSendsTheSpoolFirstAndTransientMessagesAreNotReplayed) {
  ASSERT_TRUE(spool_->BeginRun(2).ok());
  SendQueue q(*spool_, 1 << 20);
  SendBatch(q, 2, 0);  // no stream yet: spooled only
  v1::AgentMessage hb;
  hb.mutable_heartbeat();
  q.Send(hb);  // no stream: dropped for good
  GatedStream stream;
  stream.set_open(true);
  q.Attach(stream);
  SendBatch(q, 2, 1);
  ASSERT_TRUE(stream.WaitFor([&] {
    std::set<std::uint64_t> seqs;
    for (const auto& m : stream.written_)
      if (m.has_batch()) seqs.insert(m.batch().sequence());
    return seqs.size() == 2;
  }));
  q.Detach([] {});
  ASSERT_FALSE(stream.written_.empty());
  EXPECT_TRUE(stream.written_[0].has_batch());
  EXPECT_EQ(stream.written_[0].batch().sequence(), 0u);
  for (const auto& m : stream.written_) EXPECT_FALSE(m.has_heartbeat());
}

TEST_F(SendQueueTest, CloseWhenSentHalfClosesAfterEverythingQueued) {
  SendQueue q(*spool_, 1 << 20);
  GatedStream stream;
  q.Attach(stream);
  ASSERT_TRUE(spool_->BeginRun(3).ok());
  for (std::uint64_t seq = 0; seq < 5; ++seq) SendBatch(q, 3, seq);
  q.CloseWhenSent();
  v1::AgentMessage hb;
  hb.mutable_heartbeat();
  q.Send(hb);  // after the close: never written
  stream.set_open(true);
  ASSERT_TRUE(stream.WaitFor([&] { return stream.writes_done_; }));
  q.Detach([] {});
  // Each batch (some twice: the replay on Attach may find them spooled), then nothing.
  std::set<std::uint64_t> seqs;
  for (const auto& m : stream.written_) {
    ASSERT_TRUE(m.has_batch());
    seqs.insert(m.batch().sequence());
  }
  EXPECT_EQ(seqs, (std::set<std::uint64_t>{0, 1, 2, 3, 4}));
}

// Counts the run states written for `run` with `state`; the caller holds no lock (WaitFor does).
int StatesWritten(const std::vector<v1::AgentMessage>& written, std::uint64_t run,
                  const std::string& state) {
  int n = 0;
  for (const auto& m : written) {
    if (m.has_run_state() && m.run_state().run_id() == run && m.run_state().state() == state) ++n;
  }
  return n;
}

TEST_F(SendQueueTest, ADeferredStateIsSentOnceItsTimeHasPassed) {
  SendQueue q(*spool_, 1 << 20);
  GatedStream stream;
  stream.set_open(true);
  q.Attach(stream);
  q.SendDeferred(RunStateRecord{5, "preparing", "flashing"}, std::chrono::milliseconds(5));
  ASSERT_TRUE(stream.WaitFor([&] { return StatesWritten(stream.written_, 5, "preparing") == 1; }));
  q.Detach([] {});
}

TEST_F(SendQueueTest, ADeferredStateIsHeldUntilDueWhileOtherMessagesGoOut) {
  SendQueue q(*spool_, 1 << 20);
  GatedStream stream;
  stream.set_open(true);
  q.Attach(stream);
  ASSERT_TRUE(spool_->BeginRun(6).ok());
  q.SendDeferred(RunStateRecord{5, "preparing", ""}, std::chrono::hours(1));
  SendBatch(q, 6, 0);  // another run's message neither waits for nor supersedes it
  ASSERT_TRUE(stream.WaitFor([&] { return stream.written_.size() == 1; }));
  EXPECT_TRUE(stream.written_[0].has_batch());
  q.Detach([] {});
  EXPECT_EQ(stream.written_.size(), 1u);
}

TEST_F(SendQueueTest, AMessageOfTheSameRunDropsItsDeferredStateAndAnotherRunsDoesNot) {
  SendQueue q(*spool_, 1 << 20);
  GatedStream stream;
  q.Attach(stream);
  ASSERT_TRUE(spool_->BeginRun(8).ok());
  // The sender is stuck in a write, so nothing deferred can go out before the gate opens.
  SendBatch(q, 8, 0);
  ASSERT_TRUE(stream.WaitFor([&] { return stream.writers_waiting_ == 1; }));
  q.SendDeferred(RunStateRecord{7, "preparing", ""}, std::chrono::milliseconds(1));
  q.SendDeferred(RunStateRecord{9, "preparing", ""}, std::chrono::milliseconds(1));
  q.Send(RunStateRecord{7, "running", ""});  // run 7 started at once
  SendBatch(q, 8, 1);                        // run 8 is not run 9
  stream.set_open(true);
  ASSERT_TRUE(stream.WaitFor([&] {
    return StatesWritten(stream.written_, 7, "running") == 1 &&
           StatesWritten(stream.written_, 9, "preparing") == 1;
  }));
  q.Detach([] {});
  EXPECT_EQ(StatesWritten(stream.written_, 7, "preparing"), 0)
      << "a run that says running never said preparing";
}

TEST_F(SendQueueTest, DetachCancelsAWriteThatDoesNotReturn) {
  SendQueue q(*spool_, 1 << 20);
  GatedStream stream;
  q.Attach(stream);
  ASSERT_TRUE(spool_->BeginRun(4).ok());
  SendBatch(q, 4, 0);
  ASSERT_TRUE(stream.WaitFor([&] { return stream.writers_waiting_ == 1; }));
  bool cancelled = false;
  q.Detach([&] {
    cancelled = true;
    stream.Break();
  });
  EXPECT_TRUE(cancelled);
}

}  // namespace
}  // namespace mculab::agent
