// The server's handling of what a hostile agent sends: the real Lab over a SQLite store (in a
// temporary folder, kept across inputs like a long-running server), one agent session per input.
// The input is a series of length-prefixed protobuf messages ([u16 LE length][bytes]): the first
// is the agent's Register (its agent name is forced to the caller's, so the session gets past
// the token check), every later one an AgentMessage given to AgentDesk::OnAgentMessage. A run id
// below 8 in a message is replaced by the run assigned to this session (if any), so the fuzzer
// reaches the paths of a run the agent really holds; other ids test the refusal of runs it does not
// hold.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "agent.pb.h"
#include "db/sqlite_store.h"
#include "server/rpc/agent_wire.h"
#include "server/service/agent_channel.h"
#include "server/service/clock.h"
#include "server/service/lab.h"
#include "tests/fuzz/fuzz_lab.h"

namespace {

namespace v1 = mculab::v1;
using mculab::server::Caller;
using mculab::server::Role;

class Channel final : public mculab::server::AgentChannel {
 public:
  void Send(const mculab::server::AgentCommand& c) override {
    const v1::ServerMessage m = mculab::server::rpc::ToProto(c);
    std::lock_guard l(mu_);
    if (m.has_assign()) runs_.push_back(m.assign().run_id());
  }
  std::vector<std::uint64_t> runs() {
    std::lock_guard l(mu_);
    return runs_;
  }

 private:
  std::mutex mu_;
  std::vector<std::uint64_t> runs_;
};

struct World : mculab::fuzz::FuzzLab {
  World() : FuzzLab("agent") {}
};

World& TheWorld() { return mculab::fuzz::ProcessWorld<World>(); }

void Submit(mculab::server::Lab& lab) {
  mculab::server::SubmitRequest r;
  r.kind = "host";
  r.op = "fully_connected_s8";
  r.cases.push_back({100, {1, 16, 8}});
  r.iterations = 3;
  Caller member;
  member.user = "fuzz-member";
  member.role = Role::kMember;
  (void)lab.jobs().Submit(member, std::move(r));
}

void MapRun(v1::AgentMessage& m, const std::vector<std::uint64_t>& runs) {
  auto map = [&](auto* msg) {
    if (msg->run_id() < 8 && !runs.empty()) msg->set_run_id(runs[msg->run_id() % runs.size()]);
  };
  switch (m.msg_case()) {
    case v1::AgentMessage::kRunState:
      map(m.mutable_run_state());
      break;
    case v1::AgentMessage::kRunStarted:
      map(m.mutable_run_started());
      break;
    case v1::AgentMessage::kBatch:
      map(m.mutable_batch());
      break;
    case v1::AgentMessage::kCaseDone:
      map(m.mutable_case_done());
      break;
    case v1::AgentMessage::kRunFinished:
      map(m.mutable_run_finished());
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  World& w = TheWorld();
  std::vector<std::string> chunks;
  while (size >= 2 && chunks.size() < 64) {
    const std::size_t n = std::min<std::size_t>(data[0] | (data[1] << 8), size - 2);
    chunks.emplace_back(reinterpret_cast<const char*>(data + 2), n);
    data += 2 + n;
    size -= 2 + n;
  }
  if (chunks.empty()) return 0;
  v1::Register reg;
  if (!reg.ParseFromString(chunks[0])) return 0;
  reg.set_agent("fuzz-agent");
  Caller agent;
  agent.user = "fuzz-agent";
  agent.role = Role::kAgent;
  Submit(*w.lab);  // work for the session's boards, if it registers a host board
  auto channel = std::make_shared<Channel>();
  auto session =
      w.lab->agents().ConnectAgent(agent, mculab::server::rpc::RegistrationFromProto(reg), channel);
  if (!session.ok()) return 0;
  for (std::size_t i = 1; i < chunks.size(); ++i) {
    v1::AgentMessage m;
    if (!m.ParseFromString(chunks[i])) continue;
    MapRun(m, channel->runs());
    w.lab->agents().OnAgentMessage(*session, mculab::server::rpc::EventFromProto(m, agent.user));
  }
  w.lab->agents().DisconnectAgent(*session, "fuzz input ended");
  return 0;
}
