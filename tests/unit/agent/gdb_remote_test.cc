// GdbRemote against a scripted fake GDB server: packet layer, handshake, memory and register
// writes, flash programming, and the failures a probe produces (E replies, bad checksums, silence,
// a dropped connection).
#include "agent/io/gdb_remote.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_gdb_server.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using testing::FakeGdbAction;
using testing::FakeGdbServer;
using ::testing::HasSubstr;

constexpr std::chrono::milliseconds kTimeout{2000};

std::unique_ptr<GdbRemote> ConnectTo(FakeGdbServer& server,
                                     std::chrono::milliseconds timeout = kTimeout) {
  auto g = GdbRemote::Connect("127.0.0.1", server.port(), timeout, RealClock());
  EXPECT_TRUE(g.ok()) << g.error().message;
  return g.ok() ? std::move(*g) : nullptr;
}

TEST(GdbPacketTest, FramesWithChecksum) {
  EXPECT_EQ(GdbFrame("OK"), "$OK#9a");
  EXPECT_EQ(GdbFrame(""), "$#00");
  EXPECT_EQ(GdbChecksum("qSupported"), "37");
}

TEST(GdbPacketTest, EscapesTheFourSpecialBytes) {
  const std::vector<std::uint8_t> data{'}', '#', '$', '*', 'a', 0x00};
  const std::string e = GdbEscapeBinary(data);
  EXPECT_EQ(e, std::string("}]}\x03}\x04}\x0a"
                           "a\0",
                           10));
  auto back = GdbDecodePayload(e);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, std::string("}#$*a\0", 6));
}

TEST(GdbPacketTest, Crc32IsGdbsCompareSectionsCrc) {
  // CRC-32/MPEG-2 (poly 0x04c11db7, init 0xffffffff, MSB first, no final xor) of "123456789".
  const std::string check = "123456789";
  EXPECT_EQ(GdbCrc32(std::span(reinterpret_cast<const std::uint8_t*>(check.data()), check.size())),
            0x0376e6e7u);
}

TEST(GdbPacketTest, DecodesRunLengthEncoding) {
  // '0' then "*" with ' ' (32 - 29 = 3 more): "0000".
  auto d = GdbDecodePayload("0* 1");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, "00001");
  EXPECT_FALSE(GdbDecodePayload("*x").ok());
  EXPECT_FALSE(GdbDecodePayload("ab}").ok());
}

TEST(GdbPacketTest, ParsesRegistersAcrossIncludesWithAndWithoutNumbers) {
  const std::string target =
      "<?xml version=\"1.0\"?><target><xi:include href=\"core.xml\"/>"
      "<feature name=\"sys\"><reg name=\"msp\" bitsize=\"32\" regnum=\"91\"/>"
      "<reg name=\"psp\" bitsize=\"32\"/></feature></target>";
  const std::string core =
      "<feature name=\"org.gnu.gdb.arm.m-profile\"><!-- <reg name=\"bogus\"/> -->"
      "<reg name=\"r0\" bitsize=\"32\"/><reg name=\"sp\" bitsize=\"32\" regnum=\"13\"/>"
      "<reg name=\"lr\" bitsize=\"32\"/><reg name=\"pc\" bitsize=\"32\" type=\"code_ptr\"/>"
      "<reg name=\"xpsr\" bitsize=\"32\" regnum=\"25\"/></feature>";
  auto regs = GdbParseRegisters(target, [&](const std::string& href) -> Result<std::string> {
    if (href == "core.xml") return core;
    return MakeError(ErrorCode::kNotFound, href);
  });
  ASSERT_TRUE(regs.ok()) << regs.error().message;
  std::vector<std::pair<std::string, int>> got;
  for (const auto& r : *regs) got.emplace_back(r.name, r.regnum);
  EXPECT_THAT(got, ElementsAre(std::pair{"r0", 0}, std::pair{"sp", 13}, std::pair{"lr", 14},
                               std::pair{"pc", 15}, std::pair{"xpsr", 25}, std::pair{"msp", 91},
                               std::pair{"psp", 92}));
}

