#include "agent/boards/gdb_board.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "agent/boards/child_runner_process.h"
#include "agent/boards/emulator_process.h"
#include "agent/boards/gdb_rtt.h"
#include "agent/boards/qemu_board.h"
#include "agent/io/fd.h"
#include "agent/io/gdb_remote.h"
#include "agent/io/reaper.h"
#include "agent/io/run_dir.h"
#include "agent/io/serial_link.h"
#include "agent/io/subprocess.h"
#include "agent/io/temp_dir.h"
#include "agent/io/unix_socket.h"

namespace mculab::agent {
namespace {

constexpr std::uint32_t kVtorAddr = 0xE000ED08;  // SCB->VTOR on every Armv7-M/v8-M core
constexpr std::uint32_t kXpsrThumb = 0x01000000;

std::uint32_t Le32(std::span<const std::uint8_t> b, std::size_t off) {
  return static_cast<std::uint32_t>(b[off]) | static_cast<std::uint32_t>(b[off + 1]) << 8 |
         static_cast<std::uint32_t>(b[off + 2]) << 16 |
         static_cast<std::uint32_t>(b[off + 3]) << 24;
}
std::uint16_t Le16(std::span<const std::uint8_t> b, std::size_t off) {
  return static_cast<std::uint16_t>(b[off] | b[off + 1] << 8);
}

// Connects to a TCP listener that may not be up yet (retrying while refused).
Result<UniqueFd> ConnectTcp(const std::string& host, const std::string& port,
                            std::chrono::milliseconds timeout, Clock& clock,
                            const std::function<bool()>& keep_trying) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "link tcp:" + host + ":" + port + ": " + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(res, ::freeaddrinfo);
  const auto deadline = clock.Now() + timeout;
  while (true) {
    UniqueFd fd(::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return MakeError(ErrorCode::kInternal, ErrnoMessage("socket", errno));
    int r;
    do {
      r = ::connect(fd.get(), res->ai_addr, res->ai_addrlen);
    } while (r < 0 && errno == EINTR);
    if (r == 0) {
      if (auto s = SetNonBlocking(fd.get()); !s) return s.error();
      return fd;
    }
    const int err = errno;
    if (err != ECONNREFUSED) {
      return MakeError(ErrorCode::kUnavailable,
                       ErrnoMessage("connect tcp:" + host + ":" + port, err));
    }
    if (keep_trying && !keep_trying()) {
      return MakeError(ErrorCode::kUnavailable,
                       "gave up connecting to tcp:" + host + ":" + port + ": the server is gone");
    }
    if (clock.Now() >= deadline) {
      return MakeError(ErrorCode::kDeadlineExceeded, "no listener on tcp:" + host + ":" + port +
                                                         " after " +
                                                         std::to_string(timeout.count()) + " ms");
    }
    clock.SleepFor(std::chrono::milliseconds(5));
  }
}

class GdbRunnerProcess final : public RunnerProcess {
 public:
  GdbRunnerProcess(std::unique_ptr<RunDir> dir, std::unique_ptr<Subprocess> server,
                   std::unique_ptr<GdbRemote> gdb, std::unique_ptr<RttPump> rtt,
                   std::unique_ptr<SerialLink> serial, UniqueFd read_fd, UniqueFd write_fd,
                   UniqueFd stderr_capture, RunProvenance prov, bool halt_on_kill,
                   std::shared_ptr<Reaper> reaper)
      : halt_on_kill_(halt_on_kill),
        reaper_(std::move(reaper)),
        dir_(std::move(dir)),
        server_(std::move(server)),
        gdb_(std::move(gdb)),
        rtt_(std::move(rtt)),
        serial_(std::move(serial)),
        read_fd_(std::move(read_fd)),
        write_fd_(std::move(write_fd)),
        stderr_capture_(std::move(stderr_capture)),
        prov_(std::move(prov)) {}
  ~GdbRunnerProcess() override {
    Kill();
    read_fd_.Reset();
    write_fd_.Reset();
    serial_.reset();
    rtt_.reset();
    gdb_.reset();
    if (reaper_) {
      reaper_->Give(std::move(server_), std::move(dir_));  // killed now, reaped off this thread
    } else {
      server_.reset();  // kills the group and reaps
    }
  }

