// GdbBoard: the command template and ELF segments (pure); the flash path (vFlash only when the
// runner changed, a failing erase) against the scripted fake GDB server; and the real thing: the
// an547 runner loaded into QEMU's gdbstub over GDB only (no -kernel), whose results must equal the
// direct QemuBoard's for the same workload. The QEMU parts skip themselves without QEMU or the ELF.
#include "agent/boards/gdb_board.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>
#include <thread>

#include "agent/boards/gdb_rtt.h"
#include "agent/boards/qemu_board.h"
#include "agent/io/subprocess.h"
#include "agent/io/temp_dir.h"
#include "fake_gdb_server.h"
#include "real_runner_test_util.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using testing::FakeGdbAction;
using testing::FakeGdbServer;
using ::testing::HasSubstr;

TEST(GdbBoardTemplateTest, SplitsLikeAShellAndSubstitutes) {
  auto argv = ExpandCommandTemplate(
      "openocd -f interface/stlink.cfg -c \"adapter serial {serial}\" -c 'gdb_port {port}' "
      "x\\ y",
      {{"serial", "0670FF37"}, {"port", "3333"}});
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  EXPECT_THAT(*argv, ElementsAre("openocd", "-f", "interface/stlink.cfg", "-c",
                                 "adapter serial 0670FF37", "-c", "gdb_port 3333", "x y"));
  auto unknown = ExpandCommandTemplate("pyocd gdbserver --uid {uid}", {{"serial", "1"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("{uid}"));
  EXPECT_FALSE(ExpandCommandTemplate("qemu \"-S", {}).ok());
}

TEST(GdbBoardElfTest, RejectsWhatIsNotA32BitElf) {
  const std::vector<std::uint8_t> junk(64, 0x7f);
  EXPECT_FALSE(ElfLoadSegments(junk).ok());
}

std::string Existing(const std::string& elf) {
  return !elf.empty() && std::filesystem::exists(elf) ? elf : std::string();
}
std::string An547Elf() { return Existing(MCULAB_AN547_ELF); }
// The Cortex-M7 port under QEMU mps2-an500: its UART build and its RTT build (MCULAB_LINK=rtt).
std::string An500Elf() { return Existing(MCULAB_AN500_ELF); }
std::string An500RttElf() { return Existing(MCULAB_AN500_RTT_ELF); }

bool HaveQemu() {
  auto probe = RealProcessRunner().Run({"qemu-system-arm", "--version"}, std::chrono::seconds(10));
  return probe.ok() && probe->status.success();
}

TEST(GdbBoardElfTest, FindsTheRttRunnersSymbolsAndNotTheUartRunners) {
  if (An500RttElf().empty() || An547Elf().empty()) GTEST_SKIP() << "no an500-rtt or an547 ELF";
  auto bytes = ReadFile(An500RttElf());
  ASSERT_TRUE(bytes.ok());
  auto syms = FindRttSymbols(
      std::span(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()));
  ASSERT_TRUE(syms.ok()) << syms.error().message;
  EXPECT_LT(syms->flush, 0x00400000u);  // code in SSRAM1
  EXPECT_EQ(syms->flush & 1u, 0u);
  EXPECT_GE(syms->control_block, 0x20000000u);  // data in SSRAM23
  EXPECT_GE(syms->waiting, 0x20000000u);
  auto uart = ReadFile(An547Elf());
  ASSERT_TRUE(uart.ok());
  auto none =
      FindRttSymbols(std::span(reinterpret_cast<const std::uint8_t*>(uart->data()), uart->size()));
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("MCULAB_LINK=rtt"));
}

TEST(GdbBoardElfTest, TheAn547RunnerLoadsIntoItcmWithItsVectorTableFirst) {
  if (An547Elf().empty()) GTEST_SKIP() << "the an547 runner ELF is not built";
  auto bytes = ReadFile(An547Elf());
  ASSERT_TRUE(bytes.ok());
  auto segs = ElfLoadSegments(
      std::span(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()));
  ASSERT_TRUE(segs.ok()) << segs.error().message;
  ASSERT_FALSE(segs->empty());
  EXPECT_EQ((*segs)[0].paddr, 0x10000000u);
  EXPECT_TRUE((*segs)[0].executable);
  for (const auto& s : *segs) EXPECT_LT(s.paddr, 0x10080000u) << "load image outside ITCM";
}

// ---- the flash path against the fake server ----

// A unix socket the board connects to as the runner's link (the fake board never speaks on it).
class UnixListener {
 public:
  explicit UnixListener(const std::filesystem::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(fd_, 4);
  }
  ~UnixListener() { ::close(fd_); }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

constexpr const char* kTargetXml =
    "<target><feature name=\"org.gnu.gdb.arm.m-profile\">"
    "<reg name=\"r0\" bitsize=\"32\"/><reg name=\"sp\" bitsize=\"32\" regnum=\"13\"/>"
    "<reg name=\"lr\" bitsize=\"32\"/><reg name=\"pc\" bitsize=\"32\"/>"
    "<reg name=\"xpsr\" bitsize=\"32\" regnum=\"25\"/></feature></target>";
constexpr const char* kMemoryMap =
    "<memory-map><memory type=\"flash\" start=\"0x10000000\" length=\"0x80000\">"
    "<property name=\"blocksize\">0x1000</property></memory>"
    "<memory type=\"ram\" start=\"0x30000000\" length=\"0x80000\"/></memory-map>";

// A probe-like target: flash at the runner's load address, everything else accepted.
struct FakeProbe {
  testing::FakeTargetMemory flash{0x10000000, 0x80000};
  bool fail_erase = false;
  bool corrupt_writes = false;  // flash keeps a wrong byte
  bool corrupted = false;
  bool crc = true;               // offers qCRC
  std::vector<std::string> log;  // flash operations and register writes
  FakeGdbAction Handle(const std::string& p) {
    if (auto x = testing::ServeXfer(p, "features", "target.xml", kTargetXml)) return {{*x}};
    if (auto x = testing::ServeXfer(p, "memory-map", "", kMemoryMap)) return {{*x}};
    if (p == "?") return {{"S05"}};
    if (p == "vCont?") return {{"vCont;c;C;s;S"}};
    if (p == "vCont;c") return {};
    if (p == "\x03") return {{"S02"}};
    if (p.starts_with("vFlashErase:")) {
      log.push_back(p);
      if (fail_erase) return {{"E03"}};
      // Erased flash reads 0xff: an erase after a write would show.
      const auto comma = p.find(',');
      const std::uint64_t addr = std::stoull(p.substr(12, comma - 12), nullptr, 16);
      const std::uint64_t len = std::stoull(p.substr(comma + 1), nullptr, 16);
      if (addr % 0x1000 != 0 || len % 0x1000 != 0) return {{"E01"}};  // not block-aligned
      std::fill_n(flash.bytes.begin() + static_cast<std::ptrdiff_t>(addr - flash.base), len, 0xff);
      return {{"OK"}};
    }
    if (p.starts_with("vFlashWrite:")) {
      log.push_back("vFlashWrite");
      std::string reply;
      flash.Apply(p, reply);
      // Once: a flip on every write would undo itself after an even number of writes.
      if (corrupt_writes && !corrupted) {
        flash.bytes[0x10] ^= 0x01;
        corrupted = true;
      }
      return {{reply}};
    }
    if (p.starts_with("qCRC:")) {
      if (!crc) return {{""}};
      const auto comma = p.find(',');
      const std::uint64_t addr = std::stoull(p.substr(5, comma - 5), nullptr, 16);
      const std::uint64_t len = std::stoull(p.substr(comma + 1), nullptr, 16);
      char out[16];
      std::snprintf(out, sizeof(out), "C%08x",
                    GdbCrc32(std::span(flash.bytes).subspan(addr - flash.base, len)));
      return {{out}};
    }
    if (p == "vFlashDone") {
      log.push_back(p);
      return {{"OK"}};
    }
    if (p[0] == 'P') {
      log.push_back(p);
      return {{"OK"}};
    }
    if (p[0] == 'X') return {{"OK"}};
    return {{""}};
  }
};

class GdbBoardFlashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (An547Elf().empty()) GTEST_SKIP() << "the an547 runner ELF is not built";
    auto dir = TempDir::Create("gdb-board-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
    listener_ = std::make_unique<UnixListener>(dir_->path() / "uart.sock");
  }
  // A board whose "GDB server" is a process that only stays alive; the fake serves the port.
  std::unique_ptr<GdbBoard> BoardFor(FakeGdbServer& server) {
    GdbBoardOptions o;
    o.server_command = "sleep 600";
    o.port = server.port();
    o.link = "unix:" + (dir_->path() / "uart.sock").string();
    o.firmware = An547Elf();
    o.workload_addr = 0x60000000;
    o.state_dir = dir_->path() / "state";
    return std::make_unique<GdbBoard>(testing::Info("h7-0", "nucleo-h743zi"), o, RealClock());
  }
  RunSpec Spec() {
    RunSpec spec;
    spec.workload = {1, 2, 3, 4};
    return spec;
  }
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<UnixListener> listener_;
};

TEST_F(GdbBoardFlashTest, FlashesOnlyWhenTheRunnerChangedAndStartsAtTheResetVector) {
  auto bytes = ReadFile(An547Elf());
  ASSERT_TRUE(bytes.ok());
  auto segs = ElfLoadSegments(
      std::span(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()));
  ASSERT_TRUE(segs.ok());
  const auto& vectors = (*segs)[0].data;
  auto word = [&](std::size_t i) {
    return static_cast<std::uint32_t>(vectors[i]) |
           static_cast<std::uint32_t>(vectors[i + 1]) << 8 |
           static_cast<std::uint32_t>(vectors[i + 2]) << 16 |
           static_cast<std::uint32_t>(vectors[i + 3]) << 24;
  };
  const std::uint32_t sp = word(0);
  const std::uint32_t pc = word(4) & ~1u;

  FakeProbe first;
  {
    FakeGdbServer server([&](const std::string& p) { return first.Handle(p); });
    auto board = BoardFor(server);
    auto run = board->Start(Spec());
    ASSERT_TRUE(run.ok()) << run.error().message;
    run->reset();  // halts over GDB and stops the server process
    EXPECT_EQ(board->FlashedSha256().size(), 64u);
    EXPECT_THAT(server.packets(), ::testing::Contains(std::string("\x03")));
  }
  ASSERT_GE(first.log.size(), 4u);
  // One erase of every block the segments touch (they share a block), then the writes.
  const auto& last = segs->back();
  char erase[64];
  std::snprintf(erase, sizeof(erase), "vFlashErase:10000000,%x",
                static_cast<unsigned>((last.paddr - 0x10000000 + last.data.size() + 0xfff) /
                                      0x1000 * 0x1000));
  EXPECT_EQ(first.log[0], erase);
  EXPECT_EQ(std::count_if(first.log.begin(), first.log.end(),
                          [](const std::string& l) { return l.starts_with("vFlashErase:"); }),
            1);
  EXPECT_THAT(first.log, ::testing::Contains(std::string("vFlashDone")));
  for (const auto& s : *segs) {
    EXPECT_TRUE(std::equal(s.data.begin(), s.data.end(),
                           first.flash.bytes.begin() + (s.paddr - 0x10000000)))
        << "segment at " << s.paddr;
  }
  char sp_p[32], pc_p[32];
  auto le = [](std::uint32_t v, char* out) {
    std::snprintf(out, 32, "%02x%02x%02x%02x", v & 255, v >> 8 & 255, v >> 16 & 255, v >> 24);
  };
  le(sp, sp_p);
  le(pc, pc_p);
  EXPECT_THAT(first.log, ::testing::Contains("Pd=" + std::string(sp_p)));
  EXPECT_THAT(first.log, ::testing::Contains("Pf=" + std::string(pc_p)));
  EXPECT_THAT(first.log, ::testing::Contains(std::string("P19=00000001")));

  // Same runner again, the board's flash as the first run left it: no flash operation at all.
  FakeProbe second;
  second.flash = first.flash;
  {
    FakeGdbServer server([&](const std::string& p) { return second.Handle(p); });
    auto board = BoardFor(server);
    auto run = board->Start(Spec());
    ASSERT_TRUE(run.ok()) << run.error().message;
  }
  for (const auto& l : second.log) EXPECT_FALSE(l.starts_with("vFlash")) << l;
}

// Kill halts the core over GDB (up to 2 s on a slow probe); the run's diagnostics are read
// meanwhile without waiting for it.
TEST_F(GdbBoardFlashTest, DiagnosticsDoNotWaitOnASlowHalt) {
  FakeProbe probe;
  std::promise<void> halt_asked;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  bool asked = false;
  FakeGdbServer server([&](const std::string& p) {
    if (p == "\x03" && !asked) {
      asked = true;
      halt_asked.set_value();
      released.wait_for(std::chrono::seconds(10));  // the probe is slow to halt
    }
    return probe.Handle(p);
  });
  auto board = BoardFor(server);
  auto run = board->Start(Spec());
  ASSERT_TRUE(run.ok()) << run.error().message;
  std::thread killer([&] { (*run)->Kill(); });
  ASSERT_EQ(halt_asked.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto diagnostics = std::async(std::launch::async, [&] { return (*run)->Diagnostics(); });
  // Without the fix this waits for the halt's 2 s timeout.
  EXPECT_EQ(diagnostics.wait_for(std::chrono::milliseconds(1500)), std::future_status::ready)
      << "Diagnostics waited on the halt";
  release.set_value();
  killer.join();
  diagnostics.wait();
}

TEST_F(GdbBoardFlashTest, AFlashSomeoneElseReprogrammedIsProgrammedAgain) {
  FakeProbe first;
  {
    FakeGdbServer server([&](const std::string& p) { return first.Handle(p); });
    ASSERT_TRUE(BoardFor(server)->Start(Spec()).ok());
  }
  FakeProbe changed;
  changed.flash = first.flash;
  changed.flash.bytes[0x100] ^= 0xff;  // another tool wrote the board since
  {
    FakeGdbServer server([&](const std::string& p) { return changed.Handle(p); });
    auto board = BoardFor(server);
    auto run = board->Start(Spec());
    ASSERT_TRUE(run.ok()) << run.error().message;
  }
  EXPECT_THAT(changed.log, ::testing::Contains(std::string("vFlashDone")));
  EXPECT_TRUE(
      std::equal(first.flash.bytes.begin(), first.flash.bytes.end(), changed.flash.bytes.begin()));
  // Without qCRC the state file is all there is: trusted.
  FakeProbe blind;
  blind.crc = false;
  blind.flash.bytes.assign(blind.flash.bytes.size(), 0);
  {
    FakeGdbServer server([&](const std::string& p) { return blind.Handle(p); });
    ASSERT_TRUE(BoardFor(server)->Start(Spec()).ok());
  }
  for (const auto& l : blind.log) EXPECT_FALSE(l.starts_with("vFlash")) << l;
}

TEST_F(GdbBoardFlashTest, AFlashThatDoesNotVerifyIsABoardError) {
  FakeProbe probe;
  probe.corrupt_writes = true;
  FakeGdbServer server([&](const std::string& p) { return probe.Handle(p); });
  auto board = BoardFor(server);
  auto run = board->Start(Spec());
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(run.error().message, HasSubstr("verifying the flash"));
  EXPECT_EQ(board->FlashedSha256(), "");
}

TEST_F(GdbBoardFlashTest, AFailedEraseIsABoardErrorAndForgetsTheFlashedHash) {
  FakeProbe probe;
  probe.fail_erase = true;
  FakeGdbServer server([&](const std::string& p) { return probe.Handle(p); });
  auto board = BoardFor(server);
  auto run = board->Start(Spec());
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(run.error().message, HasSubstr("erasing flash"));
  EXPECT_THAT(run.error().message, HasSubstr("E03"));
  EXPECT_EQ(board->FlashedSha256(), "");
}

TEST_F(GdbBoardFlashTest, AServerThatDiesAtOnceIsABoardErrorWithItsStatus) {
  GdbBoardOptions o;
  o.server_command = "sh -c 'echo probe not found >&2; exit 3'";
  o.link = "unix";
  o.firmware = An547Elf();
  o.workload_addr = 0x60000000;
  o.state_dir = dir_->path() / "state";
  GdbBoard board(testing::Info("h7-0", "nucleo-h743zi"), o, RealClock());
  auto run = board.Start(Spec());
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(run.error().message, HasSubstr("exit status 3"));
  EXPECT_THAT(run.error().message, HasSubstr("probe not found"));
}

// ---- the an547 runner through QEMU's gdbstub ----

class GdbBoardQemuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (An547Elf().empty()) GTEST_SKIP() << "the an547 runner ELF is not built";
    if (!HaveQemu()) GTEST_SKIP() << "qemu-system-arm is not installed";
  }
  // Default: as an agent runs it, the GDB connection on a unix socket and QEMU in the job sandbox.
  // `tcp`: GDB on a TCP port, which needs the network, so no sandbox.
  GdbBoard Board(bool tcp = false, bool rtt = false, bool sandbox = true) {
    GdbBoardOptions o;
    // The UART on a unix socket exactly as QemuBoard has it; no -kernel: GDB loads everything.
    // RTT: the Cortex-M7 an500 port's RTT build (the an547 port has only its UART).
    o.server_command = std::string("qemu-system-arm -M ") + (rtt ? "mps2-an500" : "mps3-an547") +
                       " -S -icount shift=5,sleep=off -display none -monitor none ";
    o.server_command += rtt ? "-serial null "
                            : "-chardev socket,id=link,path={link},server=on,wait=on "
                              "-serial chardev:link ";
    if (rtt) o.link = "rtt";
    if (!tcp) {
      o.gdb_link = "unix";
      o.server_command += "-chardev socket,id=gdb,path={gdb},server=on,wait=off -gdb chardev:gdb";
    } else {
      o.server_command += "-gdb tcp:127.0.0.1:{port}";
    }
    if (!rtt) o.link = "unix";
    o.firmware = rtt ? An500RttElf() : An547Elf();
    o.workload_addr = 0x60000000;
    auto info = testing::Info("an547-gdb-0", "corstone300-qemu");
    info.emulated = true;
    return GdbBoard(info, o, RealClock(),
                    sandbox && !tcp ? testing::DefaultSandbox() : Sandbox::None());
  }
};

