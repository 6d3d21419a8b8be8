// SerialLink (Boost.Asio serial_port) over pseudo-terminal pairs standing in for a probe's virtual
// COM port, with the real host runner on the other side: a relay in the test copies bytes between
// the runner's pipes and the pty's master, and can add line noise or hang the line up mid-frame
// and bring it back as a new tty (a probe re-enumerating), the /dev/serial/by-id link following
// it. Also: the pyocd backend is the gdb backend with pyOCD's template.
#include "agent/io/serial_link.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "agent/boards/gdb_board.h"
#include "agent/boards/host_board.h"
#include "agent/boards/make_boards.h"
#include "agent/config.h"
#include "agent/io/fake_probe_lister.h"
#include "agent/io/fd.h"
#include "agent/io/probe_lister.h"
#include "agent/io/subprocess.h"
#include "agent/io/temp_dir.h"
#include "real_runner_test_util.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kSerial = "002F00283438510B34313939";

// A pseudo-terminal pair in raw mode; the test keeps the slave open too, so the line's settings
// survive the agent's closing and reopening it.
struct Pty {
  UniqueFd master;
  UniqueFd slave;
  std::string slave_path;
  Pty() {
    master.Reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    EXPECT_TRUE(master.valid());
    EXPECT_EQ(::grantpt(master.get()), 0);
    EXPECT_EQ(::unlockpt(master.get()), 0);
    slave_path = ::ptsname(master.get());
    slave.Reset(::open(slave_path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC));
    termios t{};
    ::tcgetattr(slave.get(), &t);
    ::cfmakeraw(&t);
    ::tcsetattr(slave.get(), TCSANOW, &t);
  }
};

// The udev link of the probe's port: /dev/serial/by-id/usb-<maker>_<product>_<serial>-if02.
std::filesystem::path ByIdLink(const std::filesystem::path& by_id) {
  return by_id / (std::string("usb-STMicroelectronics_STLINK-V3_") + kSerial + "-if02");
}
void LinkById(const std::filesystem::path& by_id, const std::string& target) {
  std::error_code ec;
  std::filesystem::remove(ByIdLink(by_id), ec);
  std::filesystem::create_symlink(target, ByIdLink(by_id));
}
// The probe goes away: udev removes its by-id link *before* the tty is gone. The order matters
// here, not only for realism: a closed pty's number is handed to the next pty anyone opens (the
// tests run in parallel), so a link left pointing at it would lead the agent into another test's
// line, where it would read that test's bytes.
void Unplug(const std::filesystem::path& by_id, std::unique_ptr<Pty>& pty) {
  std::error_code ec;
  std::filesystem::remove(ByIdLink(by_id), ec);
  pty.reset();
}

TEST(SerialLink, FindsThePortByTheProbeSerialAndCarriesBytesBothWays) {
  auto dir = TempDir::Create("mculab-serial-test-");
  ASSERT_TRUE(dir.ok());
  const auto by_id = (*dir)->path() / "by-id";
  std::filesystem::create_directories(by_id);
  Pty pty;
  LinkById(by_id, pty.slave_path);
  std::filesystem::create_symlink("/dev/null", by_id / "usb-FTDI_FT232R_A50285BI-if00-port0");
  SerialLinkOptions o;
  o.serial = kSerial;
  o.by_id_dir = by_id;
  o.baud = 921600;
  auto link = SerialLink::Open(o, RealClock());
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_EQ((*link)->port(), std::filesystem::path(pty.slave_path));
  termios t{};
  ASSERT_EQ(::tcgetattr(pty.slave.get(), &t), 0);
  EXPECT_EQ(::cfgetospeed(&t), static_cast<speed_t>(B921600));
  EXPECT_EQ(t.c_lflag & (ICANON | ECHO), 0u);  // raw: no line editing, no echo

  const std::uint8_t out[] = {1, 2, 0, 0x0a, 0x0d, 0x11, 0x13, 0xff};
  ASSERT_TRUE((*link)->Write(out).ok());
  std::uint8_t got[16];
  auto n = ReadSome(pty.master.get(), got, std::chrono::seconds(5));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::vector<std::uint8_t>(got, got + *n), std::vector<std::uint8_t>(out, out + 8));
  ASSERT_TRUE(WriteAll(pty.master.get(), out, std::chrono::seconds(2)).ok());
  std::vector<std::uint8_t> back;
  while (back.size() < 8) {
    auto r = (*link)->Read(got, std::chrono::seconds(5));
    ASSERT_TRUE(r.ok());
    ASSERT_GT(*r, 0u);
    back.insert(back.end(), got, got + *r);
  }
  EXPECT_EQ(back, std::vector<std::uint8_t>(out, out + 8));
  // Nothing more: a read times out with 0.
  auto none = (*link)->Read(got, std::chrono::milliseconds(20));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0u);

  o.serial = "SER9";
  auto missing = SerialLink::Open(o, RealClock());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("no serial port for probe serial SER9"));
  EXPECT_THAT(missing.error().message, HasSubstr("usb-FTDI_FT232R_A50285BI-if00-port0"));
}

