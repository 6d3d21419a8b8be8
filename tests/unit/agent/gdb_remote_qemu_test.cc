// GdbRemote against a real GDB server: QEMU's gdbstub on an mps3-an547 (Cortex-M55) started
// halted with no program (-S, no -kernel). The test writes a tiny Thumb program into ITCM over `X`,
// reads it back over `m`, sets PC/SP/xPSR by the target description's numbers, sets a breakpoint,
// continues and sees the stop and the program's effect. Skipped, saying why, without QEMU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

#include "agent/io/gdb_remote.h"
#include "agent/io/subprocess.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;

class GdbRemoteQemuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto probe =
        RealProcessRunner().Run({"qemu-system-arm", "--version"}, std::chrono::seconds(10));
    if (!probe.ok() || !probe->status.success()) GTEST_SKIP() << "qemu-system-arm is not installed";
    auto port = FreeLocalTcpPort();
    ASSERT_TRUE(port.ok()) << port.error().message;
    SpawnOptions so;
    so.argv = {"qemu-system-arm",
               "-M",
               "mps3-an547",
               "-S",
               "-gdb",
               "tcp:127.0.0.1:" + std::to_string(*port),
               "-display",
               "none",
               "-monitor",
               "none",
               "-serial",
               "null"};
    auto proc = Subprocess::Spawn(so);
    ASSERT_TRUE(proc.ok()) << proc.error().message;
    qemu_ = std::move(*proc);
    auto g = ConnectGdbWhenUp("127.0.0.1", *port, std::chrono::seconds(20),
                              std::chrono::seconds(10), RealClock(),
                              [&] { return !qemu_->Wait(std::chrono::milliseconds(0)).ok(); });
    ASSERT_TRUE(g.ok()) << g.error().message;
    gdb_ = std::move(*g);
  }
  std::unique_ptr<Subprocess> qemu_;
  std::unique_ptr<GdbRemote> gdb_;
};

TEST_F(GdbRemoteQemuTest, ReadsTheCortexMTargetDescription) {
  auto regs = gdb_->Registers();
  ASSERT_TRUE(regs.ok()) << regs.error().message;
  auto sp = gdb_->FindRegister("sp");
  auto pc = gdb_->FindRegister("pc");
  auto xpsr = gdb_->FindRegister("xpsr");
  ASSERT_TRUE(sp.ok() && pc.ok() && xpsr.ok());
  EXPECT_EQ(sp->regnum, 13);
  EXPECT_EQ(pc->regnum, 15);
  EXPECT_EQ(xpsr->regnum, 25);
  EXPECT_GE(gdb_->packet_size(), 256u);
  std::cout << "QEMU gdbstub: qSupported \"" << gdb_->supported() << "\", no-ack mode "
            << (gdb_->no_ack() ? "on" : "off") << "\n";
  // QEMU offers no memory map: everything is written with X.
  auto map = gdb_->MemoryMap();
  ASSERT_TRUE(map.ok()) << map.error().message;
  EXPECT_TRUE(map->empty());
}

TEST_F(GdbRemoteQemuTest, LoadsAProgramRunsItToABreakpointAndReadsItsResult) {
  constexpr std::uint32_t kCode = 0x10000000;  // ITCM (secure alias)
  // movs r0,#42; adds r0,#1; nop (breakpoint); b .
  const std::vector<std::uint8_t> program{0x2a, 0x20, 0x01, 0x30, 0x00, 0xbf, 0xfe, 0xe7};
  ASSERT_TRUE(gdb_->WriteMemory(kCode, program).ok());
  auto back = gdb_->ReadMemory(kCode, program.size());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, program);
  // A larger write with every byte value crosses packets and needs escapes.
  std::vector<std::uint8_t> big(10000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 13);
  ASSERT_TRUE(gdb_->WriteMemory(0x30000000, big).ok());
  auto big_back = gdb_->ReadMemory(0x30000000, big.size());
  ASSERT_TRUE(big_back.ok()) << big_back.error().message;
  EXPECT_EQ(*big_back, big);

  ASSERT_TRUE(gdb_->WriteRegister("sp", 0x30010000).ok());
  ASSERT_TRUE(gdb_->WriteRegister("pc", kCode).ok());
  ASSERT_TRUE(gdb_->WriteRegister("xpsr", 0x01000000).ok());  // Thumb
  auto pc = gdb_->ReadRegister("pc");
  ASSERT_TRUE(pc.ok()) << pc.error().message;
  EXPECT_EQ(*pc, kCode);
  ASSERT_TRUE(gdb_->InsertBreakpoint(1, kCode + 4).ok());
  ASSERT_TRUE(gdb_->Continue().ok());
  auto stop = gdb_->WaitForStop(std::chrono::seconds(10));
  ASSERT_TRUE(stop.ok()) << stop.error().message;
  EXPECT_EQ(stop->signal, 5) << stop->raw;  // SIGTRAP
  auto r0 = gdb_->ReadRegister("r0");
  ASSERT_TRUE(r0.ok());
  EXPECT_EQ(*r0, 43u);
  pc = gdb_->ReadRegister("pc");
  ASSERT_TRUE(pc.ok());
  EXPECT_EQ(*pc, kCode + 4);
}

TEST_F(GdbRemoteQemuTest, HaltsARunningTarget) {
  const std::vector<std::uint8_t> spin{0xfe, 0xe7};  // b .
  ASSERT_TRUE(gdb_->WriteMemory(0x10000100, spin).ok());
  ASSERT_TRUE(gdb_->WriteRegister("pc", 0x10000100).ok());
  ASSERT_TRUE(gdb_->WriteRegister("xpsr", 0x01000000).ok());
  ASSERT_TRUE(gdb_->Continue().ok());
  auto none = gdb_->WaitForStop(std::chrono::milliseconds(100));
  ASSERT_FALSE(none.ok());
  auto stop = gdb_->Halt();
  ASSERT_TRUE(stop.ok()) << stop.error().message;
  auto pc = gdb_->ReadRegister("pc");
  ASSERT_TRUE(pc.ok());
  EXPECT_EQ(*pc, 0x10000100u);
}

TEST_F(GdbRemoteQemuTest, MonitorCommandsGoToQemusMonitor) {
  auto out = gdb_->Monitor("info version");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_THAT(*out, ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+(.|\n|\r)*"));
  auto unknown = gdb_->Monitor("frobnicate");
  ASSERT_TRUE(unknown.ok()) << unknown.error().message;  // QEMU says so in its output
  EXPECT_THAT(*unknown, HasSubstr("unknown command"));
}

TEST_F(GdbRemoteQemuTest, UnmappedMemoryIsAnEReply) {
  auto r = gdb_->ReadMemory(0xf0000000, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("the GDB server answered E"));
}

}  // namespace
}  // namespace mculab::agent