void ExpectSameResults(const testing::RealRun& via_gdb, const testing::RealRun& direct) {
  ASSERT_TRUE(via_gdb.listener.hello.has_value());
  ASSERT_TRUE(direct.listener.hello.has_value());
  EXPECT_EQ(via_gdb.listener.hello->port, direct.listener.hello->port);
  EXPECT_EQ(via_gdb.listener.hello->cpu, direct.listener.hello->cpu);
  EXPECT_EQ(via_gdb.result.stats.bad_frames, 0u);
  ASSERT_EQ(via_gdb.listener.cases.size(), direct.listener.cases.size());
  for (std::size_t i = 0; i < direct.listener.cases.size(); ++i) {
    EXPECT_TRUE(via_gdb.listener.cases[i].checksum_ok) << "case " << i;
    EXPECT_EQ(via_gdb.listener.cases[i].case_index, direct.listener.cases[i].case_index);
  }
  ASSERT_EQ(via_gdb.listener.samples.size(), direct.listener.samples.size());
  for (std::size_t i = 0; i < direct.listener.samples.size(); ++i) {
    EXPECT_EQ(via_gdb.listener.samples[i].iteration, direct.listener.samples[i].iteration);
    EXPECT_EQ(via_gdb.listener.samples[i].timer, direct.listener.samples[i].timer)
        << "sample " << i;
  }
}

