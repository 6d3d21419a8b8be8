#include "agent/link/agent_link.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "agent.grpc.pb.h"
#include "agent/link/run_wire.h"
#include "agent/link/send_queue.h"
#include "agent/link/spool_import.h"
#include "common/crash_point.h"

namespace mculab::agent {

using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>;

namespace {
// How long Stop() lets the server finish reading after the half-close.
constexpr std::chrono::seconds kCloseGrace{3};
}  // namespace

class AgentLink::Impl final : public RunSink {
 public:
  Impl(LinkOptions options, std::vector<Board*> boards, Spool& spool, Clock& clock);
  ~Impl() override { Stop(); }

  void Run();
  void Stop();
  void Send(RunMessage message) override;
  void Send(v1::AgentMessage&& message);
  void SetBoardOffline(const std::string& board, const std::string& offline);

  std::atomic<std::uint64_t> registrations{0};
  SendQueueStats send_stats() const { return send_queue_.stats(); }

 private:
  // One per board: runs its assignments one after the other on its own thread.
  class Worker {
   public:
    Worker(Board& board, Impl& link) : board_(board), link_(link), thread_([this] { Loop(); }) {}
    ~Worker() {
      Shutdown();
      Join();
    }
    const std::string& name() const { return board_.Info().name; }

    void Enqueue(RunAssignment a, Clock::TimePoint received) {
      {
        std::lock_guard lock(mu_);
        queue_.push_back(std::move(a));
        received_.push_back(received);
      }
      cv_.notify_all();  // unlocked: the worker wakes to a free lock (the dispatch path)
    }
    // True when this worker has the run (running or queued).
    bool Cancel(std::uint64_t run_id) {
      std::lock_guard lock(mu_);
      if (active_ == run_id) {
        token_->Cancel(CancelReason::kByServer);
        return true;
      }
      for (const auto& a : queue_) {
        if (a.run_id == run_id) {
          cancelled_queued_.insert(run_id);
          return true;
        }
      }
      return false;
    }
    bool Has(std::uint64_t run_id) {
      std::lock_guard lock(mu_);
      if (active_ == run_id) return true;
      for (const auto& a : queue_)
        if (a.run_id == run_id) return true;
      return false;
    }
    std::optional<std::uint64_t> active() {
      std::lock_guard lock(mu_);
      return active_;
    }
    // The server closed a run that is still going here: stop it and drop its spool when it ends.
    bool CloseWhenDone(std::uint64_t run_id) {
      std::lock_guard lock(mu_);
      if (active_ != run_id) return false;
      close_after_.insert(run_id);
      token_->Cancel(CancelReason::kByServer);
      return true;
    }
    // The board went away (non-empty `why`: its running run ends as an infrastructure failure,
    // queued and later ones are refused) or came back (empty).
    void SetOffline(const std::string& why) {
      std::lock_guard lock(mu_);
      offline_ = why;
      if (!why.empty() && token_) token_->Cancel(CancelReason::kBoardGone);
    }
    void Shutdown() {
      std::lock_guard lock(mu_);
      stopping_ = true;
      if (token_) token_->Cancel(CancelReason::kShutdown);
      cv_.notify_all();
    }
    void Join() {
      if (thread_.joinable()) thread_.join();
    }

   private:
    void Loop() {
      for (;;) {
        bool idle = false;
        {
          std::lock_guard lock(mu_);
          idle = !stopping_ && queue_.empty();
        }
        if (idle) board_.Prepare();  // what the next run can have ready before it arrives
        RunAssignment a;
        ExecutorOptions options = link_.executor_;
        std::shared_ptr<CancelToken> token = std::make_shared<CancelToken>();
        std::string offline;
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
          if (queue_.empty()) return;
          a = std::move(queue_.front());
          queue_.pop_front();
          options.received_at = received_.front();
          received_.pop_front();
          if (cancelled_queued_.erase(a.run_id)) token->Cancel(CancelReason::kByServer);
          if (stopping_) token->Cancel(CancelReason::kShutdown);
          if (!offline_.empty()) token->Cancel(CancelReason::kBoardGone);
          offline = offline_;
          active_ = a.run_id;
          token_ = token;
        }
        if (token->reason() == CancelReason::kByServer) {
          FinishUnstartedRun(a.run_id, RunOutcome::kCancelled, "cancelled before it started",
                             link_.spool_, link_);
        } else if (token->reason() == CancelReason::kShutdown) {
          FinishUnstartedRun(a.run_id, RunOutcome::kInfraFailed,
                             "the agent stopped before the run started", link_.spool_, link_);
        } else if (token->reason() == CancelReason::kBoardGone) {
          FinishUnstartedRun(a.run_id, RunOutcome::kInfraFailed,
                             "board " + board_.Info().name + " is offline: " + offline,
                             link_.spool_, link_);
        } else {
          ExecuteRun(a, board_, link_.spool_, link_, link_.clock_, *token, options);
        }
        bool close = false;
        {
          std::lock_guard lock(mu_);
          active_.reset();
          token_.reset();
          close = close_after_.erase(a.run_id) > 0;
        }
        if (close) link_.spool_.Close(a.run_id);
      }
    }

