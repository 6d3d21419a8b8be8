#include "agent/boards/make_boards.h"

#include "agent/boards/fake_board.h"
#include "agent/boards/fvp_board.h"
#include "agent/boards/gdb_board.h"
#include "agent/boards/host_board.h"
#include "agent/boards/qemu_board.h"

namespace mculab::agent {

namespace {

// The model runner beside a generic runner: mculab-runner-X -> mculab-tflite-runner-X.
std::filesystem::path ModelRunnerBeside(const std::filesystem::path& runner) {
  const std::string name = runner.filename().string();
  const std::string prefix = "mculab-runner-";
  if (!name.starts_with(prefix)) return {};
  std::filesystem::path beside =
      runner.parent_path() / ("mculab-tflite-runner-" + name.substr(prefix.size()));
  std::error_code ec;
  return std::filesystem::is_regular_file(beside, ec) ? beside : std::filesystem::path();
}

}  // namespace

Result<std::vector<std::unique_ptr<Board>>> MakeBoards(const std::vector<BoardConfig>& configs,
                                                       BoardDeps& deps) {
  std::vector<std::unique_ptr<Board>> boards;
  for (const auto& b : configs) {
    BoardInfo info;
    info.model_runner = b.model_runner;
    if (info.model_runner.empty() && (b.backend == "qemu" || b.backend == "host")) {
      info.model_runner = ModelRunnerBeside(b.backend == "host" ? b.runner : b.firmware);
    }
    info.name = b.name;
    info.kind = b.kind;
    info.tags = b.tags;
    info.ram_bytes = b.ram_bytes;
    info.backend = b.backend;
    info.default_timeout = std::chrono::seconds(b.timeout_s);
    if (b.backend == "qemu") {
      info.emulated = true;
      QemuOptions o;
      o.qemu_binary = b.qemu;
      o.machine = b.machine;
      o.firmware = b.firmware;
      o.icount_shift = b.icount_shift;
      o.workload_addr = b.workload_addr;
      o.plugin = b.qemu_plugin;
      o.allow_custom_runners = b.allow_custom_runners;
      o.warm = b.warm;
      boards.push_back(
          std::make_unique<QemuBoard>(std::move(info), std::move(o), deps.clock, deps.sandbox));
    } else if (b.backend == "host") {
      // The runner as a native Linux process: neither emulated nor an MCU's silicon. The server,
      // the CLI and the page label its results "host" from this tag (a config may not override it).
      info.tags["timing"] = "host";
      boards.push_back(std::make_unique<HostBoard>(std::move(info), b.runner,
                                                   b.allow_custom_runners, deps.sandbox));
    } else if (b.backend == "pyocd") {
      // The gdb backend with pyOCD's GDB server, the probe's serial port as the link (the
      // configured console, or the one under /dev/serial/by-id holding the serial) and a reset
      // after connecting. Configs written for the former pyocd backend keep working.
      info.serial = b.serial;
      GdbBoardOptions o;
      o.server_command = PyocdServerTemplate(b.pyocd);
      o.link = b.console.empty() ? "serial" : b.console.string();
      o.baud = b.baud;
      o.serial = b.serial;
      o.target = b.target;
      o.firmware = b.firmware;
      o.workload_addr = b.workload_addr;
      o.reset_command = "reset halt";
      o.state_dir = deps.state_dir;
      info.backend = "gdb (pyocd)";
      boards.push_back(
          std::make_unique<GdbBoard>(std::move(info), std::move(o), deps.clock, deps.sandbox));
    } else if (b.backend == "gdb") {
      info.emulated = b.emulated;
      GdbBoardOptions o;
      o.server_command = b.gdb_server;
      o.gdb_link = b.gdb_link;
      o.host = b.gdb_host;
      o.port = b.gdb_port;
      o.link = b.link;
      o.baud = b.baud;
      o.serial = b.serial;
      o.target = b.target;
      o.firmware = b.firmware;
      o.workload_addr = b.workload_addr;
      o.vector_table = b.vector_table;
      o.reset_command = b.reset_command;
      o.icount_shift = b.gdb_icount_shift;
      o.state_dir = deps.state_dir;
      o.allow_custom_runners = b.allow_custom_runners;
      boards.push_back(
          std::make_unique<GdbBoard>(std::move(info), std::move(o), deps.clock, deps.sandbox));
    } else if (b.backend == "fvp") {
      FvpOptions o;
      o.fvp = b.fvp;
      o.relay = b.fvp_relay;
      o.firmware = b.firmware;
      o.workload_addr = b.workload_addr;
      o.num_macs = b.num_macs;
      o.extra_options = b.fvp_options;
      o.start_timeout = std::chrono::seconds(b.start_timeout_s);
      o.allow_custom_runners = b.allow_custom_runners;
      boards.push_back(
          std::make_unique<FvpBoard>(std::move(info), std::move(o), deps.clock, deps.sandbox));
    } else if (b.backend == "fake") {
      info.emulated = true;
      auto fault = ParseFakeFault(b.fault);
      if (!fault) return fault.error();
      FakeOptions o;
      o.fault = *fault;
      o.fault_case = b.fault_case;
      o.sample_delay = std::chrono::milliseconds(b.sample_delay_ms);
      if (auto cpu = b.tags.find("cpu"); cpu != b.tags.end()) o.cpu = cpu->second;
      info.custom_runners = true;  // a simulated custom runner (fake_board.h)
      boards.push_back(std::make_unique<FakeBoard>(std::move(info), std::move(o), deps.clock));
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "board \"" + b.name + "\": unknown backend \"" +
                                                        b.backend +
                                                        "\" (known: " + KnownBackends() + ")");
    }
  }
  return boards;
}

}  // namespace mculab::agent