// The direct QEMU board with the an500's UART build: what the RTT build must equal.
QemuBoard DirectAn500() {
  QemuOptions qo;
  qo.machine = "mps2-an500";
  qo.firmware = An500Elf();
  return QemuBoard(testing::Info("an500-0", "cm7-qemu"), qo, RealClock(),
                   testing::DefaultSandbox());
}

TEST_F(GdbBoardQemuTest, OverRttGivesTheSameCountsAndChecksumsAsTheDirectQemuBoard) {
  if (An500Elf().empty() || An500RttElf().empty()) GTEST_SKIP() << "no an500 ELFs";
  auto gdb_board = Board(/*tcp=*/false, /*rtt=*/true);
  auto via_rtt = testing::RunOnBoard(gdb_board, 5);
  ASSERT_EQ(via_rtt.result.outcome, RunOutcome::kSucceeded)
      << via_rtt.result.message << " (HELLO " << via_rtt.listener.hello.has_value() << ", "
      << via_rtt.listener.samples.size() << " samples)";
  auto qemu_board = DirectAn500();
  auto direct = testing::RunOnBoard(qemu_board, 5);
  ASSERT_EQ(direct.result.outcome, RunOutcome::kSucceeded) << direct.result.message;
  ASSERT_EQ(direct.listener.samples.size(), 15u);
  EXPECT_EQ(via_rtt.listener.hello->cpu, "cortex-m7");
  ExpectSameResults(via_rtt, direct);
  std::cout << "an500 over RTT through QEMU's gdbstub: Start " << via_rtt.start.count()
            << " ms, HELLO at +" << via_rtt.result.stats.to_hello.count() << " ms, DONE at +"
            << via_rtt.result.stats.to_done.count() << " ms, wall " << via_rtt.wall.count()
            << " ms (direct QEMU board: wall " << direct.wall.count() << " ms)\n";
}