TEST(GdbPacketTest, ParsesAMemoryMap) {
  auto map = GdbParseMemoryMap(
      "<memory-map><memory type=\"flash\" start=\"0x8000000\" length=\"0x200000\">"
      "<property name=\"blocksize\">0x20000</property></memory>"
      "<memory type=\"ram\" start=\"0x20000000\" length=\"0x20000\"/></memory-map>");
  ASSERT_TRUE(map.ok());
  ASSERT_EQ(map->size(), 2u);
  EXPECT_EQ((*map)[0].type, GdbMemoryRegion::Type::kFlash);
  EXPECT_EQ((*map)[0].start, 0x8000000u);
  EXPECT_EQ((*map)[0].length, 0x200000u);
  EXPECT_EQ((*map)[0].blocksize, 0x20000u);
  EXPECT_EQ((*map)[1].type, GdbMemoryRegion::Type::kRam);
  EXPECT_TRUE((*map)[1].Contains(0x2001ffff));
  EXPECT_FALSE((*map)[1].Contains(0x20020000));
}

TEST(GdbRemoteTest, HandshakeReadsPacketSizeAndEntersNoAckMode) {
  FakeGdbServer server([](const std::string&) { return FakeGdbAction{{""}}; });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->packet_size(), 0x100u);
  EXPECT_TRUE(g->no_ack());
  const auto p = server.packets();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_THAT(p[0], HasSubstr("qSupported"));
  EXPECT_EQ(p[1], "QStartNoAckMode");
}

TEST(GdbRemoteTest, ABadChecksumIsRetransmittedInAckMode) {
  FakeGdbServer server(
      [](const std::string& p) {
        if (p == "?") return FakeGdbAction{{"S05"}};
        return FakeGdbAction{{""}};
      },
      /*offer_no_ack=*/false);
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  EXPECT_FALSE(g->no_ack());
  server.CorruptReplies(2);
  auto stop = g->QueryStop();
  ASSERT_TRUE(stop.ok()) << stop.error().message;
  EXPECT_EQ(stop->signal, 5);
  EXPECT_EQ(server.naks_received(), 2);
}

TEST(GdbRemoteTest, APacketTheServerRejectsIsSentAgain) {
  FakeGdbServer server(
      [](const std::string& p) {
        if (p == "?") return FakeGdbAction{{"T05thread:01;"}};
        return FakeGdbAction{{""}};
      },
      /*offer_no_ack=*/false);
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  server.RejectPackets(1);
  auto stop = g->QueryStop();
  ASSERT_TRUE(stop.ok()) << stop.error().message;
  EXPECT_EQ(stop->kind, 'T');
  // The rejected copy was not handed to the handler; the retransmitted one was.
  EXPECT_EQ(server.packets().back(), "?");
}

