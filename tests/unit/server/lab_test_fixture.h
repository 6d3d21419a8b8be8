// The Lab's test fixture: a real SQLite store in a temporary directory (behind a FaultyStore that
// passes everything and counts the reads of a run's samples), a fake clock and fake agent channels,
// and the helpers the Lab's tests share (lab_*_test.cc). No sleeps: tests wait for the messages and
// events the Lab produces.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "db/sqlite_store.h"
#include "fakes.h"
#include "faulty_store.h"
#include "server/domain/admission.h"
#include "server/service/lab.h"
#include "server/service/queries.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::server::lab_testing {

using testing::FakeAgentChannel;
using testing::FakeClock;
namespace v1 = mculab::v1;
using Outcome = v1::RunFinished;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-lab-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct BoardSpec {
  std::string name;
  std::string kind;
};

class LabTest : public ::testing::Test {
 protected:
  // The fake agents send no heartbeats while tests move the clock by minutes; tests of the
  // heartbeat timeout set their own.
  LabTest() { config_.heartbeat_timeout_ms = 24 * 3'600'000; }
  void SetUp() override { OpenLab(); }
  void TearDown() override {
    if (lab_) lab_->Stop();
    lab_.reset();
    faulty_.reset();
    store_.reset();
  }

  void OpenLab() {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
    faulty_ = std::make_unique<mculab::server::testing::FaultyStore>(*store_);
    lab_ =
        std::make_unique<mculab::server::testing::OwnedLab>(*faulty_, clock_, config_, dir_.path());
    Status s = lab_->Start();
    ASSERT_TRUE(s.ok()) << s.error().message;
  }

  void RestartLab() {
    lab_->Stop();
    lab_.reset();
    faulty_.reset();
    store_->Close();
    store_.reset();
    OpenLab();
  }

