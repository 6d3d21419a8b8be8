#include "agent/boards/pyocd_board.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

#include "agent/io/fake_probe_lister.h"
#include "agent/io/fd.h"
#include "agent/io/temp_dir.h"
#include "test_workloads.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Records every command; answers with the next scripted result (default: success). When a command
// names a workload file, keeps a copy of it as it was at that moment.
class FakeProcessRunner final : public ProcessRunner {
 public:
  Result<CommandResult> Run(const std::vector<std::string>& argv,
                            std::chrono::milliseconds) override {
    calls.push_back(argv);
    for (const auto& a : argv) {
      auto pos = a.find("workload.bin");
      if (pos != std::string::npos) {
        auto file = a.substr(a.rfind(' ') + 1);
        if (auto bytes = ReadFile(file)) workload_seen = *bytes;
      }
    }
    if (!scripted.empty()) {
      auto r = scripted.front();
      scripted.erase(scripted.begin());
      return r;
    }
    return CommandResult{};
  }
  std::vector<std::vector<std::string>> calls;
  std::vector<CommandResult> scripted;
  std::string workload_seen;
};

// A pseudo-terminal standing in for the probe's serial port.
struct Pty {
  UniqueFd master;
  std::string slave_path;
  Pty() {
    master.Reset(::posix_openpt(O_RDWR | O_NOCTTY));
    EXPECT_TRUE(master.valid());
    EXPECT_EQ(::grantpt(master.get()), 0);
    EXPECT_EQ(::unlockpt(master.get()), 0);
    slave_path = ::ptsname(master.get());
  }
};

ProbeInfo Probe(const std::string& serial) {
  ProbeInfo p;
  p.vendor_id = 0x0483;
  p.product_id = 0x374e;
  p.product = "STLINK-V3";
  p.serial = serial;
  return p;
}

class PyocdBoardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-pyocd-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
    ASSERT_TRUE(WriteFile(dir_->path() / "h7.elf", "firmware v1").ok());
    options_.target = "stm32h743zitx";
    options_.serial = "SER1";
    options_.firmware = dir_->path() / "h7.elf";
    options_.console = pty_.slave_path;
    options_.workload_addr = 0x24040000;
    options_.state_dir = dir_->path() / "boards";
    probes_.Set({Probe("OTHER"), Probe("SER1")});
  }
  PyocdBoard Board() {
    return PyocdBoard(testing::Info("h743", "nucleo-h743"), options_, probes_, runner_);
  }
  RunSpec Spec() {
    RunSpec s;
    s.workload = {'M', 'C', 'L', 'W', 1, 2, 3};
    return s;
  }
  std::vector<std::string> Flash() const {
    return {
        "pyocd", "flash", "-t", "stm32h743zitx", "-u", "SER1", (dir_->path() / "h7.elf").string()};
  }

  Pty pty_;
  std::unique_ptr<TempDir> dir_;
  PyocdOptions options_;
  FakeProbeLister probes_;
  FakeProcessRunner runner_;
};

TEST_F(PyocdBoardTest, FlashesThenLoadsTheWorkloadAndStartsTheCore) {
  auto board = Board();
  auto proc = board.Start(Spec());
  ASSERT_TRUE(proc.ok()) << proc.error().message;
  ASSERT_EQ(runner_.calls.size(), 2u);
  EXPECT_EQ(runner_.calls[0], Flash());
  const auto& load = runner_.calls[1];
  ASSERT_EQ(load.size(), 12u);
  EXPECT_THAT(std::vector<std::string>(load.begin(), load.begin() + 6),
              ElementsAre("pyocd", "cmd", "-t", "stm32h743zitx", "-u", "SER1"));
  EXPECT_EQ(load[6], "-c");
  EXPECT_EQ(load[7], "reset halt");
  EXPECT_THAT(load[9], ::testing::StartsWith("loadmem 0x24040000 /"));
  EXPECT_THAT(load[9], ::testing::EndsWith("/workload.bin"));
  EXPECT_EQ(load[11], "go");
  EXPECT_EQ(runner_.workload_seen, std::string("MCLW\x01\x02\x03"));
  EXPECT_EQ((*proc)->provenance().board_serial, "SER1");
  EXPECT_EQ((*proc)->provenance().workload_addr, 0x24040000u);
  EXPECT_EQ(board.FlashedSha256(), (*proc)->provenance().firmware_sha256);
}