  Result<std::size_t> Read(std::span<std::uint8_t> buf,
                           std::chrono::milliseconds timeout) override {
    if (rtt_) return rtt_->Read(buf, timeout);
    if (!serial_ && !read_fd_.valid()) return MakeError(ErrorCode::kUnavailable, "link closed");
    auto n = serial_ ? serial_->Read(buf, timeout) : ReadSome(read_fd_.get(), buf, timeout);
    if (n.ok() && *n > 0) return n;
    // Nothing came: a dead GDB server (or probe) is an infrastructure failure, said as such.
    if (auto st = server_->Wait(std::chrono::milliseconds(0)); st.ok()) {
      return MakeError(ErrorCode::kUnavailable,
                       "the GDB server ended (" + st->ToString() + ") during the run");
    }
    return n;
  }
  Status Write(std::span<const std::uint8_t> bytes) override {
    if (rtt_) return rtt_->Write(bytes);
    if (serial_) return serial_->Write(bytes);
    if (!write_fd_.valid()) return MakeError(ErrorCode::kUnavailable, "link closed");
    return WriteAll(write_fd_.get(), bytes, std::chrono::seconds(2));
  }
  // The halt and the server's end are I/O (a thread joined, a GDB round trip of up to 2 s):
  // done outside mu_, so Diagnostics never waits on them. killed_ makes the first caller the
  // only one that does them.
  void Kill() override {
    {
      std::lock_guard lock(mu_);
      if (killed_) return;
      killed_ = true;
    }
    // Halt the core first (a real board keeps running otherwise), then stop the server.
    std::string note, diagnostics;
    if (rtt_) {
      rtt_->Stop();  // ends the pump's thread and halts the core
      const auto st = rtt_->stats();
      note = "RTT link: " + std::to_string(st.stops) + " stops, " +
             std::to_string(st.stopped.count()) + " us halted outside input waits, " +
             std::to_string(st.bytes_up) + " bytes up, " + std::to_string(st.bytes_down) + " down";
      diagnostics = rtt_->error();
    } else if (gdb_ && halt_on_kill_) {
      gdb_->set_timeout(std::chrono::seconds(2));
      if (auto stop = gdb_->Halt(); !stop) {
        diagnostics = "halting over GDB failed: " + stop.error().message;
      }
    }
    server_->Kill();
    std::lock_guard lock(mu_);
    rtt_note_ = std::move(note);
    if (!diagnostics.empty()) diagnostics_ = std::move(diagnostics);
  }
  // The runner has no process of its own: the server's is the one that can end.
  Result<ExitStatus> Wait(std::chrono::milliseconds timeout) override {
    return server_->Wait(timeout);
  }
  const RunProvenance& provenance() const override { return prov_; }
  // The runner parks its core after DONE; the session stops the board.
  bool ExitsAfterDone() const override { return false; }
  std::string Diagnostics() override {
    std::string d;
    {
      std::lock_guard lock(mu_);
      d = diagnostics_;
      if (!rtt_note_.empty()) d += (d.empty() ? "" : "; ") + rtt_note_;
    }
    if (auto tail = ReadTail(stderr_capture_.get()); !tail.empty()) {
      d += (d.empty() ? "" : "; ") + std::string("GDB server stderr: ") + tail;
    }
    return d;
  }

