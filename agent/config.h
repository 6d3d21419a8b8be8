// The agent's configuration file (TOML; every key is documented in deploy/agent.example.toml):
//
//   [agent]   name, server, spool_dir, heartbeat_ms, token_file, probe_rescan_ms
//   [sandbox] enabled, bwrap, user (agent/io/sandbox.h: how jobs' runners are confined)
//   [[board]] name, kind, backend = "qemu" | "host" | "pyocd" | "gdb" | "fake",
//             tags = {cpu = "..."},
//             timeout_s, ram_bytes, and per backend:
//             qemu:  firmware, qemu, machine, icount_shift, workload_addr, warm, qemu_plugin (the
//             counting
//                    plugin; default: ../lib/libmculab-qemu-counters.so beside mculab-agent),
//                    allow_custom_runners
//             host:  runner, allow_custom_runners
//             pyocd: firmware, serial, target, console, baud, workload_addr, pyocd
//             gdb:   firmware, gdb_server (command template: {port} {gdb} {serial} {target}
//                    {link} {firmware}), gdb_link, gdb_port, gdb_host, link, baud, serial, target,
//                    workload_addr, vector_table, reset_command, emulated, allow_custom_runners
//             fake:  fault, fault_case, sample_delay_ms
//             fvp:   firmware, fvp, fvp_relay, workload_addr, num_macs, fvp_options,
//                    start_timeout_s, allow_custom_runners (agent/boards/fvp_board.h)
//
// Errors name the file, the board and the key. Relative paths are relative to the file's folder.
// ParseAgentConfig only parses and checks values; LoadAgentConfig also reads the file and checks
// that the firmware and runner files exist.
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/io/sandbox.h"
#include "common/result.h"

namespace mculab::agent {

struct BoardConfig {
  std::string name;
  std::string kind;
  std::string backend;
  std::map<std::string, std::string> tags;
  std::uint32_t timeout_s = 300;
  std::uint64_t ram_bytes = 0;
  std::filesystem::path firmware;     // qemu, pyocd
  std::filesystem::path runner;       // host
  bool allow_custom_runners = false;  // qemu, host: run jobs' uploaded runners (in the sandbox)
  // The TFLite runner for model jobs (mculab-tflite-runner-<port>); default: beside `firmware` or
  // `runner`, the same name with "mculab-tflite-runner-" for "mculab-runner-", when it exists.
  std::filesystem::path model_runner;
  std::string qemu = "qemu-system-arm";
  std::string machine = "mps3-an547";  // qemu: -M (mps3-an547 Cortex-M55, mps2-an500 Cortex-M7)
  std::filesystem::path qemu_plugin;   // qemu: the QEMU counting plugin (emulated events)
  int icount_shift = 5;
  // gdb: the emulator behind the GDB server runs QEMU -icount shift=N (`icount_shift` given for a
  // gdb board): its timer is reported in executed instructions as a qemu board's is. -1: not.
  int gdb_icount_shift = -1;
  bool warm = false;  // qemu: start the next run's QEMU ahead, halted (qemu_board.h)
  std::uint32_t workload_addr = 0x60000000;  // qemu default; pyocd must set it
  std::string serial;                        // pyocd, gdb
  std::string target;                        // pyocd, gdb
  std::filesystem::path console;             // pyocd
  std::uint32_t baud = 115200;               // pyocd, gdb
  std::string pyocd = "pyocd";               // pyocd
  std::string gdb_server;                    // gdb: the server command template
  std::string gdb_link = "tcp";              // gdb: tcp ({port}) | unix ({gdb}: a socket path)
  std::uint16_t gdb_port = 0;                // gdb: 0 picks a free port
  std::string gdb_host = "127.0.0.1";        // gdb
  std::string link = "unix";                 // gdb: unix | unix:PATH | tcp:HOST:PORT | tty path
  std::uint32_t vector_table = 0;            // gdb: 0: the lowest executable segment
  std::string reset_command;                 // gdb: monitor command after connecting
  bool emulated = false;                     // gdb: the server is an emulator (QEMU)
  std::string fault = "none";                // fake
  std::uint16_t fault_case = 0;              // fake
  std::uint32_t sample_delay_ms = 0;         // fake: wait before each sample (a slow runner)
  std::string fvp = "FVP_Corstone_SSE-300_Ethos-U55";  // fvp: the model's executable
  std::filesystem::path fvp_relay;       // fvp: default mculab-fvp-relay beside mculab-agent
  int num_macs = 128;                    // fvp: the Ethos-U55's MAC count
  std::vector<std::string> fvp_options;  // fvp: more FVP arguments, e.g. ["-C", "a.b=1"]
  std::uint32_t start_timeout_s = 60;    // fvp: until the FVP's UART is listening
};

struct AgentConfig {
  std::string name;  // default: the host name
  std::string server = "127.0.0.1:7420";
  std::filesystem::path spool_dir;  // default: $MCULAB_HOME/agent/<name>/spool
  std::uint32_t heartbeat_ms = 2000;
  // How often the debug probes of boards with a `serial` are looked for again (libusb hotplug
  // events, where libusb has them, trigger a scan at once as well).
  std::uint32_t probe_rescan_ms = 3000;
  std::filesystem::path token_file;  // optional: bearer token sent to the server
  SandboxConfig sandbox;
  std::vector<BoardConfig> boards;
};

// The backends a board may use, for messages: "qemu, host, pyocd, gdb, fake".
std::string KnownBackends();

// `source` names the file in messages; `base_dir` resolves relative paths; `default_runner` is
// used for host boards without `runner` (normally mculab-runner-host next to the agent binary).
Result<AgentConfig> ParseAgentConfig(std::string_view text, const std::string& source,
                                     const std::filesystem::path& base_dir,
                                     const std::filesystem::path& default_runner = {});

Result<AgentConfig> LoadAgentConfig(const std::filesystem::path& path,
                                    const std::filesystem::path& default_runner = {});

}  // namespace mculab::agent
