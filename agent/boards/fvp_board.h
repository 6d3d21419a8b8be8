// FvpBoard: Arm's Corstone-300 Ecosystem FVP with Ethos-U55 (`FVP_Corstone_SSE-300_Ethos-U55`), one
// FVP process per run. The runner ELF is given with `-a cpu0=ELF` and the workload with
// `--data cpu0=FILE@ADDR`; no telnet windows, no visualisation, the Ethos-U55's MAC count set.
//
// The FVP offers its UART only as a TCP port, and it runs inside the job sandbox, whose network the
// agent cannot reach. So the board starts `mculab-fvp-relay` in the sandbox, which starts the FVP,
// connects to UART0's port on the sandbox's own loopback and serves it on a unix socket in the
// run's folder, which the agent connects to (agent/fvp_relay.cc). With `[sandbox] mode =
// "namespaces"` the loopback is down and, when the agent runs as root, cannot be brought up: such a
// run fails saying so; bubblewrap (the default) works.
//
// Results are emulated: Arm states that the FVP's CPU cycle counts are not representative of
// silicon and that its NPU (Ethos-U55 PMU) counts are approximate; the provenance note says so.
// The FVP cannot be installed on the project's machines: the backend is tested against a fake FVP
// (tests/fake_fvp/) that checks the command line and plays the UART and the failure modes.
// Thread-safety: as Board.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/boards/board.h"
#include "agent/boards/firmware_identity.h"
#include "agent/io/clock.h"
#include "agent/io/sandbox.h"

namespace mculab::agent {

struct FvpOptions {
  std::filesystem::path fvp = "FVP_Corstone_SSE-300_Ethos-U55";  // the model's executable
  std::filesystem::path relay;               // mculab-fvp-relay (default: beside mculab-agent)
  std::filesystem::path firmware;            // the runner ELF (mculab-runner-corstone300.elf)
  std::uint32_t workload_addr = 0x60000000;  // DDR, where the runner looks
  int num_macs = 128;                        // ethosu.num_macs: 32, 64, 128 or 256
  std::vector<std::string> extra_options;    // appended before -a (e.g. {"-C", "x=1"})
  std::chrono::seconds start_timeout{60};    // until the FVP announces UART0's port
  bool allow_custom_runners = false;
};

// The FVP's command line for one run (pure; unit-tested).
std::vector<std::string> FvpArgv(const FvpOptions& options, const std::filesystem::path& firmware,
                                 const std::filesystem::path& workload_file);

// The relay's command line around FvpArgv (pure; unit-tested).
std::vector<std::string> FvpRelayArgv(const FvpOptions& options,
                                      const std::filesystem::path& link_socket,
                                      const std::filesystem::path& firmware,
                                      const std::filesystem::path& workload_file);

// What the sandbox must show the FVP besides the runner and the workload: the model's install
// folder (the executable's folder, or the install root above `models/<platform>/`).
std::filesystem::path FvpInstallDir(const std::filesystem::path& fvp_binary);

// The provenance note for results from this backend (Arm's caveat included).
std::string FvpNote(const FvpOptions& options);

// Whether `n` is a MAC count the Ethos-U55 model accepts.
bool ValidEthosU55Macs(int n);

class FvpBoard final : public Board {
 public:
  FvpBoard(BoardInfo info, FvpOptions options, Clock& clock, Sandbox sandbox);
  const BoardInfo& Info() const override { return info_; }
  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override;

 private:
  BoardInfo info_;
  FvpOptions options_;
  Clock& clock_;
  Sandbox sandbox_;
  FirmwareFile firmware_;
};

}  // namespace mculab::agent
