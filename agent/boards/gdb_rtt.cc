#include "agent/boards/gdb_rtt.h"

#include <cstring>

namespace mculab::agent {
namespace {

constexpr std::uint32_t kUpDesc = 24;    // offsetof(mculab_rtt_control_block, up)
constexpr std::uint32_t kDownDesc = 48;  // offsetof(mculab_rtt_control_block, down)
// Within a buffer descriptor: name, buf, size, wr, rd, flags.
constexpr std::uint32_t kBuf = 4, kWr = 12, kRd = 16;
constexpr std::chrono::milliseconds kPollSlice{50};

std::uint32_t Le32(std::span<const std::uint8_t> b, std::size_t off) {
  return static_cast<std::uint32_t>(b[off]) | static_cast<std::uint32_t>(b[off + 1]) << 8 |
         static_cast<std::uint32_t>(b[off + 2]) << 16 |
         static_cast<std::uint32_t>(b[off + 3]) << 24;
}
std::vector<std::uint8_t> ToLe32(std::uint32_t v) {
  return {static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(v >> 8),
          static_cast<std::uint8_t>(v >> 16), static_cast<std::uint8_t>(v >> 24)};
}

}  // namespace

Result<RttSymbols> FindRttSymbols(std::span<const std::uint8_t> elf) {
  auto syms = ElfSymbols(elf, {"_SEGGER_RTT", "mculab_rtt_flush", "mculab_rtt_waiting"});
  if (!syms) return syms.error();
  for (const char* n : {"_SEGGER_RTT", "mculab_rtt_flush", "mculab_rtt_waiting"}) {
    if (!syms->count(n)) {
      return MakeError(
          ErrorCode::kFailedPrecondition,
          std::string("the runner ELF has no RTT link (no symbol ") + n +
              "; build the port with -DMCULAB_LINK=rtt, e.g. mculab-runner-an500-rtt)");
    }
  }
  return RttSymbols{(*syms)["_SEGGER_RTT"], (*syms)["mculab_rtt_flush"] & ~1u,
                    (*syms)["mculab_rtt_waiting"]};
}

Status RttPump::Arm() {
  if (auto s = gdb_.InsertBreakpoint(1, sym_.flush); s) return s;
  // No hardware breakpoint left (or none offered): a software one does as well in RAM.
  return gdb_.InsertBreakpoint(0, sym_.flush);
}

void RttPump::Start() {
  {
    std::lock_guard lock(mu_);
    running_ = true;
  }
  thread_ = std::thread([this] { Loop(); });
}

void RttPump::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  bool running;
  {
    std::lock_guard lock(mu_);
    running = running_;
    closed_ = true;
  }
  cv_.notify_all();
  if (running) {
    if (auto h = gdb_.Halt(); !h) {
      std::lock_guard lock(mu_);
      if (error_.empty()) error_ = "halting over GDB failed: " + h.error().message;
    }
  }
}

Result<std::size_t> RttPump::Read(std::span<std::uint8_t> buf, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !rx_.empty() || closed_; });
  if (rx_.empty()) {
    if (closed_) {
      return MakeError(ErrorCode::kUnavailable,
                       "the RTT link closed" + (error_.empty() ? std::string() : ": " + error_));
    }
    return std::size_t{0};
  }
  const std::size_t n = std::min(buf.size(), rx_.size());
  std::copy_n(rx_.begin(), n, buf.begin());
  rx_.erase(rx_.begin(), rx_.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

Status RttPump::Write(std::span<const std::uint8_t> bytes) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return MakeError(ErrorCode::kUnavailable, "the RTT link closed");
    tx_.insert(tx_.end(), bytes.begin(), bytes.end());
  }
  cv_.notify_all();
  return {};
}

RttStats RttPump::stats() {
  std::lock_guard lock(mu_);
  return stats_;
}

std::string RttPump::error() {
  std::lock_guard lock(mu_);
  return error_;
}

void RttPump::Loop() {
  auto fail = [&](const std::string& what) {
    std::lock_guard lock(mu_);
    if (error_.empty()) error_ = what;
    closed_ = true;
    cv_.notify_all();
  };
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
    auto stop = gdb_.WaitForStop(kPollSlice);
    if (!stop) {
      if (stop.error().code == ErrorCode::kDeadlineExceeded) continue;
      return fail("GDB connection: " + stop.error().message);
    }
    {
      std::lock_guard lock(mu_);
      running_ = false;
    }
    if (stop->exited()) return fail("the target ended (" + stop->raw + ")");
    const auto t0 = std::chrono::steady_clock::now();
    bool waiting = false;
    if (auto s = ServiceStop(waiting); !s) return fail(s.error().message);
    if (waiting) {
      // The runner waits for input: keep it halted until there is some (or the run ends).
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !tx_.empty() || stop_; });
      if (stop_) return;
      lock.unlock();
      if (auto s = Feed(); !s) return fail(s.error().message);
    }
    {
      std::lock_guard lock(mu_);
      ++stats_.stops;
      if (!waiting) {
        stats_.stopped += std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - t0);
      }
    }
    if (auto c = gdb_.Continue(); !c) return fail("continuing: " + c.error().message);
    std::lock_guard lock(mu_);
    running_ = true;
  }
}

