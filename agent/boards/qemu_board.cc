#include "agent/boards/qemu_board.h"

#include <cstdio>

#include "agent/boards/emulator_process.h"
#include "agent/boards/gdb_board.h"
#include "agent/boards/plugin_counts.h"

namespace mculab::agent {
namespace {

// QEMU starts in well under a second; this only bounds a QEMU that hangs before listening.
constexpr std::chrono::seconds kConnectTimeout{15};
// Where the counting plugin writes, in the run's folder.
constexpr const char* kCountsFile = "counts.txt";

}  // namespace

std::vector<std::string> QemuArgv(const QemuOptions& o, const std::filesystem::path& link_socket,
                                  const std::filesystem::path& workload_file) {
  return {
      o.qemu_binary,
      "-M",
      o.machine,
      "-kernel",
      o.firmware.string(),
      "-icount",
      "shift=" + std::to_string(o.icount_shift) + ",sleep=off",
      "-sandbox",
      kQemuSandboxOption,
      // Only what this command line says: no config files from the host's /etc (the sandbox
      // does not show them).
      "-no-user-config",
      "-display",
      "none",
      "-monitor",
      "none",
      "-chardev",
      "socket,id=link,path=" + QemuOptValue(link_socket.string()) + ",server=on,wait=on",
      "-serial",
      "chardev:link",
      // No cpu-num: it would make the loader set the PC to the workload address.
      "-device",
      "loader,file=" + QemuOptValue(workload_file.string()) +
          ",addr=" + HexAddress(o.workload_addr),
  };
}

std::string QemuWarmServerTemplate(const QemuOptions& o) {
  auto quoted = [](const std::string& v) {
    std::string q = "'";
    for (char c : v) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  return quoted(o.qemu_binary) + " -M " + quoted(o.machine) +
         " -S -icount shift=" + std::to_string(o.icount_shift) + ",sleep=off -sandbox " +
         kQemuSandboxOption +
         " -no-user-config -display none -monitor none"
         " -chardev socket,id=link,path={link},server=on,wait=on -serial chardev:link"
         " -chardev socket,id=gdb,path={gdb},server=on,wait=off -gdb chardev:gdb";
}

std::vector<CounterUnitInfo> QemuCounterUnits(const QemuOptions& o) {
  if (o.plugin.empty()) return {};
  // mps3-an547 is a Cortex-M55 (Helium); mps2-an500 a Cortex-M7.
  const bool mve = o.machine == "mps3-an547";
  return {CounterUnitInfo{kQemuPluginUnit, kQemuPluginMaxSimultaneous, QemuPluginEvents(mve),
                          /*emulated=*/true, /*external=*/true}};
}

std::string QemuNote(const QemuOptions& o) {
  return "QEMU " + o.machine + " -icount shift=" + std::to_string(o.icount_shift) +
         ": emulated; the timer counts executed instructions (virtual time at 2^" +
         std::to_string(o.icount_shift) + " ns per instruction), not silicon cycles";
}

QemuBoard::QemuBoard(BoardInfo info, QemuOptions options, Clock& clock, Sandbox sandbox)
    : info_(std::move(info)),
      options_(std::move(options)),
      clock_(clock),
      sandbox_(std::move(sandbox)),
      firmware_(options_.firmware) {
  info_.counter_units = QemuCounterUnits(options_);
  info_.custom_runners = options_.allow_custom_runners;
  info_.custom_runners_off =
      "QEMU board " + info_.name +
      " does not run uploaded runner ELFs: the agent's configuration must set "
      "allow_custom_runners = true for this board (the runner then runs in QEMU inside the job "
      "sandbox; docs/writing-a-runner.md)";
  if (options_.warm) {
    GdbBoardOptions g;
    g.server_command = QemuWarmServerTemplate(options_);
    g.gdb_link = "unix";
    g.link = "unix";
    g.firmware = options_.firmware;
    g.workload_addr = options_.workload_addr;
    g.start_timeout = kConnectTimeout;
    g.warm = true;
    g.note = QemuNote(options_) + "; loaded over GDB into a QEMU started ahead (warm board)";
    g.icount_shift = options_.icount_shift;
    warm_ = std::make_unique<GdbBoard>(info_, g, clock_, sandbox_);
  }
}

QemuBoard::~QemuBoard() = default;

int QemuBoard::warm_starts() const { return warm_ ? warm_->warm_starts() : 0; }

QemuBoard::WarmTimes QemuBoard::last_warm_times() const {
  if (!warm_) return {};
  const auto t = warm_->last_start_times();
  return {t.server, t.load, t.load_packets};
}

Result<std::unique_ptr<RunnerProcess>> QemuBoard::Start(const RunSpec& spec) {
  if (!spec.firmware.empty() && !spec.own_runner && !info_.custom_runners) {
    return MakeError(ErrorCode::kPermissionDenied, info_.custom_runners_off);
  }
  if (warm_ && spec.emulated_events.empty() && spec.firmware.empty()) return warm_->Start(spec);
  // A job's own runner ELF (already verified against its SHA-256) replaces the board's.
  QemuOptions options = options_;
  if (!spec.firmware.empty()) options.firmware = spec.firmware;
  auto id = spec.firmware.empty() ? firmware_.Identify() : IdentifyFirmware(spec.firmware);
  if (!id) return id.error();
  if (!spec.emulated_events.empty() && options_.plugin.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "emulated events were asked for but board " + info_.name +
                         " has no QEMU counting plugin configured (qemu_plugin)");
  }
  EmulatorLaunch launch;
  launch.dir_prefix = "mculab-qemu-";
  launch.argv = [&](const std::filesystem::path& dir, const std::filesystem::path& socket,
                    const std::filesystem::path& workload) -> Result<std::vector<std::string>> {
    std::vector<std::string> argv = QemuArgv(options, socket, workload);
    if (!spec.emulated_events.empty()) {
      argv.push_back("-plugin");
      // The plugin watches the runner's own marker region: a runner built by an older release
      // (a job's custom runner) has it elsewhere.
      argv.push_back(QemuPluginArg(options_.plugin.string(), (dir / kCountsFile).string(),
                                   spec.emulated_events, id->marker_region));
    }
    return argv;
  };
  launch.read_only = {options.firmware};
  if (!spec.emulated_events.empty()) launch.read_only.push_back(options_.plugin);
  launch.connect_timeout = kConnectTimeout;
  launch.no_link = "QEMU did not open its runner link";
  launch.process = "qemu";
  RunProvenance prov = EmulatedRunProvenance(*id, options.firmware, info_.serial,
                                             QemuNote(options_), options_.workload_addr);
  prov.icount_shift = options_.icount_shift;  // the custom runner when the job has one
  auto runner = StartEmulator(launch, spec.workload, sandbox_, clock_, std::move(prov));
  if (!runner) return runner.error();
  if (!spec.emulated_events.empty()) (*runner)->set_counts_file(kCountsFile);
  // The runner parks its core after DONE (no semihosting to exit QEMU with): the agent ends QEMU.
  return std::unique_ptr<RunnerProcess>(std::move(*runner));
}

}  // namespace mculab::agent
