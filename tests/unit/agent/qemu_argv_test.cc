#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "agent/boards/qemu_board.h"

namespace mculab::agent {
namespace {

std::vector<std::string> Argv() {
  QemuOptions o;
  o.firmware = "/fw/mculab-runner-an547.elf";
  return QemuArgv(o, "/tmp/run/link.sock", "/tmp/run/workload.bin");
}

// The value following `flag`, or "" when absent.
std::string After(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

bool AnyContains(const std::vector<std::string>& argv, const std::string& s) {
  return std::any_of(argv.begin(), argv.end(),
                     [&](const std::string& a) { return a.find(s) != std::string::npos; });
}

TEST(QemuArgv, BootsTheElfOnAn547) {
  auto argv = Argv();
  EXPECT_EQ(argv[0], "qemu-system-arm");
  EXPECT_EQ(After(argv, "-M"), "mps3-an547");
  EXPECT_EQ(After(argv, "-kernel"), "/fw/mculab-runner-an547.elf");
}

TEST(QemuArgv, UsesDeterministicInstructionCountedTime) {
  EXPECT_EQ(After(Argv(), "-icount"), "shift=5,sleep=off");
  QemuOptions o;
  o.icount_shift = 3;
  EXPECT_EQ(After(QemuArgv(o, "s", "w"), "-icount"), "shift=3,sleep=off");
}

TEST(QemuArgv, LoadsTheWorkloadAtItsAddressWithoutCpuNum) {
  auto argv = Argv();
  EXPECT_EQ(After(argv, "-device"), "loader,file=/tmp/run/workload.bin,addr=0x60000000");
  EXPECT_FALSE(AnyContains(argv, "cpu-num"));
}

TEST(QemuArgv, LinksUart0ToAUnixSocketChardev) {
  auto argv = Argv();
  EXPECT_EQ(After(argv, "-chardev"), "socket,id=link,path=/tmp/run/link.sock,server=on,wait=on");
  EXPECT_EQ(After(argv, "-serial"), "chardev:link");
}

TEST(QemuArgv, EscapesCommasInPathsTheQemuWay) {
  QemuOptions o;
  auto argv = QemuArgv(o, "/tmp/a,b/link.sock", "/tmp/a,b/workload.bin");
  EXPECT_EQ(After(argv, "-chardev"), "socket,id=link,path=/tmp/a,,b/link.sock,server=on,wait=on");
  EXPECT_EQ(After(argv, "-device"), "loader,file=/tmp/a,,b/workload.bin,addr=0x60000000");
}

TEST(QemuArgv, NeverNographicAndNoMonitorOrDisplay) {
  auto argv = Argv();
  EXPECT_FALSE(AnyContains(argv, "nographic"));
  EXPECT_EQ(After(argv, "-display"), "none");
  EXPECT_EQ(After(argv, "-monitor"), "none");
}

// Semihosting would hand a runner (a job's own ELF included) the agent's machine: SYS_SYSTEM runs
// a shell command, SYS_OPEN reads any file.
TEST(QemuArgv, NeverEnablesSemihosting) {
  QemuOptions o;
  o.plugin = "/lib/libmculab-qemu-counters.so";
  o.allow_custom_runners = true;
  EXPECT_FALSE(AnyContains(Argv(), "semihosting"));
  EXPECT_FALSE(AnyContains(QemuArgv(o, "s", "w"), "semihosting"));
}

TEST(QemuArgv, TurnsOnQemusOwnSeccompSandbox) {
  EXPECT_EQ(After(Argv(), "-sandbox"),
            "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
}

// The counting plugin offers mve_instructions only where the CPU has MVE: the M55, not the M7.
TEST(QemuCounterUnits, OffersMveInstructionsOnlyOnTheCortexM55) {
  QemuOptions o;
  o.plugin = "/usr/lib/libmculab-qemu-counters.so";
  auto has_mve = [](const QemuOptions& opts) {
    const auto units = QemuCounterUnits(opts);
    if (units.empty()) return false;
    const auto& ev = units[0].events;
    return std::find(ev.begin(), ev.end(), "mve_instructions") != ev.end();
  };
  o.machine = "mps3-an547";
  EXPECT_TRUE(has_mve(o));
  o.machine = "mps2-an500";
  EXPECT_FALSE(has_mve(o));
  EXPECT_FALSE(QemuCounterUnits(o).empty()) << "the other events stay";
}

TEST(QemuNote, SaysTheTimeIsEmulated) {
  QemuOptions o;
  EXPECT_EQ(QemuNote(o),
            "QEMU mps3-an547 -icount shift=5: emulated; the timer counts executed instructions "
            "(virtual time at 2^5 ns per instruction), not silicon cycles");
}

}  // namespace
}  // namespace mculab::agent
