// One board as the agent's configuration describes it ([[boards]] in agent.toml): what MakeBoards
// builds a Board from. Parsed and checked by agent/config.cc.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

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

// The backends a board may use, for messages: "qemu, host, pyocd, gdb, fake".
std::string KnownBackends();

}  // namespace mculab::agent