 private:
  // Halt the core before stopping the server: a real board keeps running otherwise; an emulator
  // (QEMU) ends with its process.
  const bool halt_on_kill_;
  // Set for an emulator: its exit is waited for, and its folder removed, off the board's thread.
  const std::shared_ptr<Reaper> reaper_;
  std::unique_ptr<RunDir> dir_;  // declared first: removed last
  std::unique_ptr<Subprocess> server_;
  std::unique_ptr<GdbRemote> gdb_;
  std::unique_ptr<RttPump> rtt_;        // the link when it is RTT; uses gdb_
  std::unique_ptr<SerialLink> serial_;  // the link when it is a serial port
  UniqueFd read_fd_;
  UniqueFd write_fd_;
  UniqueFd stderr_capture_;  // the GDB server's stderr, an unnamed file
  RunProvenance prov_;
  std::mutex mu_;  // guards the three below; held for no I/O
  bool killed_ = false;
  std::string diagnostics_;
  std::string rtt_note_;
};

// Where the runner starts: VTOR's value and the first two words of the vector table.
struct Entry {
  std::uint32_t vtor = 0;
  std::uint32_t sp = 0;
  std::uint32_t pc = 0;
};

// The vector table at `vector_table`, or (0) at the start of the lowest executable segment.
Result<Entry> FindEntry(const std::vector<ElfLoadSegment>& segments, std::uint32_t vector_table) {
  Entry e;
  e.vtor = vector_table;
  if (e.vtor == 0) {
    std::uint32_t lowest = UINT32_MAX;
    for (const auto& s : segments) {
      if (s.executable) lowest = std::min(lowest, s.paddr);
    }
    e.vtor = lowest;
  }
  bool found = false;
  for (const auto& s : segments) {
    if (e.vtor >= s.paddr && std::uint64_t{e.vtor} + 8 <= std::uint64_t{s.paddr} + s.data.size()) {
      e.sp = Le32(s.data, e.vtor - s.paddr);
      e.pc = Le32(s.data, e.vtor - s.paddr + 4);
      found = true;
    }
  }
  if (!found)
    return MakeError(ErrorCode::kInvalidArgument, "no vector table at " + HexAddress(e.vtor));
  return e;
}

// VTOR, SP, PC and xPSR's Thumb bit, as the core's reset would set them.
Status SetEntry(GdbRemote& g, const Entry& e) {
  const std::uint8_t vt[4] = {
      static_cast<std::uint8_t>(e.vtor), static_cast<std::uint8_t>(e.vtor >> 8),
      static_cast<std::uint8_t>(e.vtor >> 16), static_cast<std::uint8_t>(e.vtor >> 24)};
  if (auto w = g.WriteMemory(kVtorAddr, vt); !w) return w;
  if (auto w = g.WriteRegister("sp", e.sp); !w) return w;
  if (auto w = g.WriteRegister("pc", e.pc & ~1u); !w) return w;
  return g.WriteRegister("xpsr", kXpsrThumb);
}

}  // namespace

Result<std::vector<ElfLoadSegment>> ElfLoadSegments(std::span<const std::uint8_t> elf) {
  auto bad = [](const std::string& what) {
    return MakeError(ErrorCode::kInvalidArgument, "runner ELF: " + what);
  };
  if (elf.size() < 52 || std::memcmp(elf.data(),
                                     "\x7f"
                                     "ELF",
                                     4) != 0)
    return bad("not an ELF file");
  if (elf[4] != 1 || elf[5] != 1) return bad("not a 32-bit little-endian ELF");
  const std::uint32_t phoff = Le32(elf, 28);
  const std::uint16_t phentsize = Le16(elf, 42), phnum = Le16(elf, 44);
  if (phentsize < 32 || std::uint64_t{phoff} + std::uint64_t{phentsize} * phnum > elf.size()) {
    return bad("program headers beyond the end of the file");
  }
  std::vector<ElfLoadSegment> out;
  for (std::uint16_t i = 0; i < phnum; ++i) {
    const std::size_t h = phoff + std::size_t{phentsize} * i;
    if (Le32(elf, h) != 1) continue;  // PT_LOAD
    const std::uint32_t offset = Le32(elf, h + 4), paddr = Le32(elf, h + 12),
                        filesz = Le32(elf, h + 16), memsz = Le32(elf, h + 20),
                        flags = Le32(elf, h + 24);
    if (filesz == 0) continue;  // .bss: the runner's startup zeroes it
    if (std::uint64_t{offset} + filesz > elf.size()) {
      return bad("segment " + std::to_string(i) + " beyond the end of the file");
    }
    ElfLoadSegment s;
    s.paddr = paddr;
    s.memsz = memsz;
    s.executable = (flags & 1) != 0;
    s.data.assign(elf.begin() + offset, elf.begin() + offset + filesz);
    out.push_back(std::move(s));
  }
  if (out.empty()) return bad("no loadable segment");
  return out;
}

Result<std::vector<std::string>> ExpandCommandTemplate(
    const std::string& templ, const std::map<std::string, std::string>& values) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < templ.size(); ++i) {
    const char c = templ[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < templ.size()) {
        cur += templ[++i];
      } else {
        cur += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < templ.size()) {
      cur += templ[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote) return MakeError(ErrorCode::kInvalidArgument, "unterminated quote in: " + templ);
  if (in_word) words.push_back(std::move(cur));
  if (words.empty()) return MakeError(ErrorCode::kInvalidArgument, "empty GDB server command");
  for (auto& w : words) {
    std::string out;
    std::size_t pos = 0;
    while (true) {
      const auto open = w.find('{', pos);
      if (open == std::string::npos) break;
      const auto close = w.find('}', open);
      if (close == std::string::npos) break;
      const std::string name = w.substr(open + 1, close - open - 1);
      auto v = values.find(name);
      if (v == values.end()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "unknown placeholder {" + name + "} in the GDB server command");
      }
      out += w.substr(pos, open - pos) + v->second;
      pos = close + 1;
    }
    w = out + w.substr(pos);
  }
  return words;
}

