#include "agent/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kGood = R"(
[agent]
name = "lab-host-1"
server = "10.0.0.5:7420"
spool_dir = "spool"
heartbeat_ms = 500

[[board]]
name = "an547-0"
kind = "corstone300-qemu"
backend = "qemu"
tags = { cpu = "cortex-m55" }
firmware = "fw/runner.elf"
icount_shift = 6
timeout_s = 60
ram_bytes = 4194304

[[board]]
name = "host-0"
kind = "host"
backend = "host"
runner = "/opt/mculab/bin/mculab-runner-host"

[[board]]
name = "h743"
kind = "nucleo-h743"
backend = "pyocd"
firmware = "/fw/h7.elf"
serial = "0669FF3838"
target = "stm32h743zitx"
workload_addr = "0x24040000"
baud = 921600

[[board]]
name = "fake-0"
kind = "fake"
backend = "fake"
fault = "crash"
fault_case = 2
)";

Result<AgentConfig> Parse(const std::string& text) {
  return ParseAgentConfig(text, "agent.toml", "/etc/mculab");
}

TEST(AgentConfig, ParsesEveryBackendWithDefaultsAndRelativePaths) {
  auto cfg = Parse(kGood);
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->name, "lab-host-1");
  EXPECT_EQ(cfg->server, "10.0.0.5:7420");
  EXPECT_EQ(cfg->spool_dir, "/etc/mculab/spool");
  EXPECT_EQ(cfg->heartbeat_ms, 500u);
  ASSERT_EQ(cfg->boards.size(), 4u);
  const auto& q = cfg->boards[0];
  EXPECT_EQ(q.backend, "qemu");
  EXPECT_EQ(q.tags.at("cpu"), "cortex-m55");
  EXPECT_EQ(q.firmware, "/etc/mculab/fw/runner.elf");
  EXPECT_EQ(q.qemu, "qemu-system-arm");
  EXPECT_EQ(q.icount_shift, 6);
  EXPECT_EQ(q.timeout_s, 60u);
  EXPECT_EQ(q.ram_bytes, 4194304u);
  EXPECT_EQ(q.workload_addr, 0x60000000u);
  EXPECT_EQ(cfg->boards[1].runner, "/opt/mculab/bin/mculab-runner-host");
  EXPECT_EQ(cfg->boards[1].timeout_s, 300u);
  const auto& p = cfg->boards[2];
  EXPECT_EQ(p.serial, "0669FF3838");
  EXPECT_EQ(p.workload_addr, 0x24040000u);
  EXPECT_EQ(p.baud, 921600u);
  EXPECT_EQ(cfg->boards[3].fault, "crash");
  EXPECT_EQ(cfg->boards[3].fault_case, 2);
}

TEST(AgentConfig, AgentSectionIsOptional) {
  auto cfg = Parse("[[board]]\nname = \"f\"\nkind = \"fake\"\nbackend = \"fake\"\n");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->server, "127.0.0.1:7420");
  EXPECT_EQ(cfg->heartbeat_ms, 2000u);
  EXPECT_TRUE(cfg->name.empty());
}

TEST(AgentConfig, UnknownBackendNamesFileBoardKeyAndKnownBackends) {
  auto cfg = Parse("[[board]]\nname = \"b1\"\nkind = \"k\"\nbackend = \"jlink\"\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("agent.toml:4"));
  EXPECT_THAT(cfg.error().message, HasSubstr("board \"b1\""));
  EXPECT_THAT(cfg.error().message, HasSubstr("key backend"));
  EXPECT_THAT(cfg.error().message, HasSubstr("jlink"));
  EXPECT_THAT(cfg.error().message, HasSubstr("qemu, host, pyocd, gdb, fake"));
}

TEST(AgentConfig, WarmBoardsProbeRescanAndTheSerialLink) {
  auto cfg = Parse(
      "[agent]\nprobe_rescan_ms = 750\n"
      "[[board]]\nname = \"q\"\nkind = \"k\"\nbackend = \"qemu\"\nfirmware = \"/f.elf\"\n"
      "warm = true\n"
      "[[board]]\nname = \"g\"\nkind = \"k\"\nbackend = \"gdb\"\nfirmware = \"/f.elf\"\n"
      "workload_addr = 0x24040000\ngdb_server = \"openocd\"\nserial = \"066E\"\n"
      "link = \"serial\"\n");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->probe_rescan_ms, 750u);
  EXPECT_TRUE(cfg->boards[0].warm);
  EXPECT_EQ(cfg->boards[1].link, "serial");
  auto defaults = Parse(
      "[[board]]\nname = \"q\"\nkind = \"k\"\nbackend = \"qemu\"\n"
      "firmware = \"/f.elf\"\n");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->probe_rescan_ms, 3000u);
  EXPECT_FALSE(defaults->boards[0].warm);

  auto no_serial = Parse(
      "[[board]]\nname = \"g\"\nkind = \"k\"\nbackend = \"gdb\"\nfirmware = \"/f.elf\"\n"
      "workload_addr = 0x24040000\ngdb_server = \"openocd\"\nlink = \"serial\"\n");
  ASSERT_FALSE(no_serial.ok());
  EXPECT_THAT(no_serial.error().message, HasSubstr("key link"));
  EXPECT_THAT(no_serial.error().message, HasSubstr("set serial"));
  auto bad_warm = Parse(
      "[[board]]\nname = \"q\"\nkind = \"k\"\nbackend = \"qemu\"\n"
      "firmware = \"/f.elf\"\nwarm = 1\n");
  ASSERT_FALSE(bad_warm.ok());
  EXPECT_THAT(bad_warm.error().message, HasSubstr("key warm: must be true or false"));
  // warm is a qemu key only.
  auto warm_host = Parse(
      "[[board]]\nname = \"h\"\nkind = \"k\"\nbackend = \"host\"\n"
      "runner = \"/r\"\nwarm = true\n");
  EXPECT_FALSE(warm_host.ok());
}

