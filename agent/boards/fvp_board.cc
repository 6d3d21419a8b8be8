#include "agent/boards/fvp_board.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "agent/boards/child_runner_process.h"
#include "agent/io/run_dir.h"
#include "agent/io/unix_socket.h"

namespace mculab::agent {
namespace {

std::string Hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

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
                           "cpu0=" + workload_file.string() + "@" + Hex(o.workload_addr)});
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
  auto dir = RunDir::Create("mculab-fvp-");
  if (!dir) return dir.error();
  const auto workload = (*dir)->path() / "workload.bin";
  const auto socket = (*dir)->path() / "link.sock";
  if (auto w = (*dir)->CreateFile("workload.bin", AsChars(spec.workload)); !w) return w.error();
  auto capture = (*dir)->CreateCapture();
  if (!capture) return capture.error();
  SpawnOptions so;
  const auto argv = FvpRelayArgv(options, socket, firmware, workload);
  auto wrapped = sandbox_.Wrap(argv, {firmware, FvpInstallDir(options.fvp)}, (*dir)->path());
  if (!wrapped) return wrapped.error();
  if (auto s = sandbox_.PrepareWorkDir((*dir)->path()); !s) return s.error();
  so.argv = std::move(*wrapped);
  so.stderr_fd = capture->get();
  auto proc = Subprocess::Spawn(so);
  if (!proc) return proc.error();
  Subprocess* p = proc->get();
  std::optional<ExitStatus> died;
  auto fd = ConnectUnixSocket(socket, options_.start_timeout + kConnectSlack, clock_, [&] {
    auto st = p->Wait(std::chrono::milliseconds(0));
    if (st) died = *st;
    return !st.ok();
  });
  if (!fd) {
    std::string msg = "the FVP's UART was not reachable: " + fd.error().message;
    if (died) msg += "; relay " + died->ToString();
    if (auto tail = ReadTail(capture->get()); !tail.empty()) msg += "; stderr: " + tail;
    msg += " (command: " + JoinArgv(argv) + ")";
    return MakeError(ErrorCode::kUnavailable, msg);
  }
  UniqueFd write_fd(::fcntl(fd->get(), F_DUPFD_CLOEXEC, 0));
  if (!write_fd.valid()) return MakeError(ErrorCode::kInternal, ErrnoMessage("dup", errno));
  RunProvenance prov;
  prov.firmware_sha256 = id->sha256;
  prov.toolchain = id->toolchain;
  prov.board_serial = info_.serial;
  prov.note = FvpNote(options_);
  prov.emulated = true;  // the Corstone-300 runner cannot tell the FVP's cycle model from silicon
  prov.workload_addr = options_.workload_addr;
  prov.firmware_path = firmware.string();
  auto runner = std::make_unique<ChildRunnerProcess>(std::move(*dir), std::move(*proc),
                                                     std::move(*fd), std::move(write_fd),
                                                     std::move(*capture), std::move(prov));
  // The runner parks its core after DONE and the FVP keeps simulating: the agent ends it.
  runner->set_exits_after_done(false);
  return std::unique_ptr<RunnerProcess>(std::move(runner));
}

}  // namespace mculab::agent