TEST(SerialLink, APortThatStaysAwayIsUnavailableAfterTheGrace) {
  auto dir = TempDir::Create("mculab-serial-test-");
  ASSERT_TRUE(dir.ok());
  const auto by_id = (*dir)->path() / "by-id";
  std::filesystem::create_directories(by_id);
  auto pty = std::make_unique<Pty>();
  LinkById(by_id, pty->slave_path);
  SerialLinkOptions o;
  o.serial = kSerial;
  o.by_id_dir = by_id;
  o.reopen_grace = std::chrono::milliseconds(200);
  auto link = SerialLink::Open(o, RealClock());
  ASSERT_TRUE(link.ok()) << link.error().message;
  Unplug(by_id, pty);  // hung up, and its by-id link gone
  std::uint8_t buf[8];
  Result<std::size_t> r = std::size_t{0};
  for (int i = 0; i < 1000 && r.ok(); ++i) r = (*link)->Read(buf, std::chrono::milliseconds(20));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(r.error().message, HasSubstr("did not come back within 200 ms"));
  EXPECT_FALSE((*link)->Write(buf).ok());
}

// The host runner behind a pty: the relay copies runner -> master and master -> runner.
struct RelayPlan {
  // Noise (ending in the frame delimiter 0x00) before the first byte and after every 0x00 the
  // runner sends, up to this many times.
  int noise_bursts = 0;
  // Hang the line up once this many runner bytes went through, then bring the port back as a
  // new tty (0: never): in the middle of a frame, or between two frames.
  std::size_t drop_after = 0;
  bool mid_frame = true;
};

class PtyRunnerProcess final : public RunnerProcess {
 public:
  PtyRunnerProcess(std::unique_ptr<TempDir> dir, std::unique_ptr<Subprocess> runner,
                   std::unique_ptr<SerialLink> link, std::function<void()> stop_relay,
                   RunProvenance prov, std::atomic<int>& reopens)
      : reopens_(reopens),
        dir_(std::move(dir)),
        runner_(std::move(runner)),
        link_(std::move(link)),
        stop_relay_(std::move(stop_relay)),
        prov_(std::move(prov)) {}
  ~PtyRunnerProcess() override {
    runner_->Kill();
    (void)runner_->Wait(std::chrono::seconds(5));
    stop_relay_();
    reopens_ = link_->reopens();
  }
  Result<std::size_t> Read(std::span<std::uint8_t> buf,
                           std::chrono::milliseconds timeout) override {
    return link_->Read(buf, timeout);
  }
  Status Write(std::span<const std::uint8_t> bytes) override { return link_->Write(bytes); }
  void Kill() override { runner_->Kill(); }
  Result<ExitStatus> Wait(std::chrono::milliseconds timeout) override {
    return runner_->Wait(timeout);
  }
  const RunProvenance& provenance() const override { return prov_; }
  SerialLink& link() { return *link_; }

 private:
  std::atomic<int>& reopens_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Subprocess> runner_;
  std::unique_ptr<SerialLink> link_;
  std::function<void()> stop_relay_;
  RunProvenance prov_;
};

class PtyBoard final : public Board {
 public:
  explicit PtyBoard(RelayPlan plan) : plan_(plan), info_(testing::Info("h743", "nucleo-h743")) {}
  ~PtyBoard() override { StopRelay(); }
  const BoardInfo& Info() const override { return info_; }

  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override {
    auto dir = TempDir::Create("mculab-pty-board-");
    if (!dir) return dir.error();
    const auto workload = (*dir)->path() / "workload.bin";
    if (auto s = WriteFile(workload,
                           std::string_view(reinterpret_cast<const char*>(spec.workload.data()),
                                            spec.workload.size()));
        !s) {
      return s.error();
    }
    by_id_ = (*dir)->path() / "by-id";
    std::filesystem::create_directories(by_id_);
    pty_ = std::make_unique<Pty>();
    LinkById(by_id_, pty_->slave_path);
    SpawnOptions so;
    so.argv = {MCULAB_RUNNER_HOST, workload.string()};
    so.pipe_stdin = true;
    so.pipe_stdout = true;
    auto proc = Subprocess::Spawn(so);
    if (!proc) return proc.error();
    runner_in_ = (*proc)->TakeStdin();
    runner_out_ = (*proc)->TakeStdout();
    SerialLinkOptions o;
    o.serial = kSerial;
    o.by_id_dir = by_id_;
    o.baud = 115200;
    auto link = SerialLink::Open(o, RealClock());
    if (!link) return link.error();
    stop_ = false;
    relay_ = std::thread([this] { Relay(); });
    RunProvenance prov;
    prov.note = "host runner behind a pty";
    auto p = std::make_unique<PtyRunnerProcess>(
        std::move(*dir), std::move(*proc), std::move(*link), [this] { StopRelay(); }, prov,
        reopens);
    last_ = p.get();
    return std::unique_ptr<RunnerProcess>(std::move(p));
  }

