// PyocdBoard: a real board behind a debug probe, driven by pyOCD. Per run: find the probe by its
// USB serial number (ProbeLister), flash the runner ELF only when its SHA-256 differs from what
// this agent last flashed on the board (remembered in a file under the state dir), open the probe's
// serial console, then halt, write the workload to RAM at `workload_addr` and resume, all with one
// `pyocd cmd` so the runner starts after the console is open and its HELLO is not lost.
// A real board has no process to wait for: Kill() halts the core, Wait() returns at once.
// Thread-safety: as Board.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/boards/board.h"
#include "agent/boards/firmware_identity.h"
#include "agent/io/probe_lister.h"
#include "agent/io/subprocess.h"

namespace mculab::agent {

struct PyocdOptions {
  std::string pyocd = "pyocd";
  std::string target;  // pyOCD target name, e.g. stm32h743zitx
  std::string serial;  // the probe's USB serial number
  std::filesystem::path firmware;
  std::filesystem::path console;  // empty: the one under by_id_dir whose name holds the serial
  std::filesystem::path by_id_dir = "/dev/serial/by-id";
  std::uint32_t baud = 115200;
  std::uint32_t workload_addr = 0;
  std::filesystem::path state_dir;  // holds <board>.flashed-sha256
  std::chrono::seconds flash_timeout{180};
  std::chrono::seconds command_timeout{60};
};

std::vector<std::string> PyocdFlashArgv(const PyocdOptions& o);
std::vector<std::string> PyocdLoadArgv(const PyocdOptions& o,
                                       const std::filesystem::path& workload_file);
std::vector<std::string> PyocdHaltArgv(const PyocdOptions& o);

class PyocdBoard final : public Board {
 public:
  PyocdBoard(BoardInfo info, PyocdOptions options, ProbeLister& probes, ProcessRunner& runner);
  const BoardInfo& Info() const override { return info_; }
  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override;

  // The firmware hash this agent last flashed on the board ("" if none recorded).
  std::string FlashedSha256() const;

 private:
  std::filesystem::path StateFile() const;
  Status FlashIfChanged(const FirmwareIdentity& id);

  BoardInfo info_;
  PyocdOptions options_;
  ProbeLister& probes_;
  ProcessRunner& runner_;
  FirmwareFile firmware_;
};

}  // namespace mculab::agent