// A gdb board whose GDB server is QEMU -icount says so, and its timer is reported in instructions;
// a gdb board that does not (silicon behind a probe) has no icount shift.
TEST(AgentConfig, AGdbBoardTakesTheIcountShiftOfTheQemuBehindIt) {
  auto cfg = Parse(
      "[[board]]\nname = \"g\"\nkind = \"k\"\nbackend = \"gdb\"\nfirmware = \"/f.elf\"\n"
      "workload_addr = 0x60000000\ngdb_server = \"qemu-system-arm\"\nemulated = true\n"
      "icount_shift = 3\n"
      "[[board]]\nname = \"s\"\nkind = \"k\"\nbackend = \"gdb\"\nfirmware = \"/f.elf\"\n"
      "workload_addr = 0x24040000\ngdb_server = \"openocd\"\n");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->boards[0].gdb_icount_shift, 3);
  EXPECT_EQ(cfg->boards[1].gdb_icount_shift, -1);
}

TEST(AgentConfig, MissingKeyNamesBoardAndKey) {
  auto cfg = Parse("[[board]]\nname = \"an547-0\"\nkind = \"k\"\nbackend = \"qemu\"\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("board \"an547-0\""));
  EXPECT_THAT(cfg.error().message, HasSubstr("key firmware: missing"));

  auto no_name = Parse("[[board]]\nkind = \"k\"\nbackend = \"fake\"\n");
  ASSERT_FALSE(no_name.ok());
  EXPECT_THAT(no_name.error().message, HasSubstr("board #1"));
  EXPECT_THAT(no_name.error().message, HasSubstr("key name: missing"));

  auto pyocd = Parse(
      "[[board]]\nname = \"p\"\nkind = \"k\"\nbackend = \"pyocd\"\nfirmware = \"/f.elf\"\n"
      "serial = \"123\"\ntarget = \"t\"\n");
  ASSERT_FALSE(pyocd.ok());
  EXPECT_THAT(pyocd.error().message, HasSubstr("key workload_addr: missing"));

  auto gdb = Parse(
      "[[board]]\nname = \"g\"\nkind = \"k\"\nbackend = \"gdb\"\nfirmware = \"/f.elf\"\n"
      "workload_addr = 0x60000000\n");
  ASSERT_FALSE(gdb.ok());
  EXPECT_THAT(gdb.error().message, HasSubstr("key gdb_server: missing"));
}

TEST(AgentConfig, GdbBoardKeys) {
  auto cfg = Parse(
      "[[board]]\nname = \"g\"\nkind = \"corstone300-qemu\"\nbackend = \"gdb\"\n"
      "firmware = \"/f.elf\"\nworkload_addr = \"0x60000000\"\nemulated = true\n"
      "gdb_server = \"qemu-system-arm -S -gdb tcp:127.0.0.1:{port}\"\ngdb_port = 3333\n"
      "link = \"tcp:127.0.0.1:4444\"\nvector_table = 0x10000000\n");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  const auto& b = cfg->boards[0];
  EXPECT_EQ(b.gdb_server, "qemu-system-arm -S -gdb tcp:127.0.0.1:{port}");
  EXPECT_EQ(b.gdb_port, 3333);
  EXPECT_EQ(b.link, "tcp:127.0.0.1:4444");
  EXPECT_EQ(b.vector_table, 0x10000000u);
  EXPECT_TRUE(b.emulated);
  auto wrong = Parse(
      "[[board]]\nname = \"q\"\nkind = \"k\"\nbackend = \"qemu\"\nfirmware = \"/f.elf\"\n"
      "gdb_server = \"x\"\n");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().message, HasSubstr("does not apply to backend qemu"));
  auto bad_link = Parse(
      "[[board]]\nname = \"g\"\nkind = \"k\"\nbackend = \"gdb\"\nfirmware = \"/f.elf\"\n"
      "workload_addr = 0\ngdb_server = \"x\"\nlink = \"uart\"\n");
  ASSERT_FALSE(bad_link.ok());
  EXPECT_THAT(bad_link.error().message, HasSubstr("key link"));
}

