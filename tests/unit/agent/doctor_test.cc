// `mculab-agent doctor` against a scripted machine: programs found or not, their --version output,
// files and their permissions, the USB probes present, the sandbox. Each test pins one finding and
// its fix; AWellSetUpMachineHasNoProblems pins "nothing false".
#include "agent/doctor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "agent/io/fake_probe_lister.h"
#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ScriptedRunner final : public ProcessRunner {
 public:
  std::map<std::string, std::string> outputs;  // JoinArgv(argv) -> what it prints (exit 0)
  Result<CommandResult> Run(const std::vector<std::string>& argv,
                            std::chrono::milliseconds) override {
    auto it = outputs.find(JoinArgv(argv));
    if (it == outputs.end()) {
      return MakeError(ErrorCode::kNotFound, "not scripted: " + JoinArgv(argv));
    }
    CommandResult r;
    r.output = it->second;
    return r;
  }
};

class DoctorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-doctor-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
    firmware_ = (dir_->path() / "runner.elf").string();
    std::ofstream(firmware_) << "ELF";
    Grant(firmware_, R_OK);
  }
  void Program(const std::string& name, const std::string& path) { programs_[name] = path; }
  void Grant(const std::string& path, int mode) { files_[path] = mode; }
  DoctorEnv Env() {
    DoctorEnv env;
    env.which = [this](const std::string& p) -> Result<std::string> {
      auto it = programs_.find(p);
      if (it == programs_.end()) return MakeError(ErrorCode::kNotFound, p + " not in PATH");
      return it->second;
    };
    env.runner = &runner_;
    env.probes = &probes_;
    env.access = [this](const std::filesystem::path& p, int mode) {
      auto it = files_.find(p.string());
      return it != files_.end() && (it->second & mode) == mode;
    };
    env.sandbox = [this](const SandboxConfig&) { return sandbox_; };
    env.agent_is_root = root_;
    env.check_server = check_server_;
    return env;
  }
  std::vector<DoctorFinding> Run(const std::string& toml) {
    const auto path = dir_->path() / "agent.toml";
    std::ofstream(path) << toml;
    return RunDoctor(path, Env());
  }
  static const DoctorFinding* Find(const std::vector<DoctorFinding>& fs, bool ok,
                                   const std::string& text) {
    for (const auto& f : fs) {
      if (f.ok == ok && f.what.find(text) != std::string::npos) return &f;
    }
    return nullptr;
  }
  static std::string All(const std::vector<DoctorFinding>& fs) {
    std::string s;
    for (const auto& f : fs) s += FormatFinding(f) + "\n";
    return s;
  }

  std::unique_ptr<TempDir> dir_;
  std::string firmware_;
  std::map<std::string, std::string> programs_;
  std::map<std::string, int> files_;
  ScriptedRunner runner_;
  FakeProbeLister probes_;
  Result<Sandbox::Kind> sandbox_ = Sandbox::Kind::kBwrap;
  bool root_ = false;
  std::function<Status(const std::string&, const std::string&)> check_server_;
};

std::string PyocdBoard(const std::string& firmware) {
  return "[[board]]\nname = \"h743\"\nkind = \"nucleo-h743\"\nbackend = \"pyocd\"\n"
         "firmware = \"" +
         firmware +
         "\"\nserial = \"0669AB\"\ntarget = \"stm32h743zitx\"\n"
         "workload_addr = 0x24060000\nconsole = \"/dev/ttyACM0\"\n";
}

ProbeInfo Stlink(const std::string& serial) {
  ProbeInfo p;
  p.vendor_id = 0x0483;
  p.product_id = 0x374b;
  p.product = "STM32 STLink";
  p.serial = serial;
  p.bus = 1;
  p.address = 7;
  return p;
}

// The server is checked with the agent's token: a dead address or a refused token is a problem.
TEST_F(DoctorTest, TheServerMustAnswerAndAcceptTheToken) {
  const auto token = dir_->path() / "agent.token";
  std::ofstream(token) << "mcl_a_token\n";
  Grant(token.string(), R_OK);
  const std::string toml = "[agent]\nserver = \"127.0.0.1:9\"\ntoken_file = \"" + token.string() +
                           "\"\n[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\n";
  std::string seen_server, seen_token;
  Status answer;
  check_server_ = [&](const std::string& server, const std::string& tok) -> Status {
    seen_server = server;
    seen_token = tok;
    return answer;
  };
  auto ok = Run(toml);
  EXPECT_EQ(seen_server, "127.0.0.1:9");
  EXPECT_EQ(seen_token, "mcl_a_token");
  EXPECT_NE(Find(ok, true, "answers and accepts the agent's token"), nullptr) << All(ok);
  answer = MakeError(ErrorCode::kUnavailable, "nothing answers at 127.0.0.1:9");
  auto dead = Run(toml);
  const DoctorFinding* f = Find(dead, false, "nothing answers at 127.0.0.1:9");
  ASSERT_NE(f, nullptr) << All(dead);
  EXPECT_THAT(f->fix, HasSubstr("start mculab-server"));
  answer = MakeError(ErrorCode::kUnauthenticated, "the server refused the agent's token");
  auto refused = Run(toml);
  f = Find(refused, false, "refused the agent's token");
  ASSERT_NE(f, nullptr) << All(refused);
  EXPECT_THAT(f->fix, HasSubstr("admin agent add"));
}

