// mculab-agent: registers this machine's boards with mculab-server and runs their assignments.
// Logs go to stderr; "mculab-agent ready: ..." is logged once, when first registered.

#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "agent/boards/make_boards.h"
#include "agent/config.h"
#include "agent/doctor.h"
#include "agent/io/clock.h"
#include "agent/io/probe_lister.h"
#include "agent/io/probe_listing.h"
#include "agent/io/probe_presence.h"
#include "agent/io/probe_watcher.h"
#include "agent/io/subprocess.h"
#include "agent/io/temp_dir.h"
#include "agent/link/agent_link.h"
#include "agent/link/server_check.h"
#include "agent/run/model_reference.h"
#include "agent/run/spool.h"

namespace {

using namespace mculab::agent;

std::filesystem::path DefaultRunner() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path() / "mculab-runner-host";
}

// The QEMU counting plugin where the build and the install put it: ../lib beside the binary.
std::filesystem::path DefaultQemuPlugin() {
  return BesideThisProgram("../lib/libmculab-qemu-counters.so");
}

// mculab-fvp-relay where the build and the install put it: beside the binary.
std::filesystem::path DefaultFvpRelay() { return BesideThisProgram("mculab-fvp-relay"); }

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "agent";
  return buf;
}

std::filesystem::path DefaultSpoolDir(const std::string& agent) {
  std::filesystem::path home;
  if (const char* h = std::getenv("MCULAB_HOME"); h && *h) {
    home = h;
  } else if (const char* u = std::getenv("HOME"); u && *u) {
    home = std::filesystem::path(u) / ".local/share/mculab";
  } else {
    home = "/var/lib/mculab";
  }
  return home / "agent" / agent / "spool";
}

int Fail(const std::string& message) {
  std::cerr << "mculab-agent: " << message << "\n";
  return 2;
}

// `mculab-agent doctor`: one line per finding on stdout; exit 1 when any is a problem.
int Doctor(const std::string& config_path, const std::string& ca_pem) {
  DoctorEnv env = RealDoctorEnv();
  auto probes = MakeLibusbProbeLister();
  env.probes = probes.get();
  env.default_fvp_relay = DefaultFvpRelay();
  env.default_qemu_plugin = DefaultQemuPlugin();
  env.default_host_runner = DefaultRunner();
  env.check_server = [&ca_pem](const std::string& server, const std::string& token) {
    return CheckServer(server, token, ca_pem, std::chrono::seconds(3));
  };
  int problems = 0;
  for (const auto& f : RunDoctor(config_path, env)) {
    std::cout << FormatFinding(f) << "\n";
    if (!f.ok) ++problems;
  }
  std::cout << (problems == 0 ? "no problems found"
                              : std::to_string(problems) + " problem(s) found")
            << "\n";
  return problems == 0 ? 0 : 1;
}

