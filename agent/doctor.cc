#include "agent/doctor.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "agent/config.h"
#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::seconds kVersionTimeout{20};
constexpr std::chrono::seconds kListTimeout{60};

constexpr const char* kUdevFix =
    "install deploy/udev/60-mculab-probes.rules as /etc/udev/rules.d/60-mculab-probes.rules, "
    "`udevadm control --reload && udevadm trigger`, and put the agent's user in plugdev and "
    "dialout (deploy/systemd/mculab.sysusers.conf)";
constexpr const char* kPipxFix =
    "install a current pyOCD for every user: `apt-get install pipx && PIPX_HOME=/opt/pipx "
    "PIPX_BIN_DIR=/usr/local/bin pipx install pyocd` (0.36 or later), then `pyocd pack install "
    "<target>` for STM32 targets; or use OpenOCD (`apt-get install openocd`) for the ST boards";
constexpr const char* kFvpFix =
    "Arm's FVPs are not in Debian: download the Corstone-300 Ecosystem FVP "
    "(FVP_Corstone_SSE-300) from developer.arm.com, run its installer (e.g. into "
    "/opt/arm/FVP_Corstone_SSE-300) and name "
    "models/Linux64_GCC-9.3/FVP_Corstone_SSE-300_Ethos-U55 in the board's config "
    "(docs/operator-guide.md)";

// A board as the file says it, every value as text (for checks only).
struct RawBoard {
  std::string name;
  std::string backend;
  std::map<std::string, std::string> keys;
  std::string Get(const std::string& k, const std::string& fallback = "") const {
    auto it = keys.find(k);
    return it == keys.end() ? fallback : it->second;
  }
};

std::string FirstLine(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) return line;
  }
  return "";
}