// A key no backend knows is a problem, with the nearest known key when one is close.
TEST_F(DoctorTest, AnUnknownKeyInABoardIsAProblemNamingTheNearestKey) {
  auto fs = Run("[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\nbogus_key = 3\n");
  EXPECT_NE(Find(fs, false, "key bogus_key: unknown key"), nullptr) << All(fs);
  auto typo = Run("[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fake\"\ntimeout = 3\n");
  EXPECT_NE(Find(typo, false, "did you mean \"timeout_s\""), nullptr) << All(typo);
}

TEST_F(DoctorTest, DebiansPyocdIsNamedWithThePipxFix) {
  Program("pyocd-gdbserver", "/usr/bin/pyocd-gdbserver");
  auto fs = Run(PyocdBoard(firmware_));
  const auto* f = Find(fs, false, "python3-pyocd (0.13.1)");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_EQ(f->subject, "h743");
  EXPECT_THAT(f->what, HasSubstr("no STM32F7/H7 targets"));
  EXPECT_THAT(f->fix, HasSubstr("pipx install pyocd"));
}

TEST_F(DoctorTest, PyocdWithoutTheBoardsTargetSaysPackInstall) {
  Program("pyocd", "/usr/local/bin/pyocd");
  runner_.outputs["/usr/local/bin/pyocd --version"] = "0.36.0\n";
  runner_.outputs["/usr/local/bin/pyocd list --targets"] = "  Name  Vendor  Part\n  cortex_m\n";
  auto fs = Run(PyocdBoard(firmware_));
  ASSERT_NE(Find(fs, true, "pyOCD 0.36.0"), nullptr) << All(fs);
  const auto* f = Find(fs, false, "does not know target stm32h743zitx");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->fix, HasSubstr("pyocd pack install stm32h743zitx"));
}

TEST_F(DoctorTest, OldPyocdIsTooOld) {
  Program("pyocd", "/usr/bin/pyocd");
  runner_.outputs["/usr/bin/pyocd --version"] = "0.13.1\n";
  auto fs = Run(PyocdBoard(firmware_));
  const auto* f = Find(fs, false, "older than 0.14");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->fix, HasSubstr("pipx install pyocd"));
}

constexpr const char* kOpenocdBoard = R"([[board]]
name = "f767"
kind = "nucleo-f767"
backend = "gdb"
serial = "066E"
gdb_server = "openocd -f interface/stlink.cfg -c \"adapter serial {serial}\" -f target/stm32h7x.cfg -c \"gdb_port {port}\""
link = "/dev/mculab/tty-066E-02"
)";

TEST_F(DoctorTest, OpenocdAndEachOfItsScriptsAreChecked) {
  Program("openocd", "/usr/bin/openocd");
  runner_.outputs["/usr/bin/openocd --version"] = "Open On-Chip Debugger 0.12.0\nLicensed\n";
  Grant("/usr/share/openocd/scripts/interface/stlink.cfg", R_OK);
  auto fs = Run(kOpenocdBoard);
  EXPECT_NE(Find(fs, true, "Open On-Chip Debugger 0.12.0"), nullptr) << All(fs);
  EXPECT_NE(Find(fs, true, "interface/stlink.cfg"), nullptr) << All(fs);
  const auto* f = Find(fs, false, "OpenOCD script target/stm32h7x.cfg not found");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->fix, HasSubstr("ls /usr/share/openocd/scripts/target/"));
}

TEST_F(DoctorTest, MissingOpenocdSaysAptGet) {
  auto fs = Run(kOpenocdBoard);
  const auto* f = Find(fs, false, "openocd is not installed");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_EQ(f->fix, "apt-get install openocd");
}

