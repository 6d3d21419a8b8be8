#include "agent/boards/fvp_board.h"

#include <cstdio>

#include "agent/boards/emulator_process.h"

namespace mculab::agent {
namespace {

// The MPS3 board's telnet terminals: every one would open an xterm unless told not to.
constexpr const char* kTerminals[] = {"telnetterminal0", "telnetterminal1", "telnetterminal2",
                                      "telnetterminal5"};
// The runner's frames go over UART0, which the model wires to telnetterminal0.
constexpr const char* kLinkTerminal = "telnetterminal0";

// Beyond the FVP's own start-up (bounded by the relay): spawning the sandbox and the relay.
constexpr std::chrono::seconds kConnectSlack{15};

}  // namespace

bool ValidEthosU55Macs(int n) { return n == 32 || n == 64 || n == 128 || n == 256; }

std::vector<std::string> FvpArgv(const FvpOptions& o, const std::filesystem::path& firmware,
                                 const std::filesystem::path& workload_file) {
  std::vector<std::string> argv = {o.fvp.string(), "-C",
                                   "mps3_board.visualisation.disable-visualisation=1"};
  for (const char* t : kTerminals) {
    argv.insert(argv.end(), {"-C", std::string("mps3_board.") + t + ".start_telnet=0"});
  }
  // Raw mode: no telnet negotiation bytes (0xff ...) mixed into the runner's binary frames.
  argv.insert(argv.end(), {"-C", std::string("mps3_board.") + kLinkTerminal + ".mode=raw", "-C",
                           "mps3_board.uart0.unbuffered_output=1", "-C",
                           "ethosu.num_macs=" + std::to_string(o.num_macs)});
  argv.insert(argv.end(), o.extra_options.begin(), o.extra_options.end());
  argv.insert(argv.end(), {"-a", "cpu0=" + firmware.string(), "--data",
                           "cpu0=" + workload_file.string() + "@" + HexAddress(o.workload_addr)});
  return argv;
}

std::vector<std::string> FvpRelayArgv(const FvpOptions& o, const std::filesystem::path& link_socket,
                                      const std::filesystem::path& firmware,
                                      const std::filesystem::path& workload_file) {
  std::vector<std::string> argv = {o.relay.string(),
                                   "--socket",
                                   link_socket.string(),
                                   "--terminal",
                                   kLinkTerminal,
                                   "--start-timeout-s",
                                   std::to_string(o.start_timeout.count()),
                                   "--"};
  auto fvp = FvpArgv(o, firmware, workload_file);
  argv.insert(argv.end(), fvp.begin(), fvp.end());
  return argv;
}

std::filesystem::path FvpInstallDir(const std::filesystem::path& fvp_binary) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(fvp_binary, ec);
  if (ec) real = fvp_binary;
  std::filesystem::path dir = real.parent_path();
  // <root>/models/Linux64_GCC-9.3/FVP_...: the plugins and libraries live under <root>.
  if (dir.parent_path().filename() == "models") return dir.parent_path().parent_path();
  return dir;
}

std::string FvpNote(const FvpOptions& o) {
  return "emulated (FVP): Arm Corstone-300 FVP with Ethos-U55 (" + std::to_string(o.num_macs) +
         " MACs); Arm states that FVP CPU cycle counts are not representative of silicon and "
         "NPU (Ethos-U55 PMU) counts are approximate";
}

FvpBoard::FvpBoard(BoardInfo info, FvpOptions options, Clock& clock, Sandbox sandbox)
    : info_(std::move(info)),
      options_(std::move(options)),
      clock_(clock),
      sandbox_(std::move(sandbox)),
      firmware_(options_.firmware) {
  info_.emulated = true;
  info_.custom_runners = options_.allow_custom_runners;
  info_.custom_runners_off =
      "FVP board " + info_.name +
      " does not run uploaded runner ELFs: the agent's configuration must set "
      "allow_custom_runners = true for this board (the runner then runs in the FVP inside the job "
      "sandbox; docs/writing-a-runner.md)";
}

Result<std::unique_ptr<RunnerProcess>> FvpBoard::Start(const RunSpec& spec) {
  if (!spec.firmware.empty() && !info_.custom_runners) {
    return MakeError(ErrorCode::kPermissionDenied, info_.custom_runners_off);
  }
  if (options_.relay.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "FVP board " + info_.name +
                         ": no mculab-fvp-relay (it is built beside mculab-agent; or set "
                         "fvp_relay in the board's config)");
  }
  auto fvp = ResolveProgram(options_.fvp.string());
  if (!fvp) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "FVP board " + info_.name + ": " + fvp.error().message +
                         " (install Arm's Corstone-300 Ecosystem FVP and set fvp to its "
                         "FVP_Corstone_SSE-300_Ethos-U55; docs/operator-guide.md)");
  }
  FvpOptions options = options_;
  options.fvp = *fvp;
  const std::filesystem::path firmware = spec.firmware.empty() ? options_.firmware : spec.firmware;
  auto id = spec.firmware.empty() ? firmware_.Identify() : IdentifyFirmware(spec.firmware);
  if (!id) return id.error();
  if (sandbox_.kind() == Sandbox::Kind::kNamespaces && sandbox_.drops_privileges()) {
    // Found before starting anything: the run could only fail later, less clearly.
    return MakeError(ErrorCode::kFailedPrecondition,
                     "board " + info_.name +
                         ": the FVP's UART is a TCP port on loopback, and loopback is down in this "
                         "sandbox (namespaces, the agent running as root): use [sandbox] mode = "
                         "\"bwrap\" for FVP boards");
  }
  EmulatorLaunch launch;
  launch.dir_prefix = "mculab-fvp-";
  launch.argv = [&](const std::filesystem::path&, const std::filesystem::path& socket,
                    const std::filesystem::path& workload) -> Result<std::vector<std::string>> {
    return FvpRelayArgv(options, socket, firmware, workload);
  };
  launch.read_only = {firmware, FvpInstallDir(options.fvp)};
  launch.connect_timeout = options_.start_timeout + kConnectSlack;
  launch.no_link = "the FVP's UART was not reachable";
  launch.process = "relay";
  RunProvenance prov =
      EmulatedRunProvenance(*id, firmware, info_.serial, FvpNote(options_), options_.workload_addr);
  prov.emulated = true;  // the Corstone-300 runner cannot tell the FVP's cycle model from silicon
  auto runner = StartEmulator(launch, spec.workload, sandbox_, clock_, std::move(prov));
  if (!runner) return runner.error();
  // The runner parks its core after DONE and the FVP keeps simulating: the agent ends it.
  return std::unique_ptr<RunnerProcess>(std::move(*runner));
}

}  // namespace mculab::agent