std::string PyocdServerTemplate(const std::string& pyocd) {
  // The program is one word of the template: quote it when it has spaces.
  const bool plain = pyocd.find_first_of(" \t'\"\\") == std::string::npos;
  return (plain ? pyocd : "'" + pyocd + "'") +
         " gdbserver -t {target} --uid {serial} --port {port}";
}

bool IsQemuServer(const std::vector<std::string>& argv) {
  return !argv.empty() &&
         std::filesystem::path(argv[0]).filename().string().starts_with("qemu-system-");
}

GdbBoard::GdbBoard(BoardInfo info, GdbBoardOptions options, Clock& clock, Sandbox sandbox)
    : info_(std::move(info)),
      options_(std::move(options)),
      clock_(clock),
      sandbox_(std::move(sandbox)),
      firmware_(options_.firmware) {
  info_.serial = options_.serial;
  info_.custom_runners = options_.allow_custom_runners;
  info_.custom_runners_off =
      "board " + info_.name +
      " does not load uploaded runner ELFs: the agent's configuration must set "
      "allow_custom_runners = true for this board (docs/writing-a-runner.md)";
}

std::filesystem::path GdbBoard::StateFile() const {
  return options_.state_dir / (info_.name + ".flashed-sha256");
}

std::string GdbBoard::FlashedSha256() const {
  auto s = ReadFile(StateFile());
  if (!s) return {};
  std::string v = *s;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

// A started GDB server with the runner's link open and the GDB connection made, the core halted:
// everything of a run but the program and the workload.
struct GdbBoard::Server {
  std::unique_ptr<RunDir> dir;
  std::unique_ptr<Subprocess> proc;
  std::unique_ptr<GdbRemote> gdb;
  UniqueFd link;
  std::unique_ptr<SerialLink> serial;
  UniqueFd stderr_capture;        // the server's stderr, an unnamed file
  std::vector<std::string> argv;  // as configured, for messages
  std::optional<ExitStatus> died;
  // A server started ahead: its memory map, and the runner whose RAM segments are loaded and
  // whose entry point is set already (the core never ran since), by SHA-256.
  std::optional<std::vector<GdbMemoryRegion>> map;
  std::string preloaded_sha256;
  // Started ahead but unusable: the runner ran and did not get as far as its HELLO.
  bool spoiled = false;

  // Whether the server process is still there.
  bool Alive() {
    if (died) return false;
    auto st = proc->Wait(std::chrono::milliseconds(0));
    if (st) died = *st;
    return !st.ok();
  }
  // `what` failed: the error with the server's end, its stderr and its command line.
  Error Fail(const std::string& what, const Error& e) {
    std::string msg = what + ": " + e.message;
    (void)Alive();
    if (died) msg += "; the GDB server " + died->ToString();
    if (auto tail = ReadTail(stderr_capture.get()); !tail.empty()) msg += "; stderr: " + tail;
    msg += " (command: " + JoinArgv(argv) + ")";
    return MakeError(e.code == ErrorCode::kDeadlineExceeded ? ErrorCode::kDeadlineExceeded
                                                            : ErrorCode::kUnavailable,
                     msg);
  }
};

GdbBoard::~GdbBoard() {
  {
    std::lock_guard lock(warm_mu_);
    warm_stop_ = true;
  }
  warm_cv_.notify_all();
  if (warmer_.joinable()) warmer_.join();
  warm_ready_.reset();  // a server started ahead and never used: stopped here
}

// The servers started ahead are started by this one thread, which lives as long as the board:
// a child started by a thread that ends would be killed with it (PR_SET_PDEATHSIG, bubblewrap's
// --die-with-parent).
void GdbBoard::WarmLoop() {
  std::unique_lock lock(warm_mu_);
  for (;;) {
    warm_cv_.wait(lock, [&] { return warm_stop_ || warm_wanted_; });
    if (warm_stop_) return;
    warm_wanted_ = false;
    warm_busy_ = true;
    lock.unlock();
    auto server = StartServer(options_.firmware);
    if (server) {
      Preload(**server);
      if ((*server)->spoiled) {
        server = (*server)->Fail("booting the runner ahead",
                                 MakeError(ErrorCode::kUnavailable, "no HELLO on the link"));
      }
    }
    lock.lock();
    warm_ready_.emplace(std::move(server));
    warm_busy_ = false;
    warm_cv_.notify_all();
  }
}

Result<std::unique_ptr<GdbBoard::Server>> GdbBoard::StartServer(
    const std::filesystem::path& firmware) {
  auto dir = RunDir::Create("mculab-gdb-");
  if (!dir) return dir.error();
  auto server = std::make_unique<Server>();
  auto capture = (*dir)->CreateCapture();
  if (!capture) return capture.error();
  server->stderr_capture = std::move(*capture);
  std::uint16_t port = options_.port;
  if (port == 0) {
    auto p = FreeLocalTcpPort();
    if (!p) return p.error();
    port = *p;
  }
  const std::filesystem::path gdb_socket = (*dir)->path() / "gdb.sock";
  std::filesystem::path link_socket;
  if (options_.link == "unix") {
    link_socket = (*dir)->path() / "link.sock";
  } else if (options_.link.starts_with("unix:")) {
    link_socket = options_.link.substr(5);
  }
  auto argv = ExpandCommandTemplate(options_.server_command, {{"port", std::to_string(port)},
                                                              {"gdb", gdb_socket.string()},
                                                              {"serial", options_.serial},
                                                              {"target", options_.target},
                                                              {"link", link_socket.string()},
                                                              {"firmware", firmware.string()}});
  if (!argv) return argv.error();
  SpawnOptions so;
  so.argv = *argv;
  so.stderr_fd = server->stderr_capture.get();
  server->argv = *argv;
  if (IsQemuServer(so.argv) && sandbox_.enabled()) {
    // The sandbox has no network: the agent reaches QEMU through sockets in the run's folder.
    if (options_.gdb_link != "unix" || options_.link.starts_with("tcp:")) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "board " + info_.name +
                           ": a QEMU GDB server runs in the job sandbox, which has no network; "
                           "set gdb_link = \"unix\" (-gdb chardev:... on a socket at {gdb}) and "
                           "a unix or rtt link");
    }
    if (std::find(so.argv.begin(), so.argv.end(), "-sandbox") == so.argv.end()) {
      so.argv.push_back("-sandbox");
      so.argv.push_back(kQemuSandboxOption);
    }
    auto wrapped = sandbox_.Wrap(so.argv, {firmware}, (*dir)->path());  // {firmware} readable
    if (!wrapped) return wrapped.error();
    so.argv = std::move(*wrapped);
    if (auto s = sandbox_.PrepareWorkDir((*dir)->path()); !s) return s.error();
  }
  server->dir = std::move(*dir);
  auto proc = Subprocess::Spawn(so);
  if (!proc)
    return MakeError(ErrorCode::kUnavailable, "starting the GDB server: " + proc.error().message);
  server->proc = std::move(*proc);
  Server& sv = *server;
  auto alive = [&sv] { return sv.Alive(); };

  // The link first: a server may wait for it before it starts (QEMU's chardev with wait=on), and
  // the runner's first bytes must find it open.
  if (options_.link == "rtt") {
    // The link is the GDB connection itself.
  } else if (!link_socket.empty()) {
    auto fd = ConnectUnixSocket(link_socket, options_.start_timeout, clock_, alive);
    if (!fd)
      return sv.Fail("the runner link " + link_socket.string() + " did not open", fd.error());
    sv.link = std::move(*fd);
  } else if (options_.link.starts_with("tcp:")) {
    const std::string hp = options_.link.substr(4);
    const auto colon = hp.rfind(':');
    if (colon == std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "link " + options_.link + ": want tcp:HOST:PORT");
    }
    auto fd = ConnectTcp(hp.substr(0, colon), hp.substr(colon + 1), options_.start_timeout, clock_,
                         alive);
    if (!fd) return sv.Fail("the runner link " + options_.link + " did not open", fd.error());
    sv.link = std::move(*fd);
  } else {
    SerialLinkOptions sl;
    if (options_.link != "serial") sl.path = options_.link;
    sl.serial = options_.serial;
    sl.by_id_dir = options_.by_id_dir;
    sl.baud = options_.baud;
    sl.reopen_grace = options_.serial_reopen_grace;
    auto port_link = SerialLink::Open(sl, clock_);
    if (!port_link) return sv.Fail("the runner's serial port did not open", port_link.error());
    sv.serial = std::move(*port_link);
  }

  Result<std::unique_ptr<GdbRemote>> gdb = MakeError(ErrorCode::kInternal, "not connected");
  if (options_.gdb_link == "unix") {
    auto fd = ConnectUnixSocket(gdb_socket, options_.start_timeout, clock_, alive);
    if (!fd) return sv.Fail("no GDB connection on " + gdb_socket.string(), fd.error());
    gdb = GdbRemote::Adopt(std::move(*fd), options_.call_timeout, clock_);
  } else {
    gdb = ConnectGdbWhenUp(options_.host, port, options_.start_timeout, options_.call_timeout,
                           clock_, alive);
  }
  if (!gdb) return sv.Fail("no GDB connection", gdb.error());
  sv.gdb = std::move(*gdb);
  GdbRemote& g = *sv.gdb;
  // QEMU's gdbstub reads packets back to back whatever the ack mode: a load is one burst.
  if (IsQemuServer(*argv)) g.set_pipeline_with_acks(true);
  if (!options_.reset_command.empty()) {
    if (auto out = g.Monitor(options_.reset_command); !out) {
      return sv.Fail("monitor " + options_.reset_command, out.error());
    }
  }
  // GDB servers halt the core when a debugger attaches; `?` confirms it.
  if (auto stop = g.QueryStop(); !stop)
    return sv.Fail("asking why the target is stopped", stop.error());
  return server;
}