Status RttPump::ServiceStop(bool& waiting) {
  auto pc = gdb_.ReadRegister("pc");
  if (!pc) return pc.error();
  if ((*pc & ~1ull) != sym_.flush) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "the runner stopped outside mculab_rtt_flush, at pc 0x%08llx",
                  static_cast<unsigned long long>(*pc));
    return MakeError(ErrorCode::kUnavailable, buf);
  }
  auto lr = gdb_.ReadRegister("lr");
  if (!lr) return lr.error();
  if (!have_layout_) {
    auto cb = gdb_.ReadMemory(sym_.control_block, 72);
    if (!cb) return cb.error();
    if (std::memcmp(cb->data(), "SEGGER RTT", 10) != 0) {
      return MakeError(ErrorCode::kDataLoss, "no RTT control block at _SEGGER_RTT");
    }
    up_buf_ = Le32(*cb, kUpDesc + kBuf);
    up_size_ = Le32(*cb, kUpDesc + 8);
    down_buf_ = Le32(*cb, kDownDesc + kBuf);
    down_size_ = Le32(*cb, kDownDesc + 8);
    if (up_size_ < 2 || down_size_ < 2) {
      return MakeError(ErrorCode::kDataLoss, "RTT rings too small");
    }
    have_layout_ = true;
  }
  auto flag = gdb_.ReadMemory(sym_.waiting, 4);
  if (!flag) return flag.error();
  const bool runner_waits = Le32(*flag, 0) != 0;
  if (auto s = Drain(); !s) return s;
  const std::uint64_t fed_before = stats_.bytes_down;
  if (auto s = Feed(); !s) return s;
  // Return from the flush function without running it: no step over the breakpoint.
  if (auto w = gdb_.WriteRegister("pc", *lr & ~1ull); !w) return w;
  std::lock_guard lock(mu_);
  // Input that came while the core was stopped has been fed: then it does not wait any more.
  waiting = runner_waits && stats_.bytes_down == fed_before;
  return {};
}

// Takes the up buffer's new bytes and advances its read offset.
Status RttPump::Drain() {
  auto offs = gdb_.ReadMemory(sym_.control_block + kUpDesc + kWr, 8);
  if (!offs) return offs.error();
  const std::uint32_t wr = Le32(*offs, 0), rd = Le32(*offs, 4);
  if (wr >= up_size_ || rd >= up_size_)
    return MakeError(ErrorCode::kDataLoss, "corrupt RTT offsets");
  if (wr == rd) return {};
  std::vector<std::uint8_t> bytes;
  if (wr > rd) {
    auto m = gdb_.ReadMemory(up_buf_ + rd, wr - rd);
    if (!m) return m.error();
    bytes = std::move(*m);
  } else {
    auto a = gdb_.ReadMemory(up_buf_ + rd, up_size_ - rd);
    if (!a) return a.error();
    bytes = std::move(*a);
    if (wr > 0) {
      auto b = gdb_.ReadMemory(up_buf_, wr);
      if (!b) return b.error();
      bytes.insert(bytes.end(), b->begin(), b->end());
    }
  }
  if (auto w = gdb_.WriteMemory(sym_.control_block + kUpDesc + kRd, ToLe32(wr)); !w) return w;
  {
    std::lock_guard lock(mu_);
    rx_.insert(rx_.end(), bytes.begin(), bytes.end());
    stats_.bytes_up += bytes.size();
  }
  cv_.notify_all();
  return {};
}

// Puts as much pending input as fits into the down buffer.
Status RttPump::Feed() {
  std::vector<std::uint8_t> pending;
  {
    std::lock_guard lock(mu_);
    if (tx_.empty()) return {};
    pending.assign(tx_.begin(), tx_.end());
  }
  auto offs = gdb_.ReadMemory(sym_.control_block + kDownDesc + kWr, 8);
  if (!offs) return offs.error();
  std::uint32_t wr = Le32(*offs, 0);
  const std::uint32_t rd = Le32(*offs, 4);
  if (wr >= down_size_ || rd >= down_size_)
    return MakeError(ErrorCode::kDataLoss, "corrupt RTT offsets");
  const std::uint32_t space = (rd + down_size_ - wr - 1) % down_size_;
  const std::size_t n = std::min<std::size_t>(space, pending.size());
  std::size_t done = 0;
  while (done < n) {
    const std::size_t run = std::min<std::size_t>(n - done, down_size_ - wr);
    if (auto w = gdb_.WriteMemory(down_buf_ + wr, std::span(pending).subspan(done, run)); !w) {
      return w;
    }
    done += run;
    wr = static_cast<std::uint32_t>((wr + run) % down_size_);
  }
  if (n > 0) {
    if (auto w = gdb_.WriteMemory(sym_.control_block + kDownDesc + kWr, ToLe32(wr)); !w) return w;
  }
  std::lock_guard lock(mu_);
  tx_.erase(tx_.begin(), tx_.begin() + static_cast<std::ptrdiff_t>(n));
  stats_.bytes_down += n;
  return {};
}

}  // namespace mculab::agent