    Board& board_;
    Impl& link_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<RunAssignment> queue_;
    std::deque<Clock::TimePoint> received_;  // when each queued assignment arrived
    std::set<std::uint64_t> cancelled_queued_;
    std::set<std::uint64_t> close_after_;
    std::optional<std::uint64_t> active_;
    std::shared_ptr<CancelToken> token_;
    bool stopping_ = false;
    std::string offline_;  // why the board is gone; empty while it is here
    std::thread thread_;   // last: starts after everything above exists
  };

  bool Serve(grpc::ClientContext& ctx, Stream& stream);
  void FinishLostRuns();
  void Dispatch(const v1::ServerMessage& m);
  v1::AgentMessage BuildRegister();
  bool IsActive(std::uint64_t run_id);
  Worker* FindWorker(const std::string& board);

  // AgentLink.FetchArtifact for the artifact cache.
  class Fetcher final : public ArtifactFetcher {
   public:
    explicit Fetcher(Impl& link) : link_(link) {}
    Status Fetch(const std::string& sha256,
                 const std::function<Status(std::string_view)>& sink) override {
      grpc::ClientContext ctx;
      if (!link_.options_.token.empty()) {
        ctx.AddMetadata("authorization", "Bearer " + link_.options_.token);
      }
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
      v1::FetchArtifactRequest req;
      req.set_sha256(sha256);
      auto reader = link_.stub_->FetchArtifact(&ctx, req);
      v1::ArtifactData chunk;
      Status failed;
      while (reader->Read(&chunk)) {
        if (failed = sink(chunk.data()); !failed.ok()) {
          ctx.TryCancel();
          break;
        }
      }
      const grpc::Status st = reader->Finish();
      if (!failed.ok()) return failed;
      if (st.ok()) return {};
      ErrorCode code = ErrorCode::kUnavailable;
      switch (st.error_code()) {
        case grpc::StatusCode::NOT_FOUND:
          code = ErrorCode::kNotFound;
          break;
        case grpc::StatusCode::PERMISSION_DENIED:
          code = ErrorCode::kPermissionDenied;
          break;
        case grpc::StatusCode::UNAUTHENTICATED:
          code = ErrorCode::kUnauthenticated;
          break;
        case grpc::StatusCode::INVALID_ARGUMENT:
          code = ErrorCode::kInvalidArgument;
          break;
        case grpc::StatusCode::DATA_LOSS:
          code = ErrorCode::kDataLoss;
          break;
        default:
          break;
      }
      return MakeError(code, "the server says: " + st.error_message());
    }

   private:
    Impl& link_;
  };

  const LinkOptions options_;
  std::vector<Board*> boards_;
  Spool& spool_;
  Clock& clock_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AgentLink::Stub> stub_;

  // The only writer of a registered stream; everything else hands it messages.
  SendQueue send_queue_;

  std::mutex stop_mu_;
  std::mutex mu_;  // guards stopping_, stop_done_ and ctx_
  std::condition_variable cv_;
  bool stopping_ = false;
  bool stop_done_ = false;
  grpc::ClientContext* ctx_ = nullptr;

  std::mutex offline_mu_;
  std::map<std::string, std::string> offline_;  // board -> why it is gone (guarded by offline_mu_)

