#include "agent/config.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "agent/boards/fake_board.h"
#include "agent/boards/fvp_board.h"

namespace mculab::agent {
namespace {

constexpr const char* kBackends[] = {"qemu", "host", "pyocd", "gdb", "fake", "fvp"};

const std::set<std::string> kAgentKeys = {"name",         "server",     "spool_dir",
                                          "heartbeat_ms", "token_file", "probe_rescan_ms"};
const std::set<std::string> kSandboxKeys = {"mode", "bwrap", "user"};
const std::set<std::string> kCommonBoardKeys = {"name", "kind",      "backend",
                                                "tags", "timeout_s", "ram_bytes"};
const std::map<std::string, std::set<std::string>> kBackendKeys = {
    {"qemu",
     {"firmware", "qemu", "machine", "icount_shift", "workload_addr", "qemu_plugin",
      "allow_custom_runners", "model_runner", "warm"}},
    {"host", {"runner", "allow_custom_runners", "model_runner"}},
    {"pyocd", {"firmware", "serial", "target", "console", "baud", "workload_addr", "pyocd"}},
    {"gdb",
     {"firmware", "gdb_server", "gdb_link", "gdb_port", "gdb_host", "link", "baud", "serial",
      "target", "workload_addr", "vector_table", "reset_command", "emulated", "icount_shift"}},
    {"fake", {"fault", "fault_case", "sample_delay_ms"}},
    {"fvp",
     {"firmware", "fvp", "fvp_relay", "workload_addr", "num_macs", "fvp_options", "start_timeout_s",
      "allow_custom_runners"}},
};

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& k : s) out += (out.empty() ? "" : ", ") + k;
  return out;
}

// Edit distance (insertions, deletions, substitutions) between two short keys.
std::size_t Distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "unknown key (did you mean \"warm\"? known: ...)": the nearest known key when one is close
// (at most a third of its letters off), then every known key.
std::string UnknownKey(const std::string& key, const std::set<std::string>& known,
                       const std::string& scope) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& k : known) {
    const std::size_t d = Distance(key, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  const bool close = !best.empty() && best_d * 3 <= std::max(key.size(), best.size());
  return "unknown key (" + (close ? "did you mean \"" + best + "\"? " : std::string()) + "known" +
         scope + ": " + Join(known) + ")";
}

// Builds messages like `agent.toml:12: board "an547-0": key icount_shift: must be 0..10`.
class Reader {
 public:
  Reader(std::string source, std::filesystem::path base_dir)
      : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  void SetContext(std::string ctx) { ctx_ = std::move(ctx); }

  Error Fail(const toml::node* node, const std::string& key, const std::string& what) const {
    std::string m = source_;
    if (node && node->source().begin.line > 0) m += ":" + std::to_string(node->source().begin.line);
    m += ": ";
    if (!ctx_.empty()) m += ctx_ + ": ";
    if (!key.empty()) m += "key " + key + ": ";
    return MakeError(ErrorCode::kInvalidArgument, m + what);
  }

  static const char* TypeName(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string:
        return "a string";
      case toml::node_type::integer:
        return "an integer";
      case toml::node_type::floating_point:
        return "a float";
      case toml::node_type::boolean:
        return "a boolean";
      case toml::node_type::table:
        return "a table";
      case toml::node_type::array:
        return "an array";
      default:
        return "a date/time";
    }
  }

  Status String(const toml::table& t, const std::string& key, std::string& out) const {
    const toml::node* n = t.get(key);
    if (!n) return {};
    if (!n->is_string()) return Fail(n, key, std::string("must be a string, got ") + TypeName(*n));
    out = **n->as_string();
    return {};
  }

  Status Path(const toml::table& t, const std::string& key, std::filesystem::path& out) const {
    std::string s;
    if (auto st = String(t, key, s); !st) return st;
    if (s.empty()) return {};
    if (s.size() > 1 && s[0] == '~' && s[1] == '/') {
      const char* home = std::getenv("HOME");
      if (home) s = std::string(home) + s.substr(1);
    }
    std::filesystem::path p(s);
    out = p.is_absolute() ? p : base_dir_ / p;
    return {};
  }

  template <typename Int>
  Status Integer(const toml::table& t, const std::string& key, Int& out, std::int64_t min,
                 std::int64_t max) const {
    const toml::node* n = t.get(key);
    if (!n) return {};
    std::int64_t v = 0;
    if (n->is_integer()) {
      v = **n->as_integer();
    } else if (n->is_string()) {  // "0x60000000" is accepted too
      const std::string& s = **n->as_string();
      try {
        std::size_t used = 0;
        v = std::stoll(s, &used, 0);
        if (used != s.size()) throw std::invalid_argument(s);
      } catch (const std::exception&) {
        return Fail(n, key, "must be an integer, got \"" + s + "\"");
      }
    } else {
      return Fail(n, key, std::string("must be an integer, got ") + TypeName(*n));
    }
    if (v < min || v > max) {
      return Fail(n, key,
                  "must be in " + std::to_string(min) + ".." + std::to_string(max) + ", got " +
                      std::to_string(v));
    }
    out = static_cast<Int>(v);
    return {};
  }

  Status Required(const toml::table& t, const toml::node* where, const std::string& key,
                  const std::string& why) const {
    if (t.contains(key)) return {};
    return Fail(where, key, "missing (" + why + ")");
  }

 private:
  std::string source_;
  std::filesystem::path base_dir_;
  std::string ctx_;
};

