#include "agent/boards/host_board.h"

#include <spdlog/spdlog.h>

#include "agent/boards/child_runner_process.h"
#include "agent/io/run_dir.h"

namespace mculab::agent {
namespace {
// Waits on the link for one line, then becomes the runner: `sh -c SCRIPT RUNNER WORKLOAD`. The
// shell reads its stdin a byte at a time, so the runner gets the link with nothing consumed.
constexpr const char* kWaitThenExec = "read -r _ && exec \"$0\" \"$1\"";
}  // namespace

struct HostBoard::Launch {
  std::unique_ptr<RunDir> dir;
  // The workload file, open since before the runner started: a runner started ahead gets its
  // workload through this descriptor, never by the file's name, which the runner could replace.
  UniqueFd workload;
  UniqueFd stderr_capture;
  std::unique_ptr<Subprocess> process;
  UniqueFd in, out;
  std::string runner_sha256;  // what the sandbox was given (a bind or a copy of the file)
};

HostBoard::HostBoard(BoardInfo info, std::filesystem::path runner, bool allow_custom_runners,
                     Sandbox sandbox)
    : info_(std::move(info)), runner_(std::move(runner)), sandbox_(std::move(sandbox)) {
  info_.custom_runners = allow_custom_runners;
  info_.custom_runners_off =
      "host board " + info_.name +
      " does not run uploaded executables: a custom host runner is native code on the agent's "
      "machine, so it is off unless the agent's configuration sets allow_custom_runners = true "
      "for this board (it then runs in the job sandbox; docs/writing-a-runner.md)";
}

HostBoard::~HostBoard() = default;

Result<std::unique_ptr<HostBoard::Launch>> HostBoard::Spawn(const std::filesystem::path& program,
                                                            bool waiting,
                                                            std::string_view workload) {
  auto launch = std::make_unique<Launch>();
  auto dir = RunDir::Create("mculab-host-");
  if (!dir) return dir.error();
  launch->dir = std::move(*dir);
  const auto workload_file = launch->dir->path() / "workload.bin";
  // A waiting runner's workload file exists already (empty), so it is the sandbox user's like
  // the folder, and Start() only fills it.
  auto file = launch->dir->CreateFile("workload.bin", workload);
  if (!file) return file.error();
  launch->workload = std::move(*file);
  auto capture = launch->dir->CreateCapture();
  if (!capture) return capture.error();
  launch->stderr_capture = std::move(*capture);
  std::vector<std::string> argv = {program.string(), workload_file.string()};
  std::vector<std::filesystem::path> read_only;
  if (waiting) {
    argv = {"sh", "-c", kWaitThenExec, program.string(), workload_file.string()};
    read_only = {program};
  }
  auto wrapped = sandbox_.Wrap(argv, read_only, launch->dir->path());
  if (!wrapped) return wrapped.error();
  if (auto s = sandbox_.PrepareWorkDir(launch->dir->path()); !s) return s.error();
  SpawnOptions so;
  so.argv = std::move(*wrapped);
  so.pipe_stdin = true;
  so.pipe_stdout = true;
  so.stderr_fd = launch->stderr_capture.get();
  auto proc = Subprocess::Spawn(so);
  if (!proc) return proc.error();
  launch->process = std::move(*proc);
  launch->in = launch->process->TakeStdin();
  launch->out = launch->process->TakeStdout();
  return launch;
}

void HostBoard::Prepare() {
  if (prepared_) return;
  auto id = runner_.Identify();
  if (!id) return;  // Start() reports it
  auto launch = Spawn(runner_.path(), true, {});
  if (!launch) {
    spdlog::warn("board {}: cannot start a runner ahead of the next job: {}", info_.name,
                 launch.error().message);
    return;
  }
  prepared_ = std::move(*launch);
  prepared_->runner_sha256 = id->sha256;
}

Result<std::unique_ptr<RunnerProcess>> HostBoard::Start(const RunSpec& spec) {
  if (!spec.firmware.empty() && !spec.own_runner && !info_.custom_runners) {
    return MakeError(ErrorCode::kPermissionDenied, info_.custom_runners_off);
  }
  auto id = spec.firmware.empty() ? runner_.Identify() : IdentifyFirmware(spec.firmware);
  if (!id) return id.error();
  const std::string_view workload(reinterpret_cast<const char*>(spec.workload.data()),
                                  spec.workload.size());
  std::unique_ptr<Launch> launch;
  if (prepared_ && prepared_->runner_sha256 != id->sha256 && spec.firmware.empty()) {
    spdlog::info("board {}: the runner changed since it was started ahead; starting it anew",
                 info_.name);
    prepared_.reset();
  }
  if (spec.firmware.empty() && prepared_) {
    launch = std::move(prepared_);
    static constexpr std::uint8_t kGo[] = {'\n'};
    Status s = Rewrite(launch->workload.get(), workload);
    if (s) s = WriteAll(launch->in.get(), kGo, std::chrono::milliseconds(100));
    if (s) {
      ++prepared_starts_;
    } else {
      spdlog::warn("board {}: the runner started ahead is gone ({}); starting one now", info_.name,
                   s.error().message);
      launch.reset();
    }
  }
  if (!launch) {
    const std::filesystem::path program = spec.firmware.empty() ? runner_.path() : spec.firmware;
    auto cold = Spawn(program, false, workload);
    if (!cold) return cold.error();
    launch = std::move(*cold);
  }
  RunProvenance prov;
  prov.firmware_sha256 = id->sha256;
  prov.toolchain = id->toolchain;
  prov.note =
      "host runner (Linux process): CLOCK_MONOTONIC nanoseconds on the agent's machine, "
      "not microcontroller cycles";
  return std::unique_ptr<RunnerProcess>(new ChildRunnerProcess(
      std::move(launch->dir), std::move(launch->process), std::move(launch->out),
      std::move(launch->in), std::move(launch->stderr_capture), std::move(prov)));
}

}  // namespace mculab::agent