TEST_F(DoctorTest, AProbeNotPluggedInListsTheProbesThatAre) {
  probes_.Set({Stlink("OTHER1")});
  auto fs = Run(kOpenocdBoard);
  const auto* f = Find(fs, false, "probe with serial 066E is not plugged in");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->what, HasSubstr("OTHER1"));
  EXPECT_NE(Find(fs, true, "debug probe 0483:374b"), nullptr) << All(fs);
}

TEST_F(DoctorTest, AProbeWithoutPermissionPointsAtTheUdevRules) {
  probes_.Set({Stlink("066E")});
  Grant("/dev/bus/usb/001/007", R_OK);  // read, not write
  auto fs = Run(kOpenocdBoard);
  const auto* f = Find(fs, false, "/dev/bus/usb/001/007 is not readable and writable");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->fix, HasSubstr("60-mculab-probes.rules"));
}

TEST_F(DoctorTest, AProbeWhoseSerialCannotBeReadPointsAtTheUdevRules) {
  probes_.Set({Stlink("")});
  auto fs = Run(kOpenocdBoard);
  const auto* f = Find(fs, false, "could not be opened to read their serial number");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->fix, HasSubstr("plugdev"));
}

TEST_F(DoctorTest, APluggedInProbeWithAccessIsOk) {
  probes_.Set({Stlink("066E")});
  Grant("/dev/bus/usb/001/007", R_OK | W_OK);
  auto fs = Run(kOpenocdBoard);
  EXPECT_NE(Find(fs, true, "at /dev/bus/usb/001/007"), nullptr) << All(fs);
}

TEST_F(DoctorTest, SerialPortsMissingOrNotWritableAreProblems) {
  auto fs = Run(kOpenocdBoard);
  EXPECT_NE(Find(fs, false, "link /dev/mculab/tty-066E-02 does not exist"), nullptr) << All(fs);
  Grant("/dev/mculab/tty-066E-02", R_OK);
  fs = Run(kOpenocdBoard);
  const auto* f = Find(fs, false, "link /dev/mculab/tty-066E-02 is not readable and writable");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->fix, HasSubstr("dialout"));
}

std::string FvpBoard(const std::string& firmware) {
  return "[[board]]\nname = \"fvp\"\nkind = \"corstone300-fvp\"\nbackend = \"fvp\"\n"
         "firmware = \"" +
         firmware +
         "\"\nfvp = \"/opt/arm/FVP/models/Linux64_GCC-9.3/FVP_Corstone_SSE-300_Ethos-U55\"\n"
         "fvp_relay = \"/usr/lib/mculab/mculab-fvp-relay\"\n";
}

TEST_F(DoctorTest, AMissingFvpSaysItIsNotInDebianAndWhereToGetIt) {
  auto fs = Run(FvpBoard(firmware_));
  const auto* f = Find(fs, false, "FVP_Corstone_SSE-300_Ethos-U55 is not installed");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->fix, HasSubstr("not in Debian"));
  EXPECT_THAT(f->fix, HasSubstr("developer.arm.com"));
  EXPECT_NE(Find(fs, false, "fvp_relay /usr/lib/mculab/mculab-fvp-relay does not exist"), nullptr)
      << All(fs);
}

TEST_F(DoctorTest, AnInstalledFvpShowsItsVersion) {
  const std::string fvp = "/opt/arm/FVP/models/Linux64_GCC-9.3/FVP_Corstone_SSE-300_Ethos-U55";
  Program(fvp, fvp);
  runner_.outputs[fvp + " --version"] = "\nFast Models [11.22.39 (Aug 2 2023)]\n";
  Grant("/usr/lib/mculab/mculab-fvp-relay", R_OK | X_OK);
  auto fs = Run(FvpBoard(firmware_));
  EXPECT_NE(Find(fs, true, "FVP Fast Models [11.22.39"), nullptr) << All(fs);
  EXPECT_NE(Find(fs, true, "fvp_relay /usr/lib/mculab/mculab-fvp-relay"), nullptr) << All(fs);
}

TEST_F(DoctorTest, AnFvpUnderTheNamespacesSandboxAsRootIsAProblem) {
  sandbox_ = Sandbox::Kind::kNamespaces;
  root_ = true;
  Grant("/usr/lib/mculab/mculab-fvp-relay", R_OK | X_OK);
  auto fs = Run(FvpBoard(firmware_));
  const auto* f = Find(fs, false, "loopback stays down");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_THAT(f->fix, HasSubstr("bwrap"));
}

constexpr const char* kQemuBoard = R"([[board]]
name = "an547"
kind = "corstone300-qemu"
backend = "qemu"
firmware = "runner.elf"
)";