  AgentSessionId Connect(const std::shared_ptr<FakeAgentChannel>& channel, const std::string& agent,
                         const std::vector<BoardSpec>& boards,
                         const std::vector<std::uint64_t>& active_runs = {}) {
    v1::Register reg;
    reg.set_agent(agent);
    for (std::uint64_t run : active_runs) reg.add_active_runs(run);
    for (const auto& b : boards) {
      auto* info = reg.add_boards();
      info->set_name(b.name);
      info->set_kind(b.kind);
      info->set_serial("SN-" + b.name);
    }
    auto id = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                          testing::RegistrationOf(reg), channel);
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    EXPECT_TRUE(channel->Take(FakeAgentChannel::IsRegistered));
    return id.ok() ? *id : 0;
  }

  // An agent whose boards carry tags: {name, kind, {{key, value}, ...}}.
  struct TaggedBoard {
    std::string name;
    std::string kind;
    std::map<std::string, std::string> tags;
  };
  AgentSessionId ConnectTagged(const std::shared_ptr<FakeAgentChannel>& channel,
                               const std::string& agent, const std::vector<TaggedBoard>& boards) {
    v1::Register reg;
    reg.set_agent(agent);
    for (const auto& b : boards) {
      auto* info = reg.add_boards();
      info->set_name(b.name);
      info->set_kind(b.kind);
      info->set_serial("SN-" + b.name);
      for (const auto& [k, v] : b.tags) (*info->mutable_tags())[k] = v;
    }
    auto id = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                          testing::RegistrationOf(reg), channel);
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    EXPECT_TRUE(channel->Take(FakeAgentChannel::IsRegistered));
    return id.ok() ? *id : 0;
  }

  // A host agent "lab-1" with one board "host-0".
  AgentSessionId ConnectHostAgent() { return Connect(agent_, "lab-1", {{"host-0", "host"}}); }

  static SubmitRequest FcJob(std::uint32_t cases = 2, std::uint32_t iterations = 4,
                             std::string kind = "host") {
    SubmitRequest r;
    r.kind = std::move(kind);
    r.op = "fully_connected_s8";
    for (std::uint32_t i = 0; i < cases; ++i)
      r.cases.push_back({100 + i, {1, static_cast<std::int32_t>(8 * (i + 1)), 4}});
    r.iterations = iterations;
    r.warmup = 1;
    return r;
  }

  JobId Submit(SubmitRequest r) {
    auto reply = lab_->jobs().Submit(caller_, std::move(r));
    EXPECT_TRUE(reply.ok()) << (reply.ok() ? "" : reply.error().message);
    return reply.ok() ? reply->id : 0;
  }

  v1::Assignment TakeAssignment(FakeAgentChannel& channel) {
    auto m = channel.Take(FakeAgentChannel::IsAssign);
    EXPECT_TRUE(m.has_value()) << "no Assignment arrived";
    return m ? m->assign() : v1::Assignment{};
  }

  void Send(AgentSessionId session, const v1::AgentMessage& m) {
    lab_->agents().OnAgentMessage(session, testing::AgentEventOf(m));
  }

  static v1::AgentMessage RunStateMsg(std::uint64_t run, const std::string& state) {
    v1::AgentMessage m;
    m.mutable_run_state()->set_run_id(run);
    m.mutable_run_state()->set_state(state);
    return m;
  }
  static v1::AgentMessage StartedMsg(std::uint64_t run) {
    v1::AgentMessage m;
    auto* s = m.mutable_run_started();
    s->set_run_id(run);
    s->set_runner_version("0.1.0");
    s->set_port("host");
    s->set_timer_unit("ns");
    s->add_counters("instructions");
    s->set_firmware_sha256(std::string(64, 'f'));
    return m;
  }
  // One batch with the given timer values of one case, iterations from `first`.
  static v1::AgentMessage BatchMsg(std::uint64_t run, std::uint64_t seq, std::uint32_t case_index,
                                   const std::vector<std::int64_t>& values,
                                   std::uint32_t first = 0) {
    v1::AgentMessage m;
    auto* b = m.mutable_batch();
    b->set_run_id(run);
    b->set_sequence(seq);
    for (std::size_t i = 0; i < values.size(); ++i) {
      auto* s = b->add_samples();
      s->set_case_index(case_index);
      s->set_iteration(first + static_cast<std::uint32_t>(i));
      s->set_metric(0);
      s->set_value(values[i]);
      auto* c = b->add_samples();
      c->set_case_index(case_index);
      c->set_iteration(first + static_cast<std::uint32_t>(i));
      c->set_metric(1);
      c->set_value(1000);
    }
    return m;
  }
  static v1::AgentMessage CaseDoneMsg(std::uint64_t run, std::uint32_t case_index, bool ok = true) {
    v1::AgentMessage m;
    auto* c = m.mutable_case_done();
    c->set_run_id(run);
    c->set_case_index(case_index);
    c->set_checksum(ok ? 0x1234 : 0x9999);
    c->set_expected_checksum(0x1234);
    c->set_checksum_ok(ok);
    c->set_overhead(7);
    return m;
  }
  static v1::AgentMessage FinishedMsg(std::uint64_t run, Outcome::Outcome outcome,
                                      std::uint32_t batches, const std::string& message = "") {
    v1::AgentMessage m;
    auto* f = m.mutable_run_finished();
    f->set_run_id(run);
    f->set_outcome(outcome);
    f->set_batches_sent(batches);
    f->set_message(message);
    return m;
  }

  // Follows the job's events until `target` or the end; returns the last state seen.
  JobState WaitForState(JobId id, JobState target) {
    auto watch = lab_->jobs().Watch(caller_, id);
    EXPECT_TRUE(watch.ok());
    JobState last = JobState::kQueued;
    while (watch.ok()) {
      auto e = (*watch)->Next(std::chrono::seconds(10));
      if (!e) break;
      last = e->state;
      if (last == target) break;
    }
    return last;
  }

  // Runs a whole successful job on run `a`: states, provenance, one batch per case, checksums.
  void RunToSuccess(AgentSessionId session, const v1::Assignment& a) {
    Send(session, RunStateMsg(a.run_id(), "preparing"));
    Send(session, RunStateMsg(a.run_id(), "running"));
    Send(session, StartedMsg(a.run_id()));
    std::uint32_t seq = 0;
    for (const auto& c : a.cases()) {
      std::vector<std::int64_t> values;
      for (std::uint32_t i = 0; i < a.iterations(); ++i) values.push_back(100 + i);
      Send(session, BatchMsg(a.run_id(), seq++, c.index(), values));
      Send(session, CaseDoneMsg(a.run_id(), c.index()));
    }
    Send(session, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, seq));
  }

  // The job history as the API and the CLI list it (LabQueries), newest first.
  Result<std::vector<Job>> ListJobs(JobQuery query = {}) {
    auto page = LabQueries(*lab_, *store_).ListJobs(caller_, query);
    if (!page.ok()) return page.error();
    std::vector<Job> jobs;
    for (JobRow& row : page->jobs) jobs.push_back(std::move(row.job));
    return jobs;
  }

  BoardView BoardNamed(const std::string& name) {
    auto boards = lab_->boards().ListBoards(caller_);
    EXPECT_TRUE(boards.ok());
    for (const auto& b : *boards) {
      if (b.board.name == name) return b;
    }
    ADD_FAILURE() << "no board " << name;
    return {};
  }

  TempDir dir_;
  FakeClock clock_;
  // Health checks off unless a test turns them on: they add jobs of their own.
  LabConfig config_ = [] {
    LabConfig c;
    c.health_checks = false;
    return c;
  }();
  Caller caller_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<mculab::server::testing::FaultyStore> faulty_;
  std::unique_ptr<mculab::server::testing::OwnedLab> lab_;
  std::shared_ptr<FakeAgentChannel> agent_ = std::make_shared<FakeAgentChannel>();
};

// A caller with `role` (a member by default).
inline Caller Member(const std::string& user, Role role = Role::kMember) {
  Caller c;
  c.user = user;
  c.role = role;
  return c;
}

}  // namespace mculab::server::lab_testing
