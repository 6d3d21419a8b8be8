// An emulator (QEMU, or the FVP behind its relay) as one run's runner process: its run folder with
// the workload, the process started in the sandbox with its stderr captured, and the runner link
// on a unix socket in that folder. What QemuBoard and FvpBoard share; each builds its own
// command line and provenance.
// Thread-safety: a free function over its arguments.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "agent/boards/child_runner_process.h"
#include "agent/boards/firmware_identity.h"
#include "agent/io/clock.h"
#include "agent/io/sandbox.h"
#include "common/result.h"

namespace mculab::agent {

struct EmulatorLaunch {
  std::string dir_prefix;  // the run folder's name prefix, "mculab-qemu-"
  // The command line, given the run folder, the link's socket and the workload's file in it.
  std::function<Result<std::vector<std::string>>(const std::filesystem::path& dir,
                                                 const std::filesystem::path& socket,
                                                 const std::filesystem::path& workload)>
      argv;
  std::vector<std::filesystem::path> read_only;  // what the sandbox lets it read
  std::chrono::milliseconds connect_timeout{15000};
  // For a link that never opened: "QEMU did not open its runner link", and the process's name
  // before its exit status ("qemu").
  std::string no_link;
  std::string process;
};

// "0x60000000": an address as emulators' options and messages write it (at least 8 digits).
std::string HexAddress(std::uint64_t v);

// What an emulated run's provenance starts from: the runner it runs (identity and path), the
// board's serial, the note on what its figures mean, where the workload is placed.
RunProvenance EmulatedRunProvenance(const FirmwareIdentity& firmware,
                                    const std::filesystem::path& path, std::string serial,
                                    std::string note, std::uint32_t workload_addr);

// Starts the emulator with `workload` placed in its run folder and connects to its link. The
// error when the link never opens names the process's exit status, its stderr's tail and the
// command. The runner process parks its core after DONE: the agent ends the emulator.
Result<std::unique_ptr<ChildRunnerProcess>> StartEmulator(const EmulatorLaunch& launch,
                                                          std::span<const std::uint8_t> workload,
                                                          const Sandbox& sandbox, Clock& clock,
                                                          RunProvenance provenance);

}  // namespace mculab::agent