TEST(GdbRemoteTest, AnEReplyIsAnErrorNamingTheRequest) {
  FakeGdbServer server([](const std::string& p) {
    if (p[0] == 'm') return FakeGdbAction{{"E14"}};
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  auto r = g->ReadMemory(0x1000, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(r.error().message, HasSubstr("E14"));
  EXPECT_THAT(r.error().message, HasSubstr("m1000,4"));
}

TEST(GdbRemoteTest, SilenceIsATimeout) {
  FakeGdbServer server([](const std::string&) { return FakeGdbAction{}; });
  auto g = ConnectTo(server, std::chrono::milliseconds(300));
  // The handshake itself is answered by the fake; "?" is not.
  ASSERT_TRUE(g);
  auto r = g->QueryStop();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeadlineExceeded);
  // A late reply would answer the next request: the connection refuses further requests.
  auto again = g->ReadMemory(0, 4);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(again.error().message, HasSubstr("unusable"));
}

TEST(GdbRemoteTest, ALostConnectionIsUnavailable) {
  FakeGdbServer server([](const std::string& p) {
    if (p[0] == 'X') return FakeGdbAction{{}, /*close=*/true};
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  const std::vector<std::uint8_t> data(16, 0xaa);
  auto s = g->WriteMemory(0x2000, data);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable) << s.error().message;
}

TEST(GdbRemoteTest, NoServerIsUnavailable) {
  int port = 0;
  {
    FakeGdbServer server([](const std::string&) { return FakeGdbAction{}; });
    port = server.port();
  }
  auto g = GdbRemote::Connect("127.0.0.1", static_cast<std::uint16_t>(port), kTimeout, RealClock());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code, ErrorCode::kUnavailable);
}

TEST(GdbRemoteTest, BinaryWritesAreChunkedEscapedAndReadBack) {
  testing::FakeTargetMemory mem(0x20000000, 4096);
  FakeGdbServer server([&](const std::string& p) {
    std::string reply;
    if (mem.Apply(p, reply)) return FakeGdbAction{{reply}};
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  std::vector<std::uint8_t> data(1500);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
  ASSERT_TRUE(g->WriteMemory(0x20000010, data).ok());
  EXPECT_TRUE(std::equal(data.begin(), data.end(), mem.bytes.begin() + 0x10));
  int x_packets = 0;
  for (const auto& p : server.packets()) {
    if (p[0] != 'X') continue;
    ++x_packets;
    EXPECT_LE(GdbEscapeBinary(std::span(reinterpret_cast<const std::uint8_t*>(p.data()), p.size()))
                  .size(),
              g->packet_size());
  }
  EXPECT_GE(x_packets, 6);  // 1500 bytes through 256-byte packets
  auto back = g->ReadMemory(0x20000010, data.size());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, data);
}

// A server that answers the first X at once and holds every later reply until it has the
// continue: a client waiting for each reply before sending the next packet would never finish.
void ExpectChunksAndContinueInOneBurst(bool no_ack) {
  testing::FakeTargetMemory mem(0x20000000, 4096);
  int writes = 0, held = 0;
  bool continued = false;
  FakeGdbServer server(
      [&](const std::string& p) {
        if (p == "vCont?") return FakeGdbAction{{"vCont;c;C;s;S"}};
        std::string reply;
        if (mem.Apply(p, reply)) {
          if (reply != "OK" || ++writes == 1) return FakeGdbAction{{reply}};  // the first write
          ++held;
          return FakeGdbAction{};
        }
        if (p == "vCont;c") {
          continued = true;
          return FakeGdbAction{std::vector<std::string>(static_cast<std::size_t>(held), "OK")};
        }
        return FakeGdbAction{{""}};
      },
      no_ack);
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->no_ack(), no_ack);
  g->set_pipeline_with_acks(true);  // no effect in no-ack mode
  ASSERT_TRUE(g->PrepareContinue().ok());
  ASSERT_TRUE(g->WriteMemory(0x20000000, std::vector<std::uint8_t>{0x5a}).ok());  // X learnt
  std::vector<std::uint8_t> data(1500);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
  const auto sent_before = g->packets_sent();
  auto w = g->WriteMemoryAndContinue(0x20000010, data);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_TRUE(continued);
  EXPECT_GE(held, 6);  // 1500 bytes through 256-byte packets, every reply held
  EXPECT_EQ(g->packets_sent() - sent_before, static_cast<std::uint64_t>(held) + 1);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), mem.bytes.begin() + 0x10));
  EXPECT_EQ(server.packets().back(), "vCont;c");
}

TEST(GdbRemoteTest, AfterTheFirstXTheChunksAndTheContinueGoInOneBurst) {
  ExpectChunksAndContinueInOneBurst(true);
}

TEST(GdbRemoteTest, InAckModeTheBurstIsOptIn) { ExpectChunksAndContinueInOneBurst(false); }

// Not awaited, the replies are read by the next call, which fails with an error among them.
TEST(GdbRemoteTest, RepliesNotAwaitedAreReadByTheNextCall) {
  int x = 0;
  FakeGdbServer server([&](const std::string& p) {
    if (p == "vCont?") return FakeGdbAction{{"vCont;c"}};
    if (p[0] == 'X') return FakeGdbAction{{++x == 4 ? "E02" : "OK"}};
    if (p == "vCont;c") return FakeGdbAction{};
    if (p == "\x03") return FakeGdbAction{{"T02thread:01;"}};
    if (p == "?") return FakeGdbAction{{"S05"}};
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->WriteMemory(0x100, std::vector<std::uint8_t>{1}).ok());
  // Two chunks, both OK: the next call reads past their replies to its own.
  ASSERT_TRUE(g->WriteMemoryAndContinue(0x200, std::vector<std::uint8_t>(300, 0x11), false).ok());
  auto stop = g->Halt();
  ASSERT_TRUE(stop.ok()) << stop.error().message;
  EXPECT_EQ(stop->signal, 2);
  // A failed chunk (the fourth X) is the next call's error.
  ASSERT_TRUE(g->WriteMemoryAndContinue(0x400, std::vector<std::uint8_t>(10, 0x22), false).ok());
  auto q = g->QueryStop();
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.error().message, HasSubstr("E02"));
}

