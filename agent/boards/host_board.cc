#include "agent/boards/host_board.h"

#include "agent/boards/child_runner_process.h"
#include "agent/io/temp_dir.h"

namespace mculab::agent {

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

Result<std::unique_ptr<RunnerProcess>> HostBoard::Start(const RunSpec& spec) {
  if (!spec.firmware.empty() && !spec.own_runner && !info_.custom_runners) {
    return MakeError(ErrorCode::kPermissionDenied, info_.custom_runners_off);
  }
  auto id = spec.firmware.empty() ? runner_.Identify() : IdentifyFirmware(spec.firmware);
  if (!id) return id.error();
  auto dir = TempDir::Create("mculab-host-");
  if (!dir) return dir.error();
  const auto workload = (*dir)->path() / "workload.bin";
  const auto stderr_file = (*dir)->path() / "runner.stderr";
  if (auto s =
          WriteFile(workload, std::string_view(reinterpret_cast<const char*>(spec.workload.data()),
                                               spec.workload.size()));
      !s) {
    return s.error();
  }
  if (auto s = sandbox_.PrepareWorkDir((*dir)->path()); !s) return s.error();
  const std::filesystem::path program = spec.firmware.empty() ? runner_.path() : spec.firmware;
  auto argv = sandbox_.Wrap({program.string(), workload.string()}, {}, (*dir)->path());
  if (!argv) return argv.error();
  SpawnOptions so;
  so.argv = std::move(*argv);
  so.pipe_stdin = true;
  so.pipe_stdout = true;
  so.stderr_file = stderr_file;
  auto proc = Subprocess::Spawn(so);
  if (!proc) return proc.error();
  UniqueFd in = (*proc)->TakeStdin();
  UniqueFd out = (*proc)->TakeStdout();
  RunProvenance prov;
  prov.firmware_sha256 = id->sha256;
  prov.toolchain = id->toolchain;
  prov.note =
      "host runner (Linux process): CLOCK_MONOTONIC nanoseconds on the agent's machine, "
      "not microcontroller cycles";
  return std::unique_ptr<RunnerProcess>(new ChildRunnerProcess(std::move(*dir), std::move(*proc),
                                                               std::move(out), std::move(in),
                                                               stderr_file, std::move(prov)));
}

}  // namespace mculab::agent