// The fvp backend's own keys (agent/boards/fvp_board.h).
Status ParseFvpKeys(Reader& r, const toml::table& t, BoardConfig& b) {
  if (auto s = r.String(t, "fvp", b.fvp); !s) return s;
  if (auto s = r.Path(t, "fvp_relay", b.fvp_relay); !s) return s;
  if (auto s = r.Integer(t, "num_macs", b.num_macs, 0, 4096); !s) return s;
  if (t.contains("num_macs") && !ValidEthosU55Macs(b.num_macs)) {
    return r.Fail(t.get("num_macs"), "num_macs",
                  "the Ethos-U55 has 32, 64, 128 or 256 MACs, got " + std::to_string(b.num_macs));
  }
  if (auto s = r.Integer(t, "start_timeout_s", b.start_timeout_s, 1, 3600); !s) return s;
  if (const toml::node* opts = t.get("fvp_options")) {
    const toml::array* a = opts->as_array();
    if (!a) {
      return r.Fail(opts, "fvp_options",
                    std::string("must be an array of strings like [\"-C\", \"a.b=1\"], got ") +
                        Reader::TypeName(*opts));
    }
    for (const auto& v : *a) {
      if (!v.is_string()) {
        return r.Fail(&v, "fvp_options",
                      std::string("must hold strings, got ") + Reader::TypeName(v));
      }
      b.fvp_options.push_back(**v.as_string());
    }
  }
  return {};
}

