// StartEmulator (agent/boards/emulator_process.h) with stand-ins for an emulator: a process that
// dies before it opens the link, and one that opens it and echoes what the agent writes.
#include "agent/boards/emulator_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace mculab::agent {
namespace {

using namespace std::chrono_literals;

EmulatorLaunch Launch(std::vector<std::string> argv) {
  EmulatorLaunch l;
  l.dir_prefix = "mculab-emulator-test-";
  l.argv = [argv](const std::filesystem::path&, const std::filesystem::path& socket,
                  const std::filesystem::path& workload) -> Result<std::vector<std::string>> {
    std::vector<std::string> out = argv;
    out.push_back(socket.string());
    out.push_back(workload.string());
    return out;
  };
  l.connect_timeout = 10s;
  l.no_link = "the emulator did not open its link";
  l.process = "emulator";
  return l;
}

TEST(StartEmulator, AnEmulatorThatDiesFirstIsUnavailableWithItsStatusStderrAndCommand) {
  auto r = StartEmulator(Launch({"sh", "-c", "echo no licence >&2; exit 3", "sh"}),
                         std::vector<std::uint8_t>{1, 2, 3}, Sandbox::None(), RealClock(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("the emulator did not open its link: "), std::string::npos) << m;
  EXPECT_NE(m.find("; emulator exit status 3"), std::string::npos) << m;
  EXPECT_NE(m.find("; stderr: no licence"), std::string::npos) << m;
  EXPECT_NE(m.find(" (command: sh -c "), std::string::npos) << m;
}

// The workload is in the run folder when the emulator starts; the link is the socket it opens.
TEST(StartEmulator, TheLinkIsTheSocketTheEmulatorOpensAndTheWorkloadIsItsFile) {
  const char* script =
      "import socket, sys\n"
      "data = open(sys.argv[2], 'rb').read()\n"
      "s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)\n"
      "c, _ = s.accept(); c.sendall(data); c.recv(1)\n";
  RunProvenance prov;
  prov.note = "stand-in";
  auto r = StartEmulator(Launch({"python3", "-c", script}), std::vector<std::uint8_t>{7, 8, 9},
                         Sandbox::None(), RealClock(), prov);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::uint8_t buf[3] = {};
  std::size_t got = 0;
  for (int i = 0; i < 100 && got < 3; ++i) {
    auto n = (*r)->Read(std::span(buf).subspan(got), 100ms);
    ASSERT_TRUE(n.ok()) << n.error().message;
    got += *n;
  }
  EXPECT_EQ(got, 3u);
  EXPECT_EQ(buf[0], 7);
  EXPECT_EQ(buf[2], 9);
  EXPECT_EQ((*r)->provenance().note, "stand-in");
  EXPECT_FALSE((*r)->ExitsAfterDone()) << "the agent ends an emulator";
  (*r)->Kill();
}

}  // namespace
}  // namespace mculab::agent