TEST_F(PyocdBoardTest, SkipsFlashingWhenTheFirmwareHashIsUnchanged) {
  auto board = Board();
  ASSERT_TRUE(board.Start(Spec()).ok());
  runner_.calls.clear();
  ASSERT_TRUE(board.Start(Spec()).ok());
  ASSERT_EQ(runner_.calls.size(), 1u);
  EXPECT_EQ(runner_.calls[0][1], "cmd");
  // Remembered on disk: a new agent process does not flash either.
  auto again = Board();
  runner_.calls.clear();
  ASSERT_TRUE(again.Start(Spec()).ok());
  ASSERT_EQ(runner_.calls.size(), 1u);
}

TEST_F(PyocdBoardTest, FlashesAgainWhenTheFirmwareChanges) {
  auto board = Board();
  ASSERT_TRUE(board.Start(Spec()).ok());
  const auto first = board.FlashedSha256();
  ASSERT_TRUE(WriteFile(options_.firmware, "firmware v2, longer").ok());
  runner_.calls.clear();
  ASSERT_TRUE(board.Start(Spec()).ok());
  ASSERT_EQ(runner_.calls.size(), 2u);
  EXPECT_EQ(runner_.calls[0], Flash());
  EXPECT_NE(board.FlashedSha256(), first);
}

TEST_F(PyocdBoardTest, ProbeNotFoundNamesTheSerialAndTheProbesPresent) {
  probes_.Set({Probe("OTHER")});
  auto proc = Board().Start(Spec());
  ASSERT_FALSE(proc.ok());
  EXPECT_EQ(proc.error().message,
            "probe not found: serial SER1; probes present: 0483:374e STLINK-V3 (serial OTHER)");
  EXPECT_TRUE(runner_.calls.empty());
  probes_.Set({});
  EXPECT_THAT(Board().Start(Spec()).error().message, HasSubstr("probes present: none"));
}

TEST_F(PyocdBoardTest, FailedFlashIsReportedAndLeavesNoFlashedHash) {
  runner_.scripted.push_back(CommandResult{ExitStatus{true, 1, 0}, "0000 E No ACK received\n"});
  auto board = Board();
  auto proc = board.Start(Spec());
  ASSERT_FALSE(proc.ok());
  EXPECT_THAT(proc.error().message, HasSubstr("flashing failed"));
  EXPECT_THAT(proc.error().message, HasSubstr("exit status 1"));
  EXPECT_THAT(proc.error().message, HasSubstr("No ACK received"));
  EXPECT_EQ(board.FlashedSha256(), "");
}

TEST_F(PyocdBoardTest, ConsoleCarriesTheRunnerLinkAndKillHaltsTheCore) {
  auto proc = Board().Start(Spec());
  ASSERT_TRUE(proc.ok()) << proc.error().message;
  const std::uint8_t from_board[] = {0x05, 0x01, 0x02, 0x03, 0x04, 0x00};
  ASSERT_TRUE(WriteAll(pty_.master.get(), from_board, std::chrono::seconds(1)).ok());
  std::uint8_t buf[16];
  auto n = (*proc)->Read(buf, std::chrono::seconds(5));
  ASSERT_TRUE(n.ok());
  ASSERT_EQ(*n, sizeof(from_board));
  EXPECT_EQ(std::memcmp(buf, from_board, sizeof(from_board)), 0);
  const std::uint8_t to_board[] = {0x02, 0x83, 0x00};
  ASSERT_TRUE((*proc)->Write(to_board).ok());
  auto m = ReadSome(pty_.master.get(), buf, std::chrono::seconds(5));
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(*m, sizeof(to_board));
  EXPECT_EQ(std::memcmp(buf, to_board, sizeof(to_board)), 0);

  runner_.calls.clear();
  (*proc)->Kill();
  ASSERT_EQ(runner_.calls.size(), 1u);
  EXPECT_THAT(runner_.calls[0],
              ElementsAre("pyocd", "cmd", "-t", "stm32h743zitx", "-u", "SER1", "-c", "halt"));
}

TEST_F(PyocdBoardTest, ConsoleIsFoundByTheProbeSerialUnderById) {
  const auto by_id = dir_->path() / "by-id";
  std::filesystem::create_directories(by_id);
  std::filesystem::create_symlink(pty_.slave_path, by_id / "usb-ARM_DAPLink_CMSIS-DAP_SER1-if01");
  std::filesystem::create_symlink("/dev/null", by_id / "usb-FTDI_FT232R_A50285BI-if00-port0");
  options_.console.clear();
  options_.by_id_dir = by_id;
  ASSERT_TRUE(Board().Start(Spec()).ok());

  options_.serial = "SER9";
  probes_.Set({Probe("SER9")});
  auto missing = Board().Start(Spec());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("no serial port for probe serial SER9"));
  EXPECT_THAT(missing.error().message, HasSubstr("usb-FTDI_FT232R_A50285BI-if00-port0"));
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