Status ParseBoard(Reader& r, const toml::table& t, BoardConfig& b,
                  const std::filesystem::path& default_runner) {
  if (auto s = r.Required(t, &t, "name", "every board needs a unique name"); !s) return s;
  if (auto s = r.String(t, "name", b.name); !s) return s;
  if (b.name.empty()) return r.Fail(t.get("name"), "name", "must not be empty");
  r.SetContext("board \"" + b.name + "\"");
  if (auto s = r.Required(t, &t, "kind", "e.g. kind = \"corstone300-qemu\""); !s) return s;
  if (auto s = r.String(t, "kind", b.kind); !s) return s;
  if (auto s = r.Required(t, &t, "backend", "one of: " + KnownBackends()); !s) return s;
  if (auto s = r.String(t, "backend", b.backend); !s) return s;
  auto keys = kBackendKeys.find(b.backend);
  if (keys == kBackendKeys.end()) {
    return r.Fail(t.get("backend"), "backend",
                  "unknown backend \"" + b.backend + "\" (known: " + KnownBackends() + ")");
  }
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (kCommonBoardKeys.count(key) || keys->second.count(key)) continue;
    bool other_backend = false;
    for (const auto& [backend, ks] : kBackendKeys) other_backend |= ks.count(key) > 0;
    if (other_backend) {
      return r.Fail(
          &v, key,
          "does not apply to backend " + b.backend + " (its keys: " + Join(keys->second) + ")");
    }
    std::set<std::string> all = kCommonBoardKeys;
    all.insert(keys->second.begin(), keys->second.end());
    return r.Fail(&v, key, UnknownKey(key, all, " for backend " + b.backend));
  }
  if (const toml::node* tags = t.get("tags")) {
    if (!tags->is_table()) {
      return r.Fail(tags, "tags",
                    std::string("must be a table like {cpu = \"cortex-m55\"}, got ") +
                        Reader::TypeName(*tags));
    }
    for (const auto& [k, v] : *tags->as_table()) {
      if (!v.is_string()) {
        return r.Fail(&v, "tags." + std::string(k.str()),
                      std::string("must be a string, got ") + Reader::TypeName(v));
      }
      b.tags[std::string(k.str())] = **v.as_string();
    }
  }
  if (auto s = r.Integer(t, "timeout_s", b.timeout_s, 1, 7 * 24 * 3600); !s) return s;
  if (auto s = r.Integer(t, "ram_bytes", b.ram_bytes, 0, INT64_MAX); !s) return s;
  if (auto s = r.Path(t, "firmware", b.firmware); !s) return s;
  if (auto s = r.Path(t, "runner", b.runner); !s) return s;
  if (auto s = r.Path(t, "model_runner", b.model_runner); !s) return s;
  if (const toml::node* allow = t.get("allow_custom_runners")) {
    if (!allow->is_boolean()) {
      return r.Fail(allow, "allow_custom_runners",
                    std::string("must be true or false, got ") + Reader::TypeName(*allow));
    }
    b.allow_custom_runners = **allow->as_boolean();
  }
  if (const toml::node* warm = t.get("warm")) {
    if (!warm->is_boolean()) {
      return r.Fail(warm, "warm",
                    std::string("must be true or false, got ") + Reader::TypeName(*warm));
    }
    b.warm = **warm->as_boolean();
  }
  if (auto s = r.String(t, "qemu", b.qemu); !s) return s;
  if (auto s = r.String(t, "machine", b.machine); !s) return s;
  if (b.machine != "mps3-an547" && b.machine != "mps2-an500") {
    return r.Fail(t.get("machine"), "machine",
                  "\"" + b.machine +
                      "\" is not a machine the runner has a port for (mps3-an547: Cortex-M55, "
                      "mps2-an500: Cortex-M7)");
  }
  if (auto s = r.Path(t, "qemu_plugin", b.qemu_plugin); !s) return s;
  if (auto s = r.Integer(t, "icount_shift", b.icount_shift, 0, 10); !s) return s;
  if (auto s = r.Integer(t, "workload_addr", b.workload_addr, 0, UINT32_MAX); !s) return s;
  if (auto s = r.String(t, "serial", b.serial); !s) return s;
  if (auto s = r.String(t, "target", b.target); !s) return s;
  if (auto s = r.Path(t, "console", b.console); !s) return s;
  if (auto s = r.Integer(t, "baud", b.baud, 1, 20'000'000); !s) return s;
  if (auto s = r.String(t, "pyocd", b.pyocd); !s) return s;
  if (auto s = r.String(t, "gdb_server", b.gdb_server); !s) return s;
  if (auto s = r.Integer(t, "gdb_port", b.gdb_port, 0, 65535); !s) return s;
  if (auto s = r.String(t, "gdb_host", b.gdb_host); !s) return s;
  if (auto s = r.String(t, "gdb_link", b.gdb_link); !s) return s;
  if (b.gdb_link != "tcp" && b.gdb_link != "unix") {
    return r.Fail(t.get("gdb_link"), "gdb_link",
                  "must be \"tcp\" or \"unix\", got \"" + b.gdb_link + "\"");
  }
  if (auto s = r.String(t, "link", b.link); !s) return s;
  if (!(b.link == "unix" || b.link == "rtt" || b.link == "serial" || b.link.starts_with("unix:") ||
        b.link.starts_with("tcp:") || b.link.starts_with("/"))) {
    return r.Fail(t.get("link"), "link",
                  "must be \"unix\", \"unix:PATH\", \"tcp:HOST:PORT\", \"rtt\", \"serial\" (the "
                  "probe's port under /dev/serial/by-id) or a serial port path, got \"" +
                      b.link + "\"");
  }
  if (b.backend == "gdb" && t.get("icount_shift") != nullptr) b.gdb_icount_shift = b.icount_shift;
  if (auto s = r.Integer(t, "vector_table", b.vector_table, 0, UINT32_MAX); !s) return s;
  if (auto s = r.String(t, "reset_command", b.reset_command); !s) return s;
  if (const toml::node* e = t.get("emulated")) {
    if (!e->is_boolean()) {
      return r.Fail(e, "emulated",
                    std::string("must be true or false, got ") + Reader::TypeName(*e));
    }
    b.emulated = **e->as_boolean();
  }
  if (auto s = r.String(t, "fault", b.fault); !s) return s;
  if (auto s = r.Integer(t, "fault_case", b.fault_case, 0, 65535); !s) return s;
  if (auto s = r.Integer(t, "sample_delay_ms", b.sample_delay_ms, 0, 60'000); !s) return s;
  if (auto s = ParseFvpKeys(r, t, b); !s) return s;

  if (b.backend == "qemu") {
    if (auto s = r.Required(t, &t, "firmware", "the runner ELF QEMU boots"); !s) return s;
  } else if (b.backend == "host") {
    if (b.runner.empty()) b.runner = default_runner;
    if (b.runner.empty()) {
      return r.Fail(&t, "runner", "missing (the mculab-runner-host binary)");
    }
  } else if (b.backend == "pyocd") {
    if (auto s = r.Required(t, &t, "firmware", "the runner ELF to flash"); !s) return s;
    if (auto s = r.Required(t, &t, "serial", "the debug probe's USB serial number"); !s) return s;
    if (auto s = r.Required(t, &t, "target", "the pyOCD target name"); !s) return s;
    if (auto s = r.Required(t, &t, "workload_addr", "where in RAM the runner reads its workload");
        !s) {
      return s;
    }
  } else if (b.backend == "gdb") {
    if (auto s = r.Required(t, &t, "firmware", "the runner ELF to load"); !s) return s;
    if (auto s = r.Required(t, &t, "gdb_server",
                            "the GDB server command, e.g. \"pyocd gdbserver -t {target} --uid "
                            "{serial} --port {port}\"");
        !s) {
      return s;
    }
    if (auto s = r.Required(t, &t, "workload_addr", "where in RAM the runner reads its workload");
        !s) {
      return s;
    }
    if (b.link == "serial" && b.serial.empty()) {
      return r.Fail(t.get("link"), "link",
                    "\"serial\" finds the probe's port by its USB serial number: set serial");
    }
  } else if (b.backend == "fvp") {
    if (auto s = r.Required(t, &t, "firmware", "the runner ELF the FVP loads"); !s) return s;
  } else if (b.backend == "fake") {
    if (auto f = ParseFakeFault(b.fault); !f)
      return r.Fail(t.get("fault"), "fault", f.error().message);
  }
  return {};
}

}  // namespace