  Fetcher fetcher_{*this};
  std::unique_ptr<ArtifactCache> artifacts_;
  ExecutorOptions executor_;  // options_.executor with the artifact cache

  std::vector<std::unique_ptr<Worker>> workers_;  // last: destroyed (joined) first
};

AgentLink::Impl::Impl(LinkOptions options, std::vector<Board*> boards, Spool& spool, Clock& clock)
    : options_(std::move(options)),
      boards_(std::move(boards)),
      spool_(spool),
      clock_(clock),
      send_queue_(spool, options_.send_queue_bytes) {
  grpc::ChannelArguments args;
  // Notice a server that vanished without closing the connection (power cut, partition).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  // The channel's own reconnect backoff stays short: the loop in Run() paces the attempts, and a
  // channel still backing off would fail them without trying.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options_.ca_pem.empty()) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = options_.ca_pem;
    credentials = grpc::SslCredentials(tls);
  }
  channel_ = grpc::CreateCustomChannel(options_.server, credentials, args);
  stub_ = v1::AgentLink::NewStub(channel_);
  executor_ = options_.executor;
  if (!options_.artifacts.dir.empty()) {
    artifacts_ = std::make_unique<ArtifactCache>(options_.artifacts, fetcher_);
    executor_.artifacts = artifacts_.get();
  }
  ImportProtobufSpool(spool_);  // before a worker or a replay reads the spool
  for (Board* b : boards_) workers_.push_back(std::make_unique<Worker>(*b, *this));
}

void AgentLink::Impl::Send(RunMessage message) { send_queue_.Send(std::move(message)); }
void AgentLink::Impl::Send(v1::AgentMessage&& message) { send_queue_.Send(std::move(message)); }

v1::AgentMessage AgentLink::Impl::BuildRegister() {
  v1::AgentMessage m;
  auto* r = m.mutable_register_();
  r->set_agent(options_.agent_name);
  r->set_version(options_.version);
  for (Board* b : boards_) {
    const BoardInfo& i = b->Info();
    auto* pb = r->add_boards();
    pb->set_name(i.name);
    pb->set_kind(i.kind);
    for (const auto& [k, v] : i.tags) (*pb->mutable_tags())[k] = v;
    pb->set_emulated(i.emulated);
    pb->set_serial(i.serial);
    pb->set_ram_bytes(i.ram_bytes);
    {
      std::lock_guard lock(offline_mu_);
      if (auto o = offline_.find(i.name); o != offline_.end()) pb->set_offline(o->second);
    }
    pb->set_custom_runners(i.custom_runners);
    pb->set_custom_runners_off(i.custom_runners ? "" : i.custom_runners_off);
    for (const CounterUnitInfo& u : i.counter_units) {
      auto* cu = pb->add_counter_units();
      cu->set_name(u.name);
      cu->set_max_simultaneous(u.max_simultaneous);
      for (const auto& e : u.events) cu->add_events(e);
      cu->set_emulated(u.emulated);
    }
  }
  std::set<std::uint64_t> runs;
  for (auto id : spool_.Runs()) runs.insert(id);
  for (auto& w : workers_) {
    if (auto id = w->active()) runs.insert(*id);
  }
  for (auto id : runs) r->add_active_runs(id);
  return m;
}

void AgentLink::Impl::SetBoardOffline(const std::string& board, const std::string& offline) {
  Worker* w = FindWorker(board);
  if (w == nullptr) return;
  {
    std::lock_guard lock(offline_mu_);
    if (offline.empty()) {
      offline_.erase(board);
    } else {
      offline_[board] = offline;
    }
  }
  // Going offline, the server hears first, so the run ending below does not free the board for
  // new work. Coming back, the board takes work first: an assignment the server sends as soon as
  // it hears must not find the board still offline here (it would fail as infra and be requeued).
  v1::AgentMessage m;
  m.mutable_board_status()->set_board(board);
  m.mutable_board_status()->set_offline(offline);
  if (offline.empty()) w->SetOffline(offline);
  Send(std::move(m));
  if (!offline.empty()) w->SetOffline(offline);
  if (offline.empty()) {
    spdlog::info("board {} is back", board);
  } else {
    spdlog::warn("board {} is offline: {}", board, offline);
  }
}