// 3 cases x 120 iterations: far more than the 4 KiB up buffer holds, so the runner stops on a
// full buffer mid-run; the counts still equal the direct board's.
TEST_F(GdbBoardQemuTest, OverRttAFullBufferFlushesWithoutChangingTheCounts) {
  if (An500Elf().empty() || An500RttElf().empty()) GTEST_SKIP() << "no an500 ELFs";
  auto gdb_board = Board(/*tcp=*/false, /*rtt=*/true);
  auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, testing::ConvCases(), testing::kSeed);
  ASSERT_TRUE(workload.ok());
  RunSpec spec;
  spec.workload = *workload;
  auto proc = gdb_board.Start(spec);
  ASSERT_TRUE(proc.ok()) << proc.error().message;
  SessionConfig c;
  c.op = MCULAB_OP_CONV2D_S8;
  c.cases = testing::ConvCases();
  c.seed = testing::kSeed;
  c.iterations = 120;
  c.warmup = 1;
  c.workload_len = static_cast<std::uint32_t>(spec.workload.size());
  c.run_timeout = std::chrono::seconds(120);
  c.log_prefix = "an500-gdb-rtt";
  testing::CollectingListener listener;
  CancelToken none;
  const auto t0 = std::chrono::steady_clock::now();
  auto result = RunSession(**proc, RealClock(), c, listener, none);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  ASSERT_EQ(result.outcome, RunOutcome::kSucceeded) << result.message;
  (*proc)->Kill();
  const std::string diag = (*proc)->Diagnostics();
  EXPECT_THAT(diag, HasSubstr("RTT link: "));
  ASSERT_EQ(listener.samples.size(), 360u);
  for (const auto& cs : listener.cases) EXPECT_TRUE(cs.checksum_ok) << cs.case_index;

  auto qemu_board = DirectAn500();
  auto direct = testing::RunOnBoard(qemu_board, 120, std::chrono::seconds(120));
  ASSERT_EQ(direct.result.outcome, RunOutcome::kSucceeded) << direct.result.message;
  ASSERT_EQ(direct.listener.samples.size(), 360u);
  for (std::size_t i = 0; i < 360; ++i) {
    EXPECT_EQ(listener.samples[i].timer, direct.listener.samples[i].timer) << "sample " << i;
  }
  std::cout << "an500 over RTT, 360 samples: session " << ms.count() << " ms; " << diag
            << " (direct QEMU board: " << direct.wall.count() << " ms)\n";
}