std::string KnownBackends() {
  std::string s;
  for (const char* b : kBackends) s += (s.empty() ? "" : ", ") + std::string(b);
  return s;
}

Result<AgentConfig> ParseAgentConfig(std::string_view text, const std::string& source,
                                     const std::filesystem::path& base_dir,
                                     const std::filesystem::path& default_runner) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        source + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  Reader r(source, base_dir);
  AgentConfig cfg;
  for (const auto& [k, v] : root) {
    if (k.str() != "agent" && k.str() != "board" && k.str() != "sandbox") {
      return r.Fail(&v, std::string(k.str()),
                    "unknown section (expected [agent], [sandbox] and [[board]])");
    }
  }
  if (const toml::node* a = root.get("agent")) {
    if (!a->is_table()) return r.Fail(a, "agent", "must be a table: [agent]");
    const toml::table& t = *a->as_table();
    r.SetContext("[agent]");
    for (const auto& [k, v] : t) {
      if (!kAgentKeys.count(std::string(k.str()))) {
        return r.Fail(&v, std::string(k.str()), UnknownKey(std::string(k.str()), kAgentKeys, ""));
      }
    }
    if (auto s = r.String(t, "name", cfg.name); !s) return s.error();
    if (auto s = r.String(t, "server", cfg.server); !s) return s.error();
    if (auto s = r.Path(t, "spool_dir", cfg.spool_dir); !s) return s.error();
    if (auto s = r.Integer(t, "heartbeat_ms", cfg.heartbeat_ms, 100, 600'000); !s) return s.error();
    if (auto s = r.Integer(t, "probe_rescan_ms", cfg.probe_rescan_ms, 100, 600'000); !s) {
      return s.error();
    }
    if (auto s = r.Path(t, "token_file", cfg.token_file); !s) return s.error();
  }
  if (const toml::node* sb = root.get("sandbox")) {
    if (!sb->is_table()) return r.Fail(sb, "sandbox", "must be a table: [sandbox]");
    const toml::table& t = *sb->as_table();
    r.SetContext("[sandbox]");
    for (const auto& [k, v] : t) {
      if (!kSandboxKeys.count(std::string(k.str()))) {
        return r.Fail(&v, std::string(k.str()), UnknownKey(std::string(k.str()), kSandboxKeys, ""));
      }
    }
    if (auto s = r.String(t, "mode", cfg.sandbox.mode); !s) return s.error();
    const std::string& m = cfg.sandbox.mode;
    if (m != "bwrap" && m != "auto" && m != "namespaces" && m != "off") {
      return r.Fail(t.get("mode"), "mode",
                    "\"" + m + "\" is not one of: " + std::string(SandboxModes()));
    }
    if (auto s = r.String(t, "bwrap", cfg.sandbox.bwrap); !s) return s.error();
    if (auto s = r.String(t, "user", cfg.sandbox.user); !s) return s.error();
  }
  const toml::node* boards = root.get("board");
  if (!boards) {
    r.SetContext("");
    return r.Fail(nullptr, "", "no [[board]] sections: the agent needs at least one board");
  }
  if (!boards->is_array_of_tables()) return r.Fail(boards, "board", "must be [[board]] tables");
  std::set<std::string> names;
  std::size_t i = 0;
  for (const auto& node : *boards->as_array()) {
    r.SetContext("board #" + std::to_string(++i));
    BoardConfig b;
    if (auto s = ParseBoard(r, *node.as_table(), b, default_runner); !s) return s.error();
    if (!names.insert(b.name).second) {
      return r.Fail(&node, "name", "board name \"" + b.name + "\" is used twice");
    }
    cfg.boards.push_back(std::move(b));
  }
  return cfg;
}

Result<AgentConfig> LoadAgentConfig(const std::filesystem::path& path,
                                    const std::filesystem::path& default_runner) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kNotFound,
                     "cannot read config file " + path.string() + ": " + std::strerror(errno));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto base = std::filesystem::absolute(path).parent_path();
  auto cfg = ParseAgentConfig(ss.str(), path.string(), base, default_runner);
  if (!cfg) return cfg;
  for (const auto& b : cfg->boards) {
    auto check = [&](const std::filesystem::path& p, const char* key) -> Status {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) {
        return MakeError(ErrorCode::kInvalidArgument, path.string() + ": board \"" + b.name +
                                                          "\": key " + key + ": file " +
                                                          p.string() + " does not exist");
      }
      return {};
    };
    if (b.backend == "qemu" || b.backend == "pyocd" || b.backend == "gdb" || b.backend == "fvp") {
      if (auto s = check(b.firmware, "firmware"); !s) return s.error();
    }
    if (b.backend == "qemu" && !b.qemu_plugin.empty()) {
      if (auto s = check(b.qemu_plugin, "qemu_plugin"); !s) return s.error();
    }
    if (b.backend == "host") {
      if (auto s = check(b.runner, "runner"); !s) return s.error();
      if (::access(b.runner.c_str(), X_OK) != 0) {
        return MakeError(ErrorCode::kInvalidArgument, path.string() + ": board \"" + b.name +
                                                          "\": key runner: " + b.runner.string() +
                                                          " is not executable");
      }
    }
  }
  return cfg;
}

}  // namespace mculab::agent