// `mculab-agent probes`: the debug probes plugged in and a [[board]] snippet for each.
int Probes(const std::string& by_id_dir) {
  auto probes = MakeLibusbProbeLister()->List();
  if (!probes) return Fail("cannot list USB devices: " + probes.error().message);
  std::cout << FormatProbeListing(*probes, by_id_dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mculab-agent: runs mculab benchmark jobs on this machine's boards"};
  std::string config_path, server, name, spool_dir, ca_file, log_level = "info";
  app.add_option("--config", config_path, "agent config file (TOML, see agent.example.toml)");
  app.add_option("--server", server, "server address host:port (overrides [agent] server)");
  app.add_option("--name", name, "agent name (overrides [agent] name)");
  app.add_option("--spool-dir", spool_dir, "spool directory (overrides [agent] spool_dir)");
  app.add_option("--ca", ca_file,
                 "CA certificate (PEM) that signed the server's TLS certificate: talk TLS");
  app.add_option("--log-level", log_level, "trace, debug, info, warn or error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.set_version_flag("--version", std::string("mculab-agent ") + MCULAB_VERSION);
  std::string doctor_config;
  auto* doctor = app.add_subcommand(
      "doctor",
      "check the config against what this machine has installed and plugged in (GDB servers, "
      "probes and their permissions, serial ports, QEMU, the FVP, the job sandbox): one line "
      "per finding, each problem with its fix");
  doctor->add_option("--config", doctor_config, "agent config file")->required();
  std::string by_id_dir = "/dev/serial/by-id";
  auto* probes_cmd = app.add_subcommand(
      "probes",
      "list the debug probes plugged in (kind, vendor:product, serial, bus/address, serial port) "
      "with a [[board]] config snippet for each");
  probes_cmd->add_option("--by-id-dir", by_id_dir, "where udev links serial ports by USB serial")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (*doctor) {
    std::string pem;
    if (!ca_file.empty()) {
      auto read = ReadFile(ca_file);
      if (!read) return Fail("--ca " + ca_file + ": " + read.error().message);
      pem = *read;
    }
    return Doctor(doctor_config, pem);
  }
  if (*probes_cmd) return Probes(by_id_dir);
  if (config_path.empty()) return Fail("--config is required (see --help)");

  spdlog::set_default_logger(spdlog::stderr_color_mt("agent"));
  spdlog::set_level(spdlog::level::from_str(log_level));

  // SIGINT/SIGTERM are taken by one thread with sigwait; every other thread (and, through
  // posix_spawn's reset, no child) inherits them blocked.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto cfg = LoadAgentConfig(config_path, DefaultRunner());
  if (!cfg) return Fail(cfg.error().message);
  if (!server.empty()) cfg->server = server;
  if (!name.empty()) cfg->name = name;
  if (!spool_dir.empty()) cfg->spool_dir = spool_dir;
  if (cfg->name.empty()) cfg->name = HostName();
  if (cfg->spool_dir.empty()) cfg->spool_dir = DefaultSpoolDir(cfg->name);
  for (auto& b : cfg->boards) {
    if (b.backend == "qemu" && b.qemu_plugin.empty()) {
      b.qemu_plugin = DefaultQemuPlugin();
      if (b.qemu_plugin.empty()) {
        spdlog::warn(
            "board {}: NO QEMU COUNTING PLUGIN: libmculab-qemu-counters.so is not in ../lib beside "
            "mculab-agent, so this board counts cycles only (no instructions, loads, stores, "
            "branches, mve_instructions); build it (cmake --build build --target "
            "mculab_qemu_counters) or set qemu_plugin in the board's config",
            b.name);
      }
    }
    if (b.backend == "fvp" && b.fvp_relay.empty()) b.fvp_relay = DefaultFvpRelay();
  }

  std::string token;
  if (!cfg->token_file.empty()) {
    auto t = ReadFile(cfg->token_file);
    if (!t) return Fail(config_path + ": [agent] key token_file: " + t.error().message);
    token = *t;
    while (!token.empty() &&
           (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
      token.pop_back();
    }
  }

  std::string ca_pem;
  if (!ca_file.empty()) {
    auto pem = ReadFile(ca_file);
    if (!pem) return Fail("--ca " + ca_file + ": " + pem.error().message);
    if (pem->find("-----BEGIN CERTIFICATE") == std::string::npos) {
      return Fail("--ca " + ca_file + " is not a PEM certificate");
    }
    ca_pem = *pem;
  }

  auto spool = Spool::Open(cfg->spool_dir);
  if (!spool) return Fail(spool.error().message);
  auto sandbox = Sandbox::Create(cfg->sandbox);
  if (!sandbox) return Fail(config_path + ": [sandbox]: " + sandbox.error().message);
  if (!sandbox->enabled()) {
    spdlog::warn(
        "job sandbox OFF ([sandbox] mode = \"off\"): QEMU and host runners, including "
        "jobs' uploaded runners, run unconfined as {}",
        geteuid() == 0 ? "root" : "the agent's user");
  } else if (!sandbox->fallback_reason().empty()) {
    spdlog::warn("job sandbox WITHOUT a private file system view: {}; falling back to {}",
                 sandbox->fallback_reason(), sandbox->Describe());
  } else {
    spdlog::info("job sandbox: {}", sandbox->Describe());
  }
  auto probes = MakeLibusbProbeLister();
  BoardDeps deps{RealClock(), *probes, RealProcessRunner(), cfg->spool_dir.parent_path() / "boards",
                 *sandbox};
  auto boards = MakeBoards(cfg->boards, deps);
  if (!boards) return Fail(boards.error().message);
  std::vector<Board*> board_ptrs;
  for (auto& b : *boards) {
    board_ptrs.push_back(b.get());
    spdlog::info("board {}: kind {}, backend {}", b->Info().name, b->Info().kind,
                 b->Info().backend);
  }
  spdlog::info("agent {} connecting to {} (spool {})", cfg->name, cfg->server,
               cfg->spool_dir.string());

  LinkOptions lo;
  lo.server = cfg->server;
  lo.agent_name = cfg->name;
  lo.version = MCULAB_VERSION;
  lo.heartbeat = std::chrono::milliseconds(cfg->heartbeat_ms);
  lo.token = token;
  lo.ca_pem = ca_pem;
  // Custom runners and blobs fetched from the server, next to the spool
  // (agent/<name>/artifact-cache).
  lo.artifacts.dir = cfg->spool_dir.parent_path() / "artifact-cache";
  // A model job's expected output, computed in the job sandbox under a memory limit.
  ModelReferenceOptions mro;
  mro.program = DefaultModelReferenceProgram();
  mro.sandbox = *sandbox;
  if (mro.program.empty()) {
    spdlog::warn("mculab-model-reference is not beside mculab-agent: model jobs will fail");
  }
  const ModelReference model_reference(std::move(mro));
  lo.executor.model_reference = &model_reference;
  AgentLink link(lo, board_ptrs, **spool, RealClock());

  // Boards behind a USB debug probe are offline while their probe is not plugged in: looked for
  // before the first Register, then every probe_rescan_ms and on libusb hotplug events.
  std::vector<BoardProbe> watched;
  for (const auto& b : cfg->boards) {
    if ((b.backend == "gdb" || b.backend == "pyocd") && !b.serial.empty() && !b.emulated) {
      watched.push_back({b.name, b.serial});
    }
  }
  std::unique_ptr<ProbePresence> presence;
  std::unique_ptr<ProbeWatcher> watcher;
  std::unique_ptr<LibusbHotplug> hotplug;
  if (!watched.empty()) {
    auto gone = [](const BoardProbeState& s) {
      return "its debug probe (USB serial " + s.serial + ") is not plugged in";
    };
    presence = std::make_unique<ProbePresence>(*probes, watched);
    if (auto first = presence->Rescan(); !first) {
      spdlog::warn("cannot list USB debug probes: {}; boards stay online until a scan works",
                   first.error().message);
    } else {
      for (const auto& s : presence->States()) {
        if (!s.online) link.SetBoardOffline(s.board, gone(s));
      }
    }
    watcher = std::make_unique<ProbeWatcher>(
        *presence, std::chrono::milliseconds(cfg->probe_rescan_ms),
        [&link, gone](const BoardProbeState& s) {
          link.SetBoardOffline(s.board, s.online ? std::string() : gone(s));
        },
        [](const mculab::Error& e) {
          spdlog::warn("cannot list USB debug probes: {}", e.message);
        });
    hotplug = MakeLibusbHotplug([w = watcher.get()] { w->Poke(); });
    spdlog::info("watching {} debug probe(s): rescan every {} ms{}", watched.size(),
                 cfg->probe_rescan_ms, hotplug ? " and on USB hotplug events" : "");
    watcher->Start();
  }

  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    spdlog::info("received {}: stopping the boards' runs and disconnecting", strsignal(sig));
    link.Stop();
  });
  link.Run();
  signals.join();
  hotplug.reset();
  if (watcher) watcher->Stop();
  spdlog::info("mculab-agent stopped");
  return 0;
}