TEST(AgentConfig, BadTypeNamesKeyAndTypes) {
  auto cfg = Parse(
      "[[board]]\nname = \"q\"\nkind = \"k\"\nbackend = \"qemu\"\nfirmware = \"/f.elf\"\n"
      "icount_shift = \"five\"\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("agent.toml:6"));
  EXPECT_THAT(cfg.error().message, HasSubstr("board \"q\""));
  EXPECT_THAT(cfg.error().message, HasSubstr("key icount_shift: must be an integer"));

  auto tags = Parse("[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\ntags = 3\n");
  ASSERT_FALSE(tags.ok());
  EXPECT_THAT(tags.error().message, HasSubstr("key tags: must be a table"));

  auto hb = Parse(
      "[agent]\nheartbeat_ms = true\n[[board]]\nname = \"f\"\nkind = \"k\"\n"
      "backend = \"fake\"\n");
  ASSERT_FALSE(hb.ok());
  EXPECT_THAT(hb.error().message,
              HasSubstr("[agent]: key heartbeat_ms: must be an integer, got a boolean"));
}

TEST(AgentConfig, OutOfRangeValueIsRejected) {
  auto cfg = Parse(
      "[[board]]\nname = \"q\"\nkind = \"k\"\nbackend = \"qemu\"\nfirmware = \"/f.elf\"\n"
      "icount_shift = 42\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("key icount_shift: must be in 0..10, got 42"));
}

TEST(AgentConfig, KeyOfAnotherBackendOrTypoIsRejected) {
  auto other = Parse(
      "[[board]]\nname = \"q\"\nkind = \"k\"\nbackend = \"qemu\"\nfirmware = \"/f.elf\"\n"
      "serial = \"123\"\n");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.error().message, HasSubstr("key serial: does not apply to backend qemu"));

  auto typo = Parse("[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\ntimeout = 3\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.error().message,
              HasSubstr("key timeout: unknown key (did you mean \"timeout_s\"?"));

  // Nothing near: every known key, no guess.
  auto bogus = Parse("[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\nbogus_key = 3\n");
  ASSERT_FALSE(bogus.ok());
  EXPECT_THAT(bogus.error().message,
              HasSubstr("key bogus_key: unknown key (known for backend fake"));
  EXPECT_THAT(bogus.error().message, Not(HasSubstr("did you mean")));

  auto agent = Parse("[agent]\nheartbeat = 100\n");
  ASSERT_FALSE(agent.ok());
  EXPECT_THAT(agent.error().message, HasSubstr("did you mean \"heartbeat_ms\"?"));
}

TEST(AgentConfig, UnknownFaultListsTheKnownOnes) {
  auto cfg = Parse("[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\nfault = \"boom\"\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("key fault"));
  EXPECT_THAT(cfg.error().message, HasSubstr("crash, garbage"));
}

TEST(AgentConfig, DuplicateBoardNamesAreRejected) {
  auto cfg = Parse(
      "[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\n"
      "[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("\"f\" is used twice"));
}

TEST(AgentConfig, NoBoardsIsAnError) {
  auto cfg = Parse("[agent]\nname = \"x\"\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("no [[board]]"));
}

TEST(AgentConfig, SyntaxErrorNamesFileAndLine) {
  auto cfg = Parse("[agent]\nname = \n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("agent.toml:2"));
}

TEST(AgentConfig, LoadReportsMissingFirmwarePath) {
  auto dir = TempDir::Create("mculab-config-test-");
  ASSERT_TRUE(dir.ok());
  const auto path = (*dir)->path() / "agent.toml";
  ASSERT_TRUE(WriteFile(path,
                        "[[board]]\nname = \"an547-0\"\nkind = \"k\"\nbackend = \"qemu\"\n"
                        "firmware = \"missing.elf\"\n")
                  .ok());
  auto cfg = LoadAgentConfig(path);
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr(path.string()));
  EXPECT_THAT(cfg.error().message, HasSubstr("board \"an547-0\""));
  EXPECT_THAT(cfg.error().message, HasSubstr("key firmware"));
  EXPECT_THAT(cfg.error().message, HasSubstr(((*dir)->path() / "missing.elf").string()));

  ASSERT_TRUE(WriteFile((*dir)->path() / "missing.elf", "x").ok());
  EXPECT_TRUE(LoadAgentConfig(path).ok());
}

TEST(AgentConfig, TheShippedExampleParses) {
  const std::filesystem::path example =
      std::filesystem::path(MCULAB_SOURCE_DIR) / "deploy/agent.example.toml";
  auto text = ReadFile(example);
  ASSERT_TRUE(text.ok()) << text.error().message;
  auto cfg = ParseAgentConfig(*text, example.string(), example.parent_path());
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  ASSERT_EQ(cfg->boards.size(), 2u);
  EXPECT_EQ(cfg->boards[0].backend, "qemu");
  EXPECT_EQ(cfg->boards[1].backend, "host");
  // The commented-out boards parse too once uncommented.
  std::string all;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# [[board]]", 0) == 0 || line.rfind("# name", 0) == 0 ||
        line.rfind("# kind", 0) == 0 || line.rfind("# backend", 0) == 0 ||
        line.rfind("# tags", 0) == 0 || line.rfind("# firmware", 0) == 0 ||
        line.rfind("# serial", 0) == 0 || line.rfind("# target", 0) == 0 ||
        line.rfind("# workload_addr", 0) == 0 || line.rfind("# console", 0) == 0 ||
        line.rfind("# baud", 0) == 0 || line.rfind("# pyocd", 0) == 0 ||
        line.rfind("# timeout_s", 0) == 0 || line.rfind("# ram_bytes", 0) == 0 ||
        line.rfind("# fault", 0) == 0 || line.rfind("# gdb_server", 0) == 0 ||
        line.rfind("# link", 0) == 0 || line.rfind("# reset_command", 0) == 0 ||
        line.rfind("# emulated", 0) == 0 || line.rfind("# fvp", 0) == 0 ||
        line.rfind("# num_macs", 0) == 0 || line.rfind("# start_timeout_s", 0) == 0 ||
        line.rfind("# allow_custom_runners", 0) == 0) {
      line = line.substr(2);
    }
    all += line + "\n";
  }
  auto full = ParseAgentConfig(all, example.string(), example.parent_path());
  ASSERT_TRUE(full.ok()) << full.error().message;
  ASSERT_EQ(full->boards.size(), 6u);
  EXPECT_EQ(full->boards[2].backend, "pyocd");
  EXPECT_EQ(full->boards[3].backend, "gdb");
  EXPECT_EQ(full->boards[3].link, "/dev/ttyACM0");
  EXPECT_EQ(full->boards[3].reset_command, "reset halt");
  EXPECT_EQ(full->boards[3].workload_addr, 0x24040000u);
  EXPECT_EQ(full->boards[4].backend, "fvp");
  EXPECT_EQ(full->boards[4].num_macs, 128);
  EXPECT_EQ(full->boards[4].fvp_options.size(), 2u);
  EXPECT_EQ(full->boards[5].backend, "fake");
}