  PtyRunnerProcess* last() { return last_; }
  std::string first_port, second_port;
  std::atomic<int> bursts_sent{0};
  std::atomic<int> reopens{0};  // how often the last run's link opened its port again

 private:
  void StopRelay() {
    stop_ = true;
    if (relay_.joinable()) relay_.join();
  }
  void Noise(int fd) {
    if (bursts_sent >= plan_.noise_bursts) return;
    ++bursts_sent;
    const std::uint8_t noise[] = {0x55, 0xaa, 0x13, 0x7f, 0x80, 0xfe, 0x01, 0x00};
    (void)WriteAll(fd, noise, std::chrono::seconds(2));
  }
  // Waits (bounded) until the agent has read everything the line holds: a hang-up flushes what
  // is unread. The pty moves bytes to the slave's queue asynchronously, so the queue must stay
  // empty for a while.
  void Drain() {
    int empty_polls = 0;
    for (int i = 0; i < 2000 && empty_polls < 50; ++i) {
      int queued = 0;
      if (::ioctl(pty_->slave.get(), TIOCINQ, &queued) != 0) return;
      empty_polls = queued == 0 ? empty_polls + 1 : 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  // The probe re-enumerates: the line hangs up (the agent's side reads EIO) and the port comes
  // back as another tty that the by-id link follows.
  void Reenumerate() {
    Drain();
    Unplug(by_id_, pty_);
    pty_ = std::make_unique<Pty>();
    second_port = pty_->slave_path;
    LinkById(by_id_, pty_->slave_path);
  }
  void Relay() {
    first_port = pty_->slave_path;
    std::size_t sent = 0;
    bool dropped = false;
    std::uint8_t prev = 0;
    Noise(pty_->master.get());
    std::uint8_t buf[512];
    while (!stop_) {
      pollfd fds[2] = {{runner_out_.get(), POLLIN, 0}, {pty_->master.get(), POLLIN, 0}};
      if (::poll(fds, 2, 20) <= 0) continue;
      if (fds[1].revents & POLLIN) {  // agent -> runner
        auto n = ::read(pty_->master.get(), buf, sizeof(buf));
        if (n > 0) (void)WriteAll(runner_in_.get(), std::span(buf, n), std::chrono::seconds(2));
      }
      if (fds[0].revents & (POLLIN | POLLHUP)) {  // runner -> agent
        auto n = ::read(runner_out_.get(), buf, sizeof(buf));
        if (n <= 0) break;
        for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
          const std::uint8_t b = buf[i];
          if (plan_.drop_after != 0 && !dropped && sent >= plan_.drop_after) {
            if (plan_.mid_frame && prev != 0 && b != 0) {
              // The rest of this frame is lost with the line.
              dropped = true;
              while (i + 1 < static_cast<std::size_t>(n) && buf[i + 1] != 0) ++i;
              prev = buf[i];
              Reenumerate();
              continue;
            }
            if (!plan_.mid_frame && prev == 0) {
              dropped = true;
              Reenumerate();
            }
          }
          (void)WriteAll(pty_->master.get(), std::span(&buf[i], 1), std::chrono::seconds(2));
          ++sent;
          prev = b;
          if (b == 0) Noise(pty_->master.get());
        }
      }
    }
  }

  RelayPlan plan_;
  BoardInfo info_;
  std::unique_ptr<Pty> pty_;
  std::filesystem::path by_id_;
  UniqueFd runner_in_, runner_out_;
  std::thread relay_;
  std::atomic<bool> stop_{false};
  PtyRunnerProcess* last_ = nullptr;
};

TEST(SerialLinkWithHostRunner, LineNoiseCostsNoSampleAndTheCountsEqualTheDirectRun) {
  HostBoard direct(testing::Info("host-0", "host"), MCULAB_RUNNER_HOST, false, Sandbox::None());
  auto want = testing::RunOnBoard(direct, 5);
  ASSERT_EQ(want.result.outcome, RunOutcome::kSucceeded) << want.result.message;

  PtyBoard board({.noise_bursts = 20});
  auto run = testing::RunOnBoard(board, 5);
  ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  EXPECT_EQ(board.bursts_sent.load(), 20);
  EXPECT_GE(run.result.stats.bad_frames, 1u);
  ASSERT_EQ(run.listener.samples.size(), want.listener.samples.size());
  ASSERT_EQ(run.listener.cases.size(), want.listener.cases.size());
  for (std::size_t i = 0; i < run.listener.cases.size(); ++i) {
    EXPECT_TRUE(run.listener.cases[i].checksum_ok) << i;
    EXPECT_EQ(run.listener.cases[i].checksum, want.listener.cases[i].checksum) << i;
  }
}

TEST(SerialLinkWithHostRunner, ALineThatDropsMidFrameIsReopenedAndTheLossIsAnInfraFailure) {
  PtyBoard board({.drop_after = 600});
  auto run = testing::RunOnBoard(board, 50);
  // The frame cut by the hang-up is gone; the frames after the reopen decode, and the session
  // notices the hole: an infrastructure failure (the job is requeued), never a stored hole.
  EXPECT_EQ(run.result.outcome, RunOutcome::kInfraFailed) << run.result.message;
  EXPECT_THAT(run.result.message, HasSubstr("lost"));
  ASSERT_FALSE(board.second_port.empty());
  // The new tty may get the old one's number (the kernel hands out the lowest free one): what
  // counts is that the link was opened again.
  ASSERT_NE(board.last(), nullptr);
  EXPECT_GE(board.reopens.load(), 1);
}

TEST(SerialLinkWithHostRunner, ADropBetweenFramesLosesNothing) {
  // The same hang-up, but the relay only drops at a frame boundary: nothing is lost, the run
  // completes over the reopened port.
  PtyBoard board({.drop_after = 600, .mid_frame = false});
  auto run = testing::RunOnBoard(board, 50);
  ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  ASSERT_FALSE(board.second_port.empty());
  EXPECT_EQ(run.listener.samples.size(), 150u);
  for (const auto& c : run.listener.cases) EXPECT_TRUE(c.checksum_ok) << c.case_index;
}

TEST(PyocdBackend, IsTheGdbBackendWithPyocdsTemplate) {
  auto argv =
      ExpandCommandTemplate(PyocdServerTemplate("pyocd"),
                            {{"target", "stm32h743zitx"}, {"serial", kSerial}, {"port", "3333"}});
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  EXPECT_THAT(*argv, ElementsAre("pyocd", "gdbserver", "-t", "stm32h743zitx", "--uid", kSerial,
                                 "--port", "3333"));
  auto spaced = ExpandCommandTemplate(PyocdServerTemplate("/opt/py ocd/bin/pyocd"),
                                      {{"target", "t"}, {"serial", "s"}, {"port", "1"}});
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ((*spaced)[0], "/opt/py ocd/bin/pyocd");

  // A config written for the former pyocd backend still loads, as a gdb board.
  auto cfg = ParseAgentConfig(
      std::string("[agent]\nname = \"t\"\n[[board]]\nname = \"h743\"\nkind = \"nucleo-h743\"\n"
                  "backend = \"pyocd\"\nfirmware = \"/fw.elf\"\nserial = \"") +
          kSerial + "\"\ntarget = \"stm32h743zitx\"\nworkload_addr = 0x24040000\n",
      "agent.toml", "/");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  FakeProbeLister probes;
  Sandbox none = Sandbox::None();
  BoardDeps deps{RealClock(), probes, RealProcessRunner(), "/tmp", none};
  auto boards = MakeBoards(cfg->boards, deps);
  ASSERT_TRUE(boards.ok()) << boards.error().message;
  ASSERT_EQ(boards->size(), 1u);
  auto* gdb = dynamic_cast<GdbBoard*>((*boards)[0].get());
  ASSERT_NE(gdb, nullptr);
  EXPECT_EQ(gdb->Info().backend, "gdb (pyocd)");
  EXPECT_EQ(gdb->Info().serial, kSerial);
}

TEST(ProbeLister, RecognisesDebugProbesByIdsOrProductString) {
  EXPECT_TRUE(IsDebugProbe(0x0483, 0x374b, ""));  // ST-Link V2-1
  EXPECT_TRUE(IsDebugProbe(0x1366, 0x0105, ""));  // any J-Link
  EXPECT_TRUE(IsDebugProbe(0x1234, 0x5678, "Foo CMSIS-DAP v2"));
  EXPECT_FALSE(IsDebugProbe(0x046d, 0xc077, "USB Optical Mouse"));
  EXPECT_FALSE(IsDebugProbe(0x0483, 0x5740, "STM32 Virtual ComPort"));
}

}  // namespace
}  // namespace mculab::agent