void GdbBoard::Preload(Server& sv) {
  // What cannot be loaded ahead is left to Start, which finds it not done.
  auto id = firmware_.Identify();
  if (!id) return;
  auto elf = ReadFile(options_.firmware);
  if (!elf) return;
  auto segments =
      ElfLoadSegments(std::span(reinterpret_cast<const std::uint8_t*>(elf->data()), elf->size()));
  if (!segments) return;
  auto map = sv.gdb->MemoryMap();
  if (!map) return;
  sv.map = *map;
  for (const auto& s : *segments) {
    for (const auto& r : *map) {
      if (r.type == GdbMemoryRegion::Type::kFlash && r.Contains(s.paddr)) return;  // Start's
    }
  }
  auto entry = FindEntry(*segments, options_.vector_table);
  if (!entry) return;
  for (const auto& s : *segments) {
    if (!sv.gdb->WriteMemory(s.paddr, s.data)) return;
  }
  if (!SetEntry(*sv.gdb, *entry)) return;
  if (!sv.gdb->PrepareContinue()) return;
  if (IsQemuServer(sv.argv) && sv.link.valid()) {
    // The runner boots now, off the next job's gap (in a QEMU that has run nothing yet its boot
    // costs milliseconds of translation), sends its HELLO into the link, where it waits to be
    // read, and is halted while it waits for its CONFIGURE (it polls the UART: halted, it costs
    // no CPU). The job's load then writes the workload and resumes it there; nothing it
    // measures runs before its CONFIGURE, so its counts are a cold start's.
    if (!BootAhead(sv)) {
      sv.spoiled = true;
      return;
    }
  }
  sv.preloaded_sha256 = id->sha256;
}

