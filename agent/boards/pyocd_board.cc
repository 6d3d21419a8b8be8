#include "agent/boards/pyocd_board.h"

#include <cstdio>

#include "agent/boards/child_runner_process.h"
#include "agent/io/fd.h"
#include "agent/io/serial_port.h"
#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

std::string Hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

std::string Tail(const std::string& s, std::size_t n = 600) {
  std::string t = s.size() > n ? s.substr(s.size() - n) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

class SerialRunnerProcess final : public RunnerProcess {
 public:
  SerialRunnerProcess(std::unique_ptr<TempDir> dir, UniqueFd fd, RunProvenance prov,
                      ProcessRunner& runner, std::vector<std::string> halt_argv)
      : dir_(std::move(dir)),
        fd_(std::move(fd)),
        prov_(std::move(prov)),
        runner_(runner),
        halt_argv_(std::move(halt_argv)) {}
  ~SerialRunnerProcess() override { fd_.Reset(); }

  Result<std::size_t> Read(std::span<std::uint8_t> buf,
                           std::chrono::milliseconds timeout) override {
    auto n = ReadSome(fd_.get(), buf, timeout);
    if (!n && n.error().code == ErrorCode::kUnavailable) {
      return MakeError(ErrorCode::kUnavailable,
                       "serial console closed (probe unplugged?): " + n.error().message);
    }
    return n;
  }
  Status Write(std::span<const std::uint8_t> bytes) override {
    return WriteAll(fd_.get(), bytes, std::chrono::seconds(2));
  }
  void Kill() override {
    std::lock_guard lock(mu_);
    if (halted_) return;
    halted_ = true;
    auto r = runner_.Run(halt_argv_, std::chrono::seconds(20));
    if (!r || !r->status.success()) {
      diagnostics_ = "halting the board failed: " +
                     (r ? r->status.ToString() + ": " + Tail(r->output) : r.error().message);
    }
  }
  Result<ExitStatus> Wait(std::chrono::milliseconds) override { return ExitStatus{}; }
  const RunProvenance& provenance() const override { return prov_; }
  std::string Diagnostics() override {
    std::lock_guard lock(mu_);
    return diagnostics_;
  }

 private:
  std::unique_ptr<TempDir> dir_;
  UniqueFd fd_;
  RunProvenance prov_;
  ProcessRunner& runner_;
  std::vector<std::string> halt_argv_;
  std::mutex mu_;
  bool halted_ = false;
  std::string diagnostics_;
};

}  // namespace

std::vector<std::string> PyocdFlashArgv(const PyocdOptions& o) {
  return {o.pyocd, "flash", "-t", o.target, "-u", o.serial, o.firmware.string()};
}

std::vector<std::string> PyocdLoadArgv(const PyocdOptions& o,
                                       const std::filesystem::path& workload_file) {
  return {o.pyocd, "cmd",
          "-t",    o.target,
          "-u",    o.serial,
          "-c",    "reset halt",
          "-c",    "loadmem " + Hex(o.workload_addr) + " " + workload_file.string(),
          "-c",    "go"};
}

std::vector<std::string> PyocdHaltArgv(const PyocdOptions& o) {
  return {o.pyocd, "cmd", "-t", o.target, "-u", o.serial, "-c", "halt"};
}

PyocdBoard::PyocdBoard(BoardInfo info, PyocdOptions options, ProbeLister& probes,
                       ProcessRunner& runner)
    : info_(std::move(info)),
      options_(std::move(options)),
      probes_(probes),
      runner_(runner),
      firmware_(options_.firmware) {}

std::filesystem::path PyocdBoard::StateFile() const {
  return options_.state_dir / (info_.name + ".flashed-sha256");
}

std::string PyocdBoard::FlashedSha256() const {
  auto s = ReadFile(StateFile());
  if (!s) return {};
  std::string v = *s;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

Status PyocdBoard::FlashIfChanged(const FirmwareIdentity& id) {
  if (FlashedSha256() == id.sha256) return {};
  std::error_code ec;
  std::filesystem::create_directories(options_.state_dir, ec);
  // Until the new flash is confirmed the board's content is unknown.
  std::filesystem::remove(StateFile(), ec);
  const auto argv = PyocdFlashArgv(options_);
  auto r = runner_.Run(argv, options_.flash_timeout);
  if (!r) return MakeError(ErrorCode::kUnavailable, "flashing failed: " + r.error().message);
  if (!r->status.success()) {
    return MakeError(ErrorCode::kUnavailable, "flashing failed (" + JoinArgv(argv) + ": " +
                                                  r->status.ToString() + "): " + Tail(r->output));
  }
  return WriteFileAtomically(StateFile(), id.sha256 + "\n");
}

Result<std::unique_ptr<RunnerProcess>> PyocdBoard::Start(const RunSpec& spec) {
  auto probe = FindProbeBySerial(probes_, options_.serial);
  if (!probe) return probe.error();
  auto id = firmware_.Identify();
  if (!id) return id.error();
  if (auto s = FlashIfChanged(*id); !s) return s.error();

  std::filesystem::path console = options_.console;
  if (console.empty()) {
    auto found = FindSerialPortBySerial(options_.by_id_dir, options_.serial);
    if (!found) return found.error();
    console = *found;
  }
  auto fd = OpenSerialPort(console, options_.baud);
  if (!fd) return fd.error();

  auto dir = TempDir::Create("mculab-pyocd-");
  if (!dir) return dir.error();
  const auto workload = (*dir)->path() / "workload.bin";
  if (auto s =
          WriteFile(workload, std::string_view(reinterpret_cast<const char*>(spec.workload.data()),
                                               spec.workload.size()));
      !s) {
    return s.error();
  }
  const auto argv = PyocdLoadArgv(options_, workload);
  auto r = runner_.Run(argv, options_.command_timeout);
  if (!r)
    return MakeError(ErrorCode::kUnavailable, "writing the workload failed: " + r.error().message);
  if (!r->status.success()) {
    return MakeError(ErrorCode::kUnavailable, "writing the workload failed (" + JoinArgv(argv) +
                                                  ": " + r->status.ToString() +
                                                  "): " + Tail(r->output));
  }
  RunProvenance prov;
  prov.firmware_sha256 = id->sha256;
  prov.toolchain = id->toolchain;
  prov.board_serial = options_.serial;
  prov.note = "silicon: pyOCD target " + options_.target + ", probe " + probe->Describe();
  prov.workload_addr = options_.workload_addr;
  return std::unique_ptr<RunnerProcess>(new SerialRunnerProcess(
      std::move(*dir), std::move(*fd), std::move(prov), runner_, PyocdHaltArgv(options_)));
}

}  // namespace mculab::agent