TEST(AgentConfig, HostBoardFallsBackToTheDefaultRunner) {
  auto cfg = ParseAgentConfig("[[board]]\nname = \"h\"\nkind = \"host\"\nbackend = \"host\"\n",
                              "a.toml", "/", "/usr/lib/mculab/mculab-runner-host");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->boards[0].runner, "/usr/lib/mculab/mculab-runner-host");
}

}  // namespace
}  // namespace mculab::agent

namespace mculab::agent {
namespace {

TEST(AgentConfig, ModelRunnerIsAPathForQemuAndHostBoards) {
  auto cfg = ParseAgentConfig(
      "[[board]]\nname = \"q\"\nkind = \"k\"\nbackend = \"qemu\"\nfirmware = \"r.elf\"\n"
      "model_runner = \"fw/mculab-tflite-runner-other.elf\"\n"
      "[[board]]\nname = \"h\"\nkind = \"host\"\nbackend = \"host\"\nrunner = \"x\"\n",
      "a.toml", "/etc/mculab");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->boards[0].model_runner,
            std::filesystem::path("/etc/mculab/fw/mculab-tflite-runner-other.elf"));
  EXPECT_TRUE(cfg->boards[1].model_runner.empty());  // MakeBoards looks beside `runner`
  auto bad = ParseAgentConfig(
      "[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\nmodel_runner = \"x\"\n", "a.toml",
      "/");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace mculab::agent