TEST_F(GdbBoardQemuTest, GivesTheSameCountsAndChecksumsAsTheDirectQemuBoard) {
  auto gdb_board = Board();
  auto via_gdb = testing::RunOnBoard(gdb_board, 5);
  ASSERT_EQ(via_gdb.result.outcome, RunOutcome::kSucceeded) << via_gdb.result.message;

  QemuOptions qo;
  qo.firmware = An547Elf();
  QemuBoard qemu_board(testing::Info("an547-0", "corstone300-qemu"), qo, RealClock(),
                       testing::DefaultSandbox());
  auto direct = testing::RunOnBoard(qemu_board, 5);
  ASSERT_EQ(direct.result.outcome, RunOutcome::kSucceeded) << direct.result.message;

  ASSERT_TRUE(via_gdb.listener.hello.has_value());
  EXPECT_EQ(via_gdb.listener.hello->port, "an547");
  EXPECT_EQ(via_gdb.listener.hello->cpu, "cortex-m55");
  EXPECT_EQ(via_gdb.listener.hello->workload_addr, 0x60000000u);
  EXPECT_EQ(via_gdb.result.stats.bad_frames, 0u);
  EXPECT_EQ(via_gdb.provenance.firmware_sha256, direct.provenance.firmware_sha256);
  EXPECT_THAT(via_gdb.provenance.note, HasSubstr("emulated"));

  ASSERT_EQ(via_gdb.listener.cases.size(), direct.listener.cases.size());
  ASSERT_EQ(via_gdb.listener.cases.size(), 3u);
  for (std::size_t i = 0; i < direct.listener.cases.size(); ++i) {
    const auto& a = via_gdb.listener.cases[i];
    const auto& b = direct.listener.cases[i];
    EXPECT_TRUE(a.checksum_ok) << "case " << i;
    EXPECT_EQ(a.checksum_ok, b.checksum_ok) << "case " << i;
    EXPECT_EQ(a.case_index, b.case_index);
  }
  ASSERT_EQ(via_gdb.listener.samples.size(), direct.listener.samples.size());
  ASSERT_EQ(via_gdb.listener.samples.size(), 15u);
  for (std::size_t i = 0; i < direct.listener.samples.size(); ++i) {
    EXPECT_EQ(via_gdb.listener.samples[i].iteration, direct.listener.samples[i].iteration);
    // -icount makes time a function of the instructions executed: the same program, the same count.
    EXPECT_EQ(via_gdb.listener.samples[i].timer, direct.listener.samples[i].timer)
        << "sample " << i;
  }
  std::cout << "an547 via QEMU's gdbstub: board.Start (spawn, connect, load over GDB) "
            << via_gdb.start.count() << " ms, HELLO at +" << via_gdb.result.stats.to_hello.count()
            << " ms, wall " << via_gdb.wall.count() << " ms; direct QEMU board: Start "
            << direct.start.count() << " ms, HELLO at +" << direct.result.stats.to_hello.count()
            << " ms, wall " << direct.wall.count() << " ms\n";
}