bool GdbBoard::BootAhead(Server& sv) {
  if (!sv.gdb->Continue()) return false;
  // HELLO has gone out once the link holds the runner's lone delimiter and HELLO's closing one.
  const auto deadline = clock_.Now() + options_.start_timeout;
  for (;;) {
    std::uint8_t buf[512];
    const ssize_t n = ::recv(sv.link.get(), buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    if (n > 0 && std::count(buf, buf + n, std::uint8_t{0}) >= 2) break;
    if (n == 0 || clock_.Now() >= deadline || !sv.Alive()) return false;
    pollfd p{sv.link.get(), POLLIN, 0};
    (void)::poll(&p, 1, 5);  // new bytes, or a 5 ms slice to check the deadline and the process
  }
  auto stop = sv.gdb->Halt();
  return stop.ok() && !stop->exited();
}

Result<std::unique_ptr<GdbBoard::Server>> GdbBoard::TakeServer(
    const std::filesystem::path& firmware, bool own_firmware) {
  std::optional<Result<std::unique_ptr<Server>>> warm;
  if (options_.warm && own_firmware) {
    std::unique_lock lock(warm_mu_);
    // One on its way: wait for it (never longer than starting one here would take).
    warm_cv_.wait(lock, [&] { return !warm_busy_ && !warm_wanted_; });
    warm.swap(warm_ready_);
  }
  if (warm) {
    auto ready = std::move(*warm);
    if (ready.ok() && (*ready)->Alive()) {
      ++warm_starts_;
      return ready;
    }
    // A warm server that failed or died meanwhile: start one now.
    spdlog::warn(
        "board {}: the GDB server started ahead is not usable ({}); starting one now", info_.name,
        ready.ok()
            ? (*ready)->Fail("waiting", MakeError(ErrorCode::kUnavailable, "it ended")).message
            : ready.error().message);
  }
  return StartServer(firmware);
}

Result<std::unique_ptr<RunnerProcess>> GdbBoard::Start(const RunSpec& spec) {
  if (!spec.firmware.empty() && !info_.custom_runners) {
    return MakeError(ErrorCode::kPermissionDenied, info_.custom_runners_off);
  }
  const std::filesystem::path firmware = spec.firmware.empty() ? options_.firmware : spec.firmware;
  auto id = spec.firmware.empty() ? firmware_.Identify() : IdentifyFirmware(spec.firmware);
  if (!id) return id.error();
  // The board's own runner is read once per content (a warm board's Start is only the load).
  Result<std::string> elf_bytes = std::string();
  if (spec.firmware.empty() && cached_elf_sha256_ == id->sha256) {
    *elf_bytes = cached_elf_;
  } else {
    elf_bytes = ReadFile(firmware);
    if (elf_bytes && spec.firmware.empty()) {
      cached_elf_ = *elf_bytes;
      cached_elf_sha256_ = id->sha256;
    }
  }
  if (!elf_bytes) return elf_bytes.error();
  auto segments = ElfLoadSegments(
      std::span(reinterpret_cast<const std::uint8_t*>(elf_bytes->data()), elf_bytes->size()));
  if (!segments) return segments.error();

  auto entry = FindEntry(*segments, options_.vector_table);
  if (!entry) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "runner ELF " + firmware.string() + ": " + entry.error().message);
  }
  std::optional<RttSymbols> rtt_symbols;
  if (options_.link == "rtt") {
    auto syms = FindRttSymbols(
        std::span(reinterpret_cast<const std::uint8_t*>(elf_bytes->data()), elf_bytes->size()));
    if (!syms) return syms.error();
    rtt_symbols = *syms;
  }

  const auto t_server = clock_.Now();
  auto started = TakeServer(firmware, spec.firmware.empty());
  if (!started) return started.error();
  const auto t_load = clock_.Now();
  const std::uint64_t packets_before = (*started)->gdb->packets_sent();
  last_times_.server = std::chrono::duration_cast<std::chrono::microseconds>(t_load - t_server);
  std::unique_ptr<Server> server = std::move(*started);
  // The next run's server starts when this Start returns, while this run goes (its Start then
  // only loads): after this load, which it would otherwise compete with for a core.
  struct AskForNext {
    GdbBoard* board;
    ~AskForNext() {
      if (board == nullptr) return;
      {
        std::lock_guard lock(board->warm_mu_);
        board->warm_wanted_ = true;
        if (!board->warmer_.joinable())
          board->warmer_ = std::thread([b = board] { b->WarmLoop(); });
      }
      board->warm_cv_.notify_all();
    }
  } ask_for_next{options_.warm && spec.firmware.empty() ? this : nullptr};
  Server& sv = *server;
  GdbRemote& g = *sv.gdb;
  auto fail = [&sv](const std::string& what, const Error& e) { return sv.Fail(what, e); };

  // Program: flash segments (only when the ELF changed), RAM segments (every run, unless a
  // server started ahead has them already).
  Result<std::vector<GdbMemoryRegion>> map =
      sv.map ? Result<std::vector<GdbMemoryRegion>>(*sv.map) : g.MemoryMap();
  if (!map) return fail("reading the memory map", map.error());
  const bool preloaded = !sv.preloaded_sha256.empty() && sv.preloaded_sha256 == id->sha256;
  auto flash_region = [&](std::uint32_t addr) -> const GdbMemoryRegion* {
    for (const auto& r : *map) {
      if (r.type == GdbMemoryRegion::Type::kFlash && r.Contains(addr)) return &r;
    }
    return nullptr;
  };
  bool any_flash = false;
  for (const auto& s : *segments) any_flash |= flash_region(s.paddr) != nullptr;
  // Whether the flash holds the segments, by the server's CRCs (qCRC, GDB's compare-sections):
  // true/false, or nullopt when the server cannot say.
  auto flash_matches = [&]() -> Result<std::optional<bool>> {
    for (const auto& s : *segments) {
      if (!flash_region(s.paddr)) continue;
      auto crc = g.Crc32(s.paddr, s.data.size());
      if (!crc) return crc.error();
      if (!*crc) return std::optional<bool>{};
      if (**crc != GdbCrc32(s.data)) return std::optional<bool>(false);
    }
    return std::optional<bool>(true);
  };
  bool program = any_flash && FlashedSha256() != id->sha256;
  if (any_flash && !program) {
    // The state file says the board has this runner; someone may have flashed it since.
    auto same = flash_matches();
    if (!same) return fail("comparing the flash with the runner", same.error());
    program = *same == std::optional<bool>(false);
  }
  if (program) {
    std::error_code ec;
    std::filesystem::create_directories(options_.state_dir, ec);
    std::filesystem::remove(StateFile(), ec);  // unknown content until the flash is confirmed
    g.set_timeout(options_.flash_timeout);
    // Every block the segments touch is erased once, before any write: segments that share a
    // block (code and the .data image) must not erase each other.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> erase;  // [start, end), block-aligned
    for (const auto& s : *segments) {
      const GdbMemoryRegion* r = flash_region(s.paddr);
      if (!r) continue;
      const std::uint64_t block = r->blocksize ? r->blocksize : 1;
      erase.emplace_back(s.paddr / block * block,
                         (std::uint64_t{s.paddr} + s.data.size() + block - 1) / block * block);
    }
    std::sort(erase.begin(), erase.end());
    std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
    for (const auto& e : erase) {
      if (!merged.empty() && e.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, e.second);
      } else {
        merged.push_back(e);
      }
    }
    for (const auto& [start, end] : merged) {
      if (auto e = g.FlashErase(start, end - start); !e) return fail("erasing flash", e.error());
    }
    for (const auto& s : *segments) {
      if (!flash_region(s.paddr)) continue;
      if (auto w = g.FlashWrite(s.paddr, s.data); !w) return fail("writing flash", w.error());
    }
    if (auto d = g.FlashDone(); !d) return fail("finishing the flash write", d.error());
    g.set_timeout(options_.call_timeout);
    auto same = flash_matches();
    if (!same) return fail("verifying the flash", same.error());
    if (*same == std::optional<bool>(false)) {
      return fail("verifying the flash",
                  MakeError(ErrorCode::kDataLoss, "its CRC differs from the runner ELF's"));
    }
    if (auto w = WriteFileAtomically(StateFile(), id->sha256 + "\n"); !w) return w.error();
  }
  for (const auto& s : *segments) {
    if (flash_region(s.paddr) || preloaded) continue;
    if (auto w = g.WriteMemory(s.paddr, s.data); !w) {
      return fail("loading the runner at " + HexAddress(s.paddr), w.error());
    }
  }
  if (!preloaded) {
    if (auto w = SetEntry(g, *entry); !w) return fail("setting the entry point", w.error());
  }
  std::unique_ptr<RttPump> pump;
  if (rtt_symbols) {
    pump = std::make_unique<RttPump>(g, *rtt_symbols);
    if (auto a = pump->Arm(); !a) return fail("setting the RTT breakpoint", a.error());
  }
  // The workload last, with the continue in the same burst: a warm board's whole load is this.
  // QEMU's replies are not waited for (the runner checks the workload's CRC, and a later GDB call
  // reads them); a probe's are, so a failed write is an infrastructure failure said here.
  const bool qemu = IsQemuServer(sv.argv);
  if (auto w = g.WriteMemoryAndContinue(options_.workload_addr, spec.workload, !qemu); !w) {
    return fail("writing the workload at " + HexAddress(options_.workload_addr) +
                    " and starting the runner",
                w.error());
  }
  if (pump) pump->Start();

  last_times_.load = std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now() - t_load);
  last_times_.load_packets = g.packets_sent() - packets_before;
  UniqueFd write_fd;
  if (sv.link.valid()) {
    write_fd = UniqueFd(::fcntl(sv.link.get(), F_DUPFD_CLOEXEC, 0));
    if (!write_fd.valid()) return MakeError(ErrorCode::kInternal, ErrnoMessage("dup", errno));
  }
  if (qemu && !reaper_) reaper_ = std::make_shared<Reaper>();
  RunProvenance prov;
  prov.firmware_sha256 = id->sha256;
  prov.toolchain = id->toolchain;
  prov.board_serial = options_.serial;
  prov.note = !options_.note.empty() ? options_.note
                                     : (info_.emulated ? "emulated board behind GDB server "
                                                       : "silicon behind GDB server ") +
                                           sv.argv[0] + " (loaded over the GDB remote protocol)";
  prov.workload_addr = options_.workload_addr;
  prov.firmware_path = firmware.string();
  prov.icount_shift = options_.icount_shift;
  return std::unique_ptr<RunnerProcess>(new GdbRunnerProcess(
      std::move(sv.dir), std::move(sv.proc), std::move(sv.gdb), std::move(pump),
      std::move(sv.serial), std::move(sv.link), std::move(write_fd), std::move(sv.stderr_capture),
      std::move(prov), !qemu, qemu ? reaper_ : nullptr));
}

}  // namespace mculab::agent
