#include "agent/boards/emulator_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>

#include "agent/io/run_dir.h"
#include "agent/io/unix_socket.h"

namespace mculab::agent {

std::string HexAddress(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%08llx", static_cast<unsigned long long>(v));
  return buf;
}

Result<std::unique_ptr<ChildRunnerProcess>> StartEmulator(const EmulatorLaunch& launch,
                                                          std::span<const std::uint8_t> workload,
                                                          const Sandbox& sandbox, Clock& clock,
                                                          RunProvenance provenance) {
  auto dir = RunDir::Create(launch.dir_prefix);
  if (!dir) return dir.error();
  const auto workload_file = (*dir)->path() / "workload.bin";
  const auto socket = (*dir)->path() / "link.sock";
  if (auto w = (*dir)->CreateFile("workload.bin", AsChars(workload)); !w) return w.error();
  auto capture = (*dir)->CreateCapture();
  if (!capture) return capture.error();
  auto argv = launch.argv((*dir)->path(), socket, workload_file);
  if (!argv) return argv.error();
  SpawnOptions so;
  auto wrapped = sandbox.Wrap(*argv, launch.read_only, (*dir)->path());
  if (!wrapped) return wrapped.error();
  so.argv = std::move(*wrapped);
  if (auto s = sandbox.PrepareWorkDir((*dir)->path()); !s) return s.error();
  so.stderr_fd = capture->get();
  auto proc = Subprocess::Spawn(so);
  if (!proc) return proc.error();
  Subprocess* p = proc->get();
  std::optional<ExitStatus> died;
  auto fd = ConnectUnixSocket(socket, launch.connect_timeout, clock, [&] {
    auto st = p->Wait(std::chrono::milliseconds(0));
    if (st) died = *st;
    return !st.ok();
  });
  if (!fd) {
    std::string msg = launch.no_link + ": " + fd.error().message;
    if (died) msg += "; " + launch.process + " " + died->ToString();
    if (auto tail = ReadTail(capture->get()); !tail.empty()) msg += "; stderr: " + tail;
    msg += " (command: " + JoinArgv(so.argv) + ")";
    return MakeError(ErrorCode::kUnavailable, msg);
  }
  UniqueFd write_fd(::fcntl(fd->get(), F_DUPFD_CLOEXEC, 0));
  if (!write_fd.valid()) return MakeError(ErrorCode::kInternal, ErrnoMessage("dup", errno));
  auto runner = std::make_unique<ChildRunnerProcess>(std::move(*dir), std::move(*proc),
                                                     std::move(*fd), std::move(write_fd),
                                                     std::move(*capture), std::move(provenance));
  runner->set_exits_after_done(false);
  return runner;
}

RunProvenance EmulatedRunProvenance(const FirmwareIdentity& firmware,
                                    const std::filesystem::path& path, std::string serial,
                                    std::string note, std::uint32_t workload_addr) {
  RunProvenance prov;
  prov.firmware_sha256 = firmware.sha256;
  prov.toolchain = firmware.toolchain;
  prov.board_serial = std::move(serial);
  prov.note = std::move(note);
  prov.workload_addr = workload_addr;
  prov.firmware_path = path.string();
  return prov;
}

}  // namespace mculab::agent