TEST_F(DoctorTest, MissingQemuSaysAptGet) {
  auto fs = Run(kQemuBoard);
  const auto* f = Find(fs, false, "qemu-system-arm is not installed");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_EQ(f->fix, "apt-get install qemu-system-arm");
  EXPECT_NE(Find(fs, false, "no QEMU counting plugin"), nullptr) << All(fs);
}

TEST_F(DoctorTest, AQemuWithoutTheBoardsMachineIsAProblem) {
  Program("qemu-system-arm", "/usr/bin/qemu-system-arm");
  runner_.outputs["/usr/bin/qemu-system-arm --version"] = "QEMU emulator version 5.2.0\n";
  runner_.outputs["/usr/bin/qemu-system-arm -M help"] = "mps2-an500           ARM MPS2\n";
  auto fs = Run(kQemuBoard);
  EXPECT_NE(Find(fs, true, "QEMU emulator version 5.2.0"), nullptr) << All(fs);
  EXPECT_NE(Find(fs, false, "qemu-system-arm has no machine mps3-an547"), nullptr) << All(fs);
}

TEST_F(DoctorTest, ASandboxThatDoesNotWorkIsAProblemWithItsReason) {
  sandbox_ = MakeError(ErrorCode::kFailedPrecondition, "bwrap: setting up uid map: Permission");
  auto fs = Run(kQemuBoard);
  const auto* f = Find(fs, false, "the job sandbox does not work: bwrap: setting up uid map");
  ASSERT_NE(f, nullptr) << All(fs);
  EXPECT_EQ(f->subject, "[sandbox]");
}

TEST_F(DoctorTest, AWellSetUpMachineHasNoProblems) {
  Program("qemu-system-arm", "/usr/bin/qemu-system-arm");
  runner_.outputs["/usr/bin/qemu-system-arm --version"] = "QEMU emulator version 7.2.0\n";
  runner_.outputs["/usr/bin/qemu-system-arm -M help"] =
      "Supported machines are:\nmps2-an500           ARM MPS2 with AN500\n"
      "mps3-an547           ARM MPS3 with AN547 FPGA image for Cortex-M55\n";
  const std::string plugin = (dir_->path() / "libmculab-qemu-counters.so").string();
  std::ofstream(plugin) << "so";
  Grant(plugin, R_OK);
  const std::string fvp = "/opt/arm/FVP/models/Linux64_GCC-9.3/FVP_Corstone_SSE-300_Ethos-U55";
  Program(fvp, fvp);
  runner_.outputs[fvp + " --version"] = "Fast Models [11.22.39 (Aug 2 2023)]\n";
  Grant("/usr/lib/mculab/mculab-fvp-relay", R_OK | X_OK);
  Program("pyocd", "/usr/local/bin/pyocd");
  runner_.outputs["/usr/local/bin/pyocd --version"] = "0.36.0\n";
  runner_.outputs["/usr/local/bin/pyocd list --targets"] = "stm32h743zitx  STMicroelectronics\n";
  probes_.Set({Stlink("0669AB")});
  Grant("/dev/bus/usb/001/007", R_OK | W_OK);
  Grant("/dev/ttyACM0", R_OK | W_OK);
  auto fs = Run(std::string(kQemuBoard) + "qemu_plugin = \"" + plugin + "\"\n" +
                FvpBoard(firmware_) + PyocdBoard(firmware_));
  for (const auto& f : fs) EXPECT_TRUE(f.ok) << FormatFinding(f);
  EXPECT_NE(Find(fs, true, "parses, 3 board(s)"), nullptr) << All(fs);
}

TEST_F(DoctorTest, EveryBoardOfTheExampleRackIsChecked) {
  // On a bare machine every board of the example rack has something missing, and says what.
  auto fs = RunDoctor(std::string(MCULAB_SOURCE_DIR) + "/deploy/rack-agent.example.toml", Env());
  for (const char* board : {"nucleo-h743-1", "nucleo-h743-2", "nucleo-f767-1", "disco-f746-1",
                            "mps3-cs300-1", "fvp-cs300-u55-1"}) {
    bool problem = false;
    for (const auto& f : fs) problem |= (!f.ok && f.subject == board);
    EXPECT_TRUE(problem) << board << "\n" << All(fs);
  }
}

TEST(SplitCommandLineTest, KeepsQuotedWordsTogether) {
  EXPECT_THAT(
      SplitCommandLine(R"(openocd -f a.cfg -c "adapter serial {serial}" -c 'x y' a\ b)"),
      ElementsAre("openocd", "-f", "a.cfg", "-c", "adapter serial {serial}", "-c", "x y", "a b"));
  EXPECT_THAT(SplitCommandLine("  "), ElementsAre());
}

}  // namespace
}  // namespace mculab::agent