bool AgentLink::Impl::IsActive(std::uint64_t run_id) {
  for (auto& w : workers_)
    if (w->active() == run_id) return true;
  return false;
}

AgentLink::Impl::Worker* AgentLink::Impl::FindWorker(const std::string& board) {
  for (auto& w : workers_)
    if (w->name() == board) return w.get();
  return nullptr;
}

void AgentLink::Impl::FinishLostRuns() {
  for (auto run : spool_.Runs()) {
    if (!spool_.HasFinished(run) && !IsActive(run)) {
      // Left over by an earlier agent process that died mid-run.
      const RunFinishedRecord fin{run, RunOutcome::kInfraFailed,
                                  "the agent restarted during the run",
                                  static_cast<std::uint32_t>(spool_.NextSequence(run))};
      if (auto s = spool_.PutFinished(fin); !s) {
        spdlog::error("run {}: cannot spool RunFinished: {}", run, s.error().message);
      }
    }
  }
}

namespace {
class GrpcMessageStream final : public MessageStream {
 public:
  explicit GrpcMessageStream(Stream& stream) : stream_(stream) {}
  bool Write(const v1::AgentMessage& message) override { return stream_.Write(message); }
  void WritesDone() override { stream_.WritesDone(); }

 private:
  Stream& stream_;
};
}  // namespace

bool AgentLink::Impl::Serve(grpc::ClientContext& ctx, Stream& stream) {
  // Nothing else writes to this stream until it is attached to the queue.
  if (!stream.Write(BuildRegister())) return false;
  v1::ServerMessage first;
  if (!stream.Read(&first)) return false;
  if (!first.has_registered()) {
    spdlog::error("the server answered Register with message {} instead of Registered",
                  static_cast<int>(first.msg_case()));
    ctx.TryCancel();
    return false;
  }
  const auto heartbeat = first.registered().heartbeat_ms() != 0
                             ? std::chrono::milliseconds(first.registered().heartbeat_ms())
                             : options_.heartbeat;
  if (++registrations == 1) {
    spdlog::info("mculab-agent ready: agent {} with {} board{} registered with {}",
                 options_.agent_name, boards_.size(), boards_.size() == 1 ? "" : "s",
                 options_.server);
  } else {
    spdlog::info("re-registered with {} as agent {}", options_.server, options_.agent_name);
  }
  FinishLostRuns();
  GrpcMessageStream writer(stream);
  send_queue_.Attach(writer);  // the spool first, then what runs send from now on

  std::mutex hb_mu;
  std::condition_variable hb_cv;
  bool hb_stop = false;
  std::thread hb([&] {
    std::unique_lock lock(hb_mu);
    while (!hb_cv.wait_for(lock, heartbeat, [&] { return hb_stop; })) {
      lock.unlock();
      v1::AgentMessage m;
      m.mutable_heartbeat();
      Send(std::move(m));
      lock.lock();
    }
  });
  v1::ServerMessage msg;
  while (stream.Read(&msg)) Dispatch(msg);
  {
    std::lock_guard lock(hb_mu);
    hb_stop = true;
  }
  hb_cv.notify_all();
  hb.join();
  send_queue_.Detach([&] { ctx.TryCancel(); });
  return true;
}