TEST_F(GdbBoardQemuTest, RunsWithTheGdbConnectionOnATcpPortOutsideTheSandbox) {
  auto board = Board(/*tcp=*/true);
  auto run = testing::RunOnBoard(board, 3);
  ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  EXPECT_EQ(run.listener.samples.size(), 9u);
  for (const auto& c : run.listener.cases) EXPECT_TRUE(c.checksum_ok) << c.case_index;
}

TEST_F(GdbBoardQemuTest, AServerThatDiesMidRunIsAnInfrastructureFailure) {
  auto dir = TempDir::Create("gdb-board-kill-");
  ASSERT_TRUE(dir.ok());
  const auto pid_file = (*dir)->path() / "server.pid";
  GdbBoardOptions o;
  // The server writes its pid where the test can find it, then becomes QEMU.
  o.server_command =
      "sh -c 'echo $$ > " + pid_file.string() +
      "; exec qemu-system-arm -M mps3-an547 -S -icount shift=5,sleep=off -display none "
      "-monitor none -chardev socket,id=link,path={link},server=on,wait=on -serial chardev:link "
      "-gdb tcp:127.0.0.1:{port}'";
  o.firmware = An547Elf();
  o.workload_addr = 0x60000000;
  GdbBoard board(testing::Info("an547-gdb-0", "corstone300-qemu"), o, RealClock());
  bool killed = false;
  auto run =
      testing::RunOnBoard(board, 200, std::chrono::seconds(60), nullptr, [&](const SampleMsg&) {
        if (killed) return;
        auto pid = ReadFile(pid_file);
        ASSERT_TRUE(pid.ok());
        ::kill(std::stoi(*pid), SIGKILL);
        killed = true;
      });
  ASSERT_TRUE(killed);
  EXPECT_EQ(run.result.outcome, RunOutcome::kInfraFailed) << run.result.message;
  EXPECT_THAT(run.result.message, HasSubstr("killed by signal 9")) << run.result.message;
}

