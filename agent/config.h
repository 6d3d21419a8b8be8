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

#include "agent/boards/board_config.h"
#include "agent/io/sandbox.h"
#include "common/result.h"

namespace mculab::agent {

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

// `source` names the file in messages; `base_dir` resolves relative paths; `default_runner` is
// used for host boards without `runner` (normally mculab-runner-host next to the agent binary).
Result<AgentConfig> ParseAgentConfig(std::string_view text, const std::string& source,
                                     const std::filesystem::path& base_dir,
                                     const std::filesystem::path& default_runner = {});

Result<AgentConfig> LoadAgentConfig(const std::filesystem::path& path,
                                    const std::filesystem::path& default_runner = {});

}  // namespace mculab::agent