// "0.36.0" -> {0, 36}; {-1, -1} when it is not a version.
std::pair<int, int> MajorMinor(const std::string& v) {
  int a = -1, b = -1;
  if (std::sscanf(v.c_str(), "%d.%d", &a, &b) != 2) return {-1, -1};
  return {a, b};
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

class Doctor {
 public:
  explicit Doctor(const DoctorEnv& env) : env_(env) {}

  void Ok(const std::string& subject, const std::string& what) {
    out_.push_back({true, subject, what, ""});
  }
  void Fail(const std::string& subject, const std::string& what, const std::string& fix) {
    out_.push_back({false, subject, what, fix});
  }

  // Whether the server answers at the configured address and takes the agent's token.
  void CheckServer(const AgentConfig& cfg) {
    const std::string subject = "server " + cfg.server;
    if (!env_.check_server) return;  // tests without a network
    std::string token;
    if (!cfg.token_file.empty()) {
      auto t = ReadFile(cfg.token_file);
      if (!t) return;  // the token_file finding says why
      token = *t;
      while (!token.empty() &&
             (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
        token.pop_back();
      }
    }
    if (auto s = env_.check_server(cfg.server, token); !s) {
      const bool token_refused = s.error().code == ErrorCode::kUnauthenticated ||
                                 s.error().code == ErrorCode::kPermissionDenied;
      Fail(subject, s.error().message,
           token_refused ? "give the agent its own token (`mculab-server admin agent add NAME`) in "
                           "token_file"
                         : "start mculab-server there, or correct [agent] server (or --server)");
      return;
    }
    Ok(subject, "answers and accepts the agent's token");
  }

  // Runs `argv`; the first line of its output, or "" (with a finding) when it fails.
  std::string Version(const std::string& subject, const std::vector<std::string>& argv) {
    auto r = env_.runner->Run(argv, kVersionTimeout);
    if (!r) {
      Fail(subject, "`" + JoinArgv(argv) + "` did not run: " + r.error().message,
           "check that the program works when run by hand as the agent's user");
      return "";
    }
    if (!r->status.success()) {
      Fail(subject,
           "`" + JoinArgv(argv) + "` ended " + r->status.ToString() + ": " + FirstLine(r->output),
           "check that the program works when run by hand as the agent's user");
      return "";
    }
    return FirstLine(r->output);
  }

  // Whether `program` is there; a finding either way unless `quiet_ok`.
  bool Program(const std::string& subject, const std::string& program, const std::string& fix,
               std::string* path = nullptr) {
    auto p = env_.which(program);
    if (!p) {
      Fail(subject, program + " is not installed (" + p.error().message + ")", fix);
      return false;
    }
    if (path) *path = *p;
    return true;
  }

  void File(const std::string& subject, const std::string& key, const fs::path& p,
            const std::string& fix, bool executable = false) {
    if (p.empty()) return;
    if (!env_.access(p, F_OK)) {
      Fail(subject, key + " " + p.string() + " does not exist", fix);
    } else if (!env_.access(p, R_OK) || (executable && !env_.access(p, X_OK))) {
      Fail(subject,
           key + " " + p.string() + " is not " + (executable ? "executable" : "readable") +
               " by the agent's user",
           "fix its permissions (chmod/chown)");
    } else {
      Ok(subject, key + " " + p.string());
    }
  }

  void CheckSandbox(const SandboxConfig& c) {
    auto kind = env_.sandbox(c);
    if (!kind) {
      Fail("[sandbox]", "the job sandbox does not work: " + kind.error().message, "");
      return;
    }
    sandbox_kind_ = *kind;
    switch (*kind) {
      case Sandbox::Kind::kBwrap:
        Ok("[sandbox]", "job sandbox works: bubblewrap");
        break;
      case Sandbox::Kind::kNamespaces:
        Ok("[sandbox]",
           "job sandbox works: namespaces (no private file system view; bubblewrap is better)");
        break;
      case Sandbox::Kind::kOff:
        Fail("[sandbox]", "the job sandbox is off: jobs' runners run unconfined",
             "set [sandbox] mode = \"bwrap\" (apt-get install bubblewrap)");
        break;
    }
  }

  void Qemu(const RawBoard& b) {
    const std::string qemu = b.Get("qemu", "qemu-system-arm");
    std::string path;
    if (Program(b.name, qemu, "apt-get install qemu-system-arm", &path)) {
      if (auto v = Version(b.name, {path, "--version"}); !v.empty()) Ok(b.name, v);
      const std::string machine = b.Get("machine", "mps3-an547");
      auto machines = env_.runner->Run({path, "-M", "help"}, kVersionTimeout);
      if (!machines || !machines->status.success()) {
        Fail(b.name, "`" + qemu + " -M help` failed, so machine " + machine + " is unchecked",
             "run it by hand as the agent's user");
      } else if (machines->output.find(machine + " ") == std::string::npos) {
        Fail(b.name, qemu + " has no machine " + machine,
             "Debian 12's qemu-system-arm 7.2 has mps3-an547 and mps2-an500: correct machine, or "
             "install that QEMU");
      } else {
        Ok(b.name, "QEMU machine " + machine);
      }
    }
    const std::string plugin = b.Get("qemu_plugin");
    if (!plugin.empty()) {
      File(b.name, "qemu_plugin", plugin,
           "build it (cmake --build build --target mculab_qemu_counters) or correct qemu_plugin");
    } else if (env_.default_qemu_plugin.empty() || !env_.access(env_.default_qemu_plugin, R_OK)) {
      Fail(b.name,
           "no QEMU counting plugin (lib/libmculab-qemu-counters.so beside the agent): jobs "
           "asking for emulated events will fail on this board",
           "build and install the plugin with the agent, or set qemu_plugin");
    } else {
      Ok(b.name, "QEMU counting plugin " + env_.default_qemu_plugin.string());
    }
  }

  void Pyocd(const std::string& subject, const std::string& program, const std::string& target) {
    auto p = env_.which(program);
    if (!p) {
      if (env_.which("pyocd-gdbserver")) {
        Fail(subject,
             program +
                 " is not installed; Debian's python3-pyocd (0.13.1) is, and it has only the old "
                 "pyocd-gdbserver/pyocd-flashtool commands and no STM32F7/H7 targets",
             kPipxFix);
      } else {
        Fail(subject, program + " is not installed", kPipxFix);
      }
      return;
    }
    const std::string version = Version(subject, {*p, "--version"});
    if (version.empty()) return;
    const auto [major, minor] = MajorMinor(version);
    if (major < 0 || (major == 0 && minor < 14)) {
      Fail(subject, "pyOCD " + version + " is older than 0.14: no `pyocd gdbserver` command",
           kPipxFix);
      return;
    }
    Ok(subject, "pyOCD " + version);
    if (target.empty() || target == "cortex_m") return;
    auto list = env_.runner->Run({*p, "list", "--targets"}, kListTimeout);
    if (!list || !list->status.success()) {
      Fail(subject, "`pyocd list --targets` failed, so target " + target + " is unchecked",
           "run it by hand as the agent's user");
      return;
    }
    if (Lower(list->output).find(Lower(target)) == std::string::npos) {
      Fail(subject, "pyOCD does not know target " + target,
           "`pyocd pack install " + target + "` as the agent's user (downloads the CMSIS pack)");
    } else {
      Ok(subject, "pyOCD knows target " + target);
    }
  }

  void Openocd(const std::string& subject, const std::vector<std::string>& argv) {
    std::string path;
    if (!Program(subject, argv[0], "apt-get install openocd", &path)) return;
    const std::string v = Version(subject, {path, "--version"});
    if (!v.empty()) Ok(subject, v);
    for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
      if (argv[i] != "-f" && argv[i] != "--file") continue;
      const fs::path script = argv[i + 1];
      const fs::path at = script.is_absolute() ? script : env_.openocd_scripts / script;
      if (env_.access(at, R_OK)) {
        Ok(subject, "OpenOCD script " + at.string());
      } else {
        Fail(subject,
             "OpenOCD script " + script.string() + " not found (looked at " + at.string() + ")",
             "correct the name (ls " + env_.openocd_scripts.string() +
                 "/target/); Debian 12's openocd 0.12 has interface/stlink.cfg, "
                 "target/stm32f7x.cfg and target/stm32h7x.cfg");
      }
    }
  }

  void Fvp(const std::string& subject, const std::string& program) {
    std::string path;
    if (!Program(subject, program, kFvpFix, &path)) return;
    const std::string v = Version(subject, {path, "--version"});
    if (!v.empty()) Ok(subject, "FVP " + v);
  }

  void FvpRelay(const RawBoard& b) {
    const std::string relay = b.Get("fvp_relay", env_.default_fvp_relay.string());
    if (relay.empty()) {
      Fail(b.name, "mculab-fvp-relay was not found beside mculab-agent",
           "build it (cmake --build build --target mculab-fvp-relay) and install it beside "
           "mculab-agent, or set fvp_relay");
      return;
    }
    File(b.name, "fvp_relay", relay,
         "build it (cmake --build build --target mculab-fvp-relay) or correct fvp_relay", true);
    if (sandbox_kind_ == Sandbox::Kind::kNamespaces && env_.agent_is_root) {
      Fail(b.name,
           "the sandbox is \"namespaces\" and the agent runs as root: the FVP's UART port on the "
           "sandbox's loopback cannot be reached (loopback stays down)",
           "use [sandbox] mode = \"bwrap\" (apt-get install bubblewrap)");
    }
  }

  void Probe(const std::string& subject, const std::string& serial) {
    if (serial.empty()) return;
    auto list = env_.probes->List();
    if (!list) {
      Fail(subject, "cannot list USB devices: " + list.error().message,
           "check libusb and that /dev/bus/usb is readable");
      return;
    }
    int unreadable = 0;
    std::string present;
    for (const auto& p : *list) {
      if (SerialsMatch(p.serial, serial)) {
        char node[64];
        std::snprintf(node, sizeof(node), "/dev/bus/usb/%03d/%03d", p.bus, p.address);
        if (env_.access(node, R_OK | W_OK)) {
          Ok(subject, "probe " + p.Describe() + " at " + node);
        } else {
          Fail(subject,
               "probe " + p.Describe() + " is plugged in but " + node +
                   " is not readable and writable by the agent's user",
               kUdevFix);
        }
        return;
      }
      if (p.serial.empty()) ++unreadable;
      present += (present.empty() ? "" : ", ") + p.Describe();
    }
    if (unreadable > 0) {
      Fail(subject,
           "probe with serial " + serial + " not found; " + std::to_string(unreadable) +
               " debug probe(s) could not be opened to read their serial number",
           kUdevFix);
    } else {
      Fail(subject,
           "probe with serial " + serial + " is not plugged in (debug probes present: " +
               (present.empty() ? "none" : present) + ")",
           "plug it in, or correct serial (`mculab-agent doctor` lists the probes present)");
    }
  }

  void SerialPort(const std::string& subject, const std::string& key, const std::string& port) {
    // Only a port path is checked: "serial" (the probe's by-id port, looked up per run), sockets
    // and "rtt" are not files the agent opens by name.
    if (port.empty() || port[0] != '/') return;
    if (!env_.access(port, F_OK)) {
      Fail(subject, key + " " + port + " does not exist",
           "plug the board in and install deploy/udev/60-mculab-probes.rules: its port is then "
           "/dev/mculab/tty-<probe serial>-<interface> (ls -l /dev/mculab/)");
    } else if (!env_.access(port, R_OK | W_OK)) {
      Fail(subject, key + " " + port + " is not readable and writable by the agent's user",
           "put the agent's user in dialout (usermod -aG dialout mculab) and install the udev "
           "rules");
    } else {
      Ok(subject, key + " " + port);
    }
  }

  void GdbServer(const RawBoard& b) {
    const std::string tmpl = b.Get("gdb_server");
    if (tmpl.empty()) return;
    auto argv = SplitCommandLine(tmpl);
    if (argv.empty()) return;
    const std::string prog = fs::path(argv[0]).filename().string();
    if (prog == "openocd") {
      Openocd(b.name, argv);
    } else if (prog == "pyocd") {
      Pyocd(b.name, argv[0], b.Get("target"));
    } else if (prog.find("JLinkGDBServer") != std::string::npos) {
      Program(b.name, argv[0],
              "SEGGER's J-Link Software is not in Debian: install the .deb from segger.com "
              "(J-Link Software and Documentation Pack)");
    } else if (prog.rfind("FVP_", 0) == 0) {
      Fvp(b.name, argv[0]);
    } else {
      Program(b.name, argv[0], "install it, or correct gdb_server");
    }
  }

  void CheckBoard(const RawBoard& b) {
    const std::string firmware_fix =
        "build the firmware (build/firmware/mculab-runner-<port>.elf) and copy it there, or "
        "correct firmware";
    if (b.backend == "qemu") {
      Qemu(b);
      File(b.name, "firmware", b.Get("firmware"), firmware_fix);
    } else if (b.backend == "host") {
      File(b.name, "runner", b.Get("runner", env_.default_host_runner.string()),
           "build mculab-runner-host, or correct runner", true);
    } else if (b.backend == "pyocd") {
      Pyocd(b.name, b.Get("pyocd", "pyocd"), b.Get("target"));
      File(b.name, "firmware", b.Get("firmware"), firmware_fix);
      Probe(b.name, b.Get("serial"));
      SerialPort(b.name, "console", b.Get("console"));
    } else if (b.backend == "gdb") {
      GdbServer(b);
      File(b.name, "firmware", b.Get("firmware"), firmware_fix);
      Probe(b.name, b.Get("serial"));
      SerialPort(b.name, "link", b.Get("link"));
    } else if (b.backend == "fvp") {
      Fvp(b.name, b.Get("fvp", "FVP_Corstone_SSE-300_Ethos-U55"));
      FvpRelay(b);
      File(b.name, "firmware", b.Get("firmware"), firmware_fix);
    } else if (b.backend == "fake") {
      Ok(b.name, "fake board: nothing to check");
    } else {
      Fail(b.name, "backend \"" + b.backend + "\" is not one doctor knows", "");
    }
  }

  std::vector<DoctorFinding> Take() { return std::move(out_); }

 private:
  const DoctorEnv& env_;
  std::vector<DoctorFinding> out_;
  Sandbox::Kind sandbox_kind_ = Sandbox::Kind::kOff;
};

std::string NodeText(const toml::node& n) {
  if (auto s = n.value<std::string>()) return *s;
  if (auto i = n.value<std::int64_t>()) return std::to_string(*i);
  if (auto b = n.value<bool>()) return *b ? "true" : "false";
  return "";
}

}  // namespace