TEST(GdbRemoteTest, AnErrorInAPipelinedWriteIsReportedAndEndsTheConnection) {
  int x = 0;
  FakeGdbServer server([&](const std::string& p) {
    if (p[0] == 'X') return FakeGdbAction{{++x == 3 ? "E01" : "OK"}};
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->WriteMemory(0x100, std::vector<std::uint8_t>{1}).ok());
  auto w = g->WriteMemory(0x200, std::vector<std::uint8_t>(1000, 0x11));
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.error().message, HasSubstr("E01"));
  // Replies to the chunks after the failed one may still come: nothing more is asked.
  EXPECT_FALSE(g->ReadMemory(0x100, 1).ok());
}

TEST(GdbRemoteTest, WithoutXWritesFallBackToHexM) {
  std::vector<std::string> m_packets;
  FakeGdbServer server([&](const std::string& p) {
    if (p[0] == 'X') return FakeGdbAction{{""}};
    if (p[0] == 'M') {
      m_packets.push_back(p);
      return FakeGdbAction{{"OK"}};
    }
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->WriteMemory(0x100, std::vector<std::uint8_t>{1, 2, 0xff}).ok());
  EXPECT_THAT(m_packets, ElementsAre("M100,3:0102ff"));
}

TEST(GdbRemoteTest, RunLengthEncodedRepliesAreExpanded) {
  FakeGdbServer server([](const std::string& p) {
    // ' ' is 32: three more '0' after the first.
    if (p == "m0,4") return FakeGdbAction{{"ab0* cd"}};
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  auto r = g->ReadMemory(0, 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(*r, ElementsAre(0xab, 0x00, 0x00, 0xcd));
}

const char* kTargetXml =
    "<target><feature name=\"org.gnu.gdb.arm.m-profile\">"
    "<reg name=\"r0\" bitsize=\"32\"/><reg name=\"r1\" bitsize=\"32\"/>"
    "<reg name=\"sp\" bitsize=\"32\" regnum=\"13\"/><reg name=\"lr\" bitsize=\"32\"/>"
    "<reg name=\"pc\" bitsize=\"32\"/><reg name=\"xpsr\" bitsize=\"32\" regnum=\"25\"/>"
    "</feature></target>";

FakeGdbAction ServeTargetXml(const std::string& p) {
  const std::string prefix = "qXfer:features:read:target.xml:";
  if (!p.starts_with(prefix)) return FakeGdbAction{{""}};
  const auto comma = p.find(',', prefix.size());
  const std::size_t off = std::stoull(p.substr(prefix.size(), comma - prefix.size()), nullptr, 16);
  const std::size_t len = std::stoull(p.substr(comma + 1), nullptr, 16);
  const std::string doc = kTargetXml;
  // Small chunks so that the client has to ask several times.
  const std::size_t n = std::min<std::size_t>({len, 50, doc.size() - std::min(off, doc.size())});
  const bool last = off + n >= doc.size();
  return FakeGdbAction{{std::string(last ? "l" : "m") + doc.substr(off, n)}};
}

TEST(GdbRemoteTest, RegistersAreWrittenByTheTargetDescriptionsNumbers) {
  FakeGdbServer server([](const std::string& p) {
    if (p[0] == 'P') return FakeGdbAction{{"OK"}};
    return ServeTargetXml(p);
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->WriteRegister("sp", 0x30080000).ok());
  ASSERT_TRUE(g->WriteRegister("pc", 0x10000400).ok());
  ASSERT_TRUE(g->WriteRegister("xpsr", 0x01000000).ok());
  EXPECT_FALSE(g->WriteRegister("nosuch", 1).ok());
  std::vector<std::string> writes;
  for (const auto& p : server.packets()) {
    if (p[0] == 'P') writes.push_back(p);
  }
  EXPECT_THAT(writes, ElementsAre("Pd=00000830", "Pf=00040010", "P19=00000001"));
}

TEST(GdbRemoteTest, WithoutPRegistersGoThroughGAndG) {
  std::string g_packet;
  FakeGdbServer server([&](const std::string& p) {
    if (p[0] == 'P') return FakeGdbAction{{""}};
    if (p == "g") return FakeGdbAction{{std::string(16 * 8, '0')}};  // r0..pc, 16 registers
    if (p[0] == 'G') {
      g_packet = p;
      return FakeGdbAction{{"OK"}};
    }
    return ServeTargetXml(p);
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->WriteRegister("r1", 0x11223344).ok()) << "";
  ASSERT_EQ(g_packet.size(), 1u + 16 * 8);
  EXPECT_EQ(g_packet.substr(1 + 8, 8), "44332211");
  EXPECT_EQ(g_packet.substr(1, 8), "00000000");
}

TEST(GdbRemoteTest, FlashIsErasedWrittenAndCommitted) {
  testing::FakeTargetMemory flash(0x08000000, 8192);
  FakeGdbServer server([&](const std::string& p) {
    std::string reply;
    if (p.starts_with("vFlashErase:") || p == "vFlashDone") return FakeGdbAction{{"OK"}};
    if (flash.Apply(p, reply)) return FakeGdbAction{{reply}};
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  std::vector<std::uint8_t> image(1000);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint8_t>(i ^ 0x23);
  ASSERT_TRUE(g->FlashErase(0x08000000, 0x800).ok());
  ASSERT_TRUE(g->FlashWrite(0x08000000, image).ok());
  ASSERT_TRUE(g->FlashDone().ok());
  EXPECT_TRUE(std::equal(image.begin(), image.end(), flash.bytes.begin()));
  const auto p = server.packets();
  EXPECT_EQ(p[2], "vFlashErase:8000000,800");
  EXPECT_EQ(p.back(), "vFlashDone");
}

TEST(GdbRemoteTest, AFailedFlashEraseIsAnError) {
  FakeGdbServer server([](const std::string& p) {
    if (p.starts_with("vFlashErase:")) return FakeGdbAction{{"E03"}};
    return FakeGdbAction{{"OK"}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  auto s = g->FlashErase(0x08000000, 0x20000);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("E03"));
  EXPECT_THAT(s.error().message, HasSubstr("vFlashErase"));
}

TEST(GdbRemoteTest, MonitorCommandsAreHexAndCollectConsoleOutput) {
  FakeGdbServer server([](const std::string& p) {
    if (p == "qRcmd," + GdbHex(std::vector<std::uint8_t>{'r', 'e', 's', 'e', 't', ' ', 'h', 'a',
                                                         'l', 't'})) {
      return FakeGdbAction{{"O" + GdbHex(std::vector<std::uint8_t>{'o', 'k', '\n'}), "OK"}};
    }
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  auto out = g->Monitor("reset halt");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "ok\n");
  auto unknown = g->Monitor("frobnicate");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("frobnicate"));
}

TEST(GdbRemoteTest, ContinueBreakpointAndHalt) {
  FakeGdbServer server([](const std::string& p) {
    if (p == "vCont?") return FakeGdbAction{{"vCont;c;C;s;S"}};
    if (p == "vCont;c") return FakeGdbAction{};  // running: no reply until it stops
    if (p.starts_with("Z1,") || p.starts_with("z1,")) return FakeGdbAction{{"OK"}};
    if (p == "\x03") return FakeGdbAction{{"O6869", "T02thread:01;"}};
    return FakeGdbAction{{""}};
  });
  auto g = ConnectTo(server);
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->InsertBreakpoint(1, 0x10000200).ok());
  ASSERT_TRUE(g->Continue().ok());
  auto none = g->WaitForStop(std::chrono::milliseconds(100));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kDeadlineExceeded);
  auto stop = g->Halt();
  ASSERT_TRUE(stop.ok()) << stop.error().message;
  EXPECT_EQ(stop->signal, 2);
  ASSERT_TRUE(g->RemoveBreakpoint(1, 0x10000200).ok());
  const auto p = server.packets();
  EXPECT_THAT(p, ::testing::Contains(std::string("Z1,10000200,2")));
  EXPECT_THAT(p, ::testing::Contains(std::string("vCont;c")));
  EXPECT_THAT(p, ::testing::Contains(std::string("\x03")));
}

}  // namespace
}  // namespace mculab::agent