void AgentLink::Impl::Dispatch(const v1::ServerMessage& m) {
  switch (m.msg_case()) {
    case v1::ServerMessage::kAssign: {
      const auto received = clock_.Now();
      RunAssignment a = FromWire(m.assign());
      Worker* w = FindWorker(a.board);
      if (w == nullptr) {
        spdlog::warn("run {}: assigned to board {}, which this agent does not have", a.run_id,
                     a.board);
        FinishUnstartedRun(a.run_id, RunOutcome::kInfraFailed,
                           "agent " + options_.agent_name + " has no board named " + a.board,
                           spool_, *this);
        return;
      }
      bool known = false;
      for (auto& other : workers_) known |= other->Has(a.run_id);
      if (known) {
        spdlog::warn("run {}: assigned again while it runs here; ignoring", a.run_id);
        return;
      }
      if (spool_.Contains(a.run_id)) {
        // Already run by this agent (e.g. the server restarted before taking the results): send
        // what the spool holds again rather than measuring twice.
        spdlog::warn("run {}: assigned again after it ran here; resending its results", a.run_id);
        send_queue_.Resend(a.run_id);
        return;
      }
      spdlog::info("run {}: job {} assigned to {} ({}, {} case{} x {} iteration{})", a.run_id,
                   a.job_id, a.board, a.op, a.cases.size(), a.cases.size() == 1 ? "" : "s",
                   a.iterations, a.iterations == 1 ? "" : "s");
      w->Enqueue(std::move(a), received);
      return;
    }
    case v1::ServerMessage::kCancel: {
      bool found = false;
      for (auto& w : workers_) found |= w->Cancel(m.cancel().run_id());
      spdlog::info("run {}: cancel requested ({}){}", m.cancel().run_id(), m.cancel().reason(),
                   found ? "" : ": not running here");
      return;
    }
    case v1::ServerMessage::kAck:
      spool_.Ack(m.ack().run_id(), m.ack().sequence());
      return;
    case v1::ServerMessage::kRunClosed: {
      CrashPoint(crash_points::kAgentAfterRunClosed);
      bool active = false;
      for (auto& w : workers_) active |= w->CloseWhenDone(m.run_closed().run_id());
      if (!active) spool_.Close(m.run_closed().run_id());
      return;
    }
    default:
      return;
  }
}

void AgentLink::Impl::Run() {
  std::mt19937_64 rng(std::random_device{}());
  int attempt = 0;
  for (;;) {
    grpc::ClientContext ctx;
    if (!options_.token.empty()) ctx.AddMetadata("authorization", "Bearer " + options_.token);
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
      ctx_ = &ctx;
    }
    auto stream = stub_->Connect(&ctx);
    const bool registered = Serve(ctx, *stream);
    const grpc::Status status = stream->Finish();
    {
      std::lock_guard lock(mu_);
      ctx_ = nullptr;
    }
    cv_.notify_all();
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    if (registered) attempt = 0;
    // Exponential backoff with jitter: a random wait in [d/2, d], d doubling up to the cap.
    const auto cap = options_.backoff_max.count();
    const auto base =
        std::min<std::int64_t>(cap, options_.backoff_initial.count() << std::min(attempt, 20));
    std::uniform_int_distribution<std::int64_t> dist(base / 2, base);
    const auto delay = std::chrono::milliseconds(dist(rng));
    ++attempt;
    spdlog::warn("{} server {}: {} ({}); retrying in {} ms",
                 registered ? "lost the" : "cannot register with", options_.server,
                 status.error_message().empty() ? "stream closed" : status.error_message(),
                 static_cast<int>(status.error_code()), delay.count());
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, delay, [&] { return stopping_; })) break;
  }
  // Return only once Stop() is through, so the caller may destroy the link right away.
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stop_done_; });
}

void AgentLink::Impl::Stop() {
  std::lock_guard stop_lock(stop_mu_);  // a second caller waits for the first to finish
  {
    std::lock_guard lock(mu_);
    if (stop_done_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  {
    // First tell the server, so that the runs ending below are not handed back to our boards.
    v1::AgentMessage m;
    m.mutable_heartbeat()->set_stopping(true);
    Send(std::move(m));
  }
  // The stream stays open meanwhile, so the runs' last messages can still go out.
  for (auto& w : workers_) w->Shutdown();
  for (auto& w : workers_) w->Join();
  // Half-close: the server reads everything sent so far, then ends the call. Cancelling right
  // away could drop the last messages in flight (they would only go out after a restart).
  send_queue_.CloseWhenSent();
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, kCloseGrace, [&] { return ctx_ == nullptr; })) ctx_->TryCancel();
  stop_done_ = true;
  cv_.notify_all();
}

AgentLink::AgentLink(LinkOptions options, std::vector<Board*> boards, Spool& spool, Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(boards), spool, clock)) {}
AgentLink::~AgentLink() = default;
void AgentLink::Run() { impl_->Run(); }
void AgentLink::Stop() { impl_->Stop(); }
std::uint64_t AgentLink::registrations() const { return impl_->registrations.load(); }
SendQueueStats AgentLink::send_stats() const { return impl_->send_stats(); }

void AgentLink::SetBoardOffline(const std::string& board, const std::string& offline) {
  impl_->SetBoardOffline(board, offline);
}

}  // namespace mculab::agent