std::vector<std::string> SplitCommandLine(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < line.size()) {
        cur += line[++i];
      } else {
        cur += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(cur));
  return out;
}

std::string FormatFinding(const DoctorFinding& f) {
  std::string s = (f.ok ? "ok    " : "FAIL  ") + f.subject + ": " + f.what;
  if (!f.ok && !f.fix.empty()) s += " -> fix: " + f.fix;
  return s;
}

std::vector<DoctorFinding> RunDoctor(const fs::path& config_file, const DoctorEnv& env) {
  Doctor d(env);
  auto cfg = LoadAgentConfig(config_file, env.default_host_runner);
  if (!cfg) {
    d.Fail("config", cfg.error().message, "correct the file (deploy/agent.example.toml)");
  } else {
    d.Ok("config",
         config_file.string() + " parses, " + std::to_string(cfg->boards.size()) + " board(s)");
    d.CheckServer(*cfg);
  }
  std::ifstream in(config_file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  toml::table root;
  try {
    root = toml::parse(text.str(), config_file.string());
  } catch (const toml::parse_error&) {
    return d.Take();  // LoadAgentConfig's finding says why
  }
  SandboxConfig sc;
  if (const toml::table* s = root["sandbox"].as_table()) {
    sc.mode = (*s)["mode"].value_or(sc.mode);
    sc.bwrap = (*s)["bwrap"].value_or(sc.bwrap);
    sc.user = (*s)["user"].value_or(sc.user);
  }
  d.CheckSandbox(sc);
  if (const toml::table* a = root["agent"].as_table()) {
    if (auto token = (*a)["token_file"].value<std::string>()) {
      fs::path p = *token;
      if (p.is_relative()) p = fs::absolute(config_file).parent_path() / p;
      d.File("[agent]", "token_file", p, "create it (the agent's token from `mculab-server`)");
    }
  }
  if (const toml::array* boards = root["board"].as_array()) {
    for (const auto& node : *boards) {
      const toml::table* t = node.as_table();
      if (!t) continue;
      RawBoard b;
      for (const auto& [k, v] : *t) b.keys[std::string(k.str())] = NodeText(v);
      b.name = b.Get("name", "(unnamed board)");
      b.backend = b.Get("backend");
      for (const char* key : {"firmware", "qemu_plugin", "fvp_relay", "runner"}) {
        auto it = b.keys.find(key);
        if (it != b.keys.end() && !it->second.empty() && fs::path(it->second).is_relative()) {
          it->second = (fs::absolute(config_file).parent_path() / it->second).string();
        }
      }
      d.CheckBoard(b);
    }
  }
  // What is plugged in, so that a wrong serial can be corrected from this output.
  if (auto probes = env.probes->List()) {
    for (const auto& p : *probes) d.Ok("usb", "debug probe " + p.Describe());
    if (probes->empty()) d.Ok("usb", "no debug probe is plugged in");
  }
  return d.Take();
}

DoctorEnv RealDoctorEnv() {
  DoctorEnv env;
  env.which = [](const std::string& p) { return ResolveProgram(p); };
  env.runner = &RealProcessRunner();
  env.access = [](const fs::path& p, int mode) { return ::access(p.c_str(), mode) == 0; };
  env.sandbox = [](const SandboxConfig& c) -> Result<Sandbox::Kind> {
    auto s = Sandbox::Create(c);
    if (!s) return s.error();
    return s->kind();
  };
  env.agent_is_root = ::geteuid() == 0;
  return env;
}

}  // namespace mculab::agent