TEST_F(GdbBoardQemuTest, ASandboxedQemuServerNeedsUnixSockets) {
  GdbBoardOptions o;
  o.server_command = "qemu-system-arm -M mps3-an547 -S -gdb tcp:127.0.0.1:{port}";
  o.firmware = An547Elf();
  o.workload_addr = 0x60000000;
  GdbBoard board(testing::Info("an547-gdb-0", "corstone300-qemu"), o, RealClock(),
                 testing::DefaultSandbox());
  RunSpec spec;
  spec.workload = {1};
  auto run = board.Start(spec);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(run.error().message, HasSubstr("gdb_link = \"unix\""));
}

TEST_F(GdbBoardQemuTest, ACustomRunnerNeedsTheConfigsPermission) {
  auto board = Board();
  RunSpec spec;
  spec.workload = {1};
  spec.firmware = An547Elf();
  auto run = board.Start(spec);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(run.error().message, HasSubstr("allow_custom_runners"));
}

TEST_F(GdbBoardQemuTest, ACancelledRttRunEnds) {
  if (An500RttElf().empty()) GTEST_SKIP() << "no an500-rtt ELF";
  auto board = Board(/*tcp=*/false, /*rtt=*/true);
  CancelToken cancel;
  auto run = testing::RunOnBoard(board, 2000, std::chrono::seconds(60), &cancel,
                                 [&](const SampleMsg&) { cancel.Cancel(CancelReason::kByServer); });
  EXPECT_EQ(run.result.outcome, RunOutcome::kCancelled) << run.result.message;
  EXPECT_LT(run.listener.samples.size(), 6000u);
}

TEST_F(GdbBoardQemuTest, ACancelledRunHaltsAndStopsTheServer) {
  auto board = Board();
  CancelToken cancel;
  auto run = testing::RunOnBoard(board, 200, std::chrono::seconds(60), &cancel,
                                 [&](const SampleMsg&) { cancel.Cancel(CancelReason::kByServer); });
  EXPECT_EQ(run.result.outcome, RunOutcome::kCancelled) << run.result.message;
}

}  // namespace
}  // namespace mculab::agent
