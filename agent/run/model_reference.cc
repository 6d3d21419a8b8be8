#include "agent/run/model_reference.h"

#include <cerrno>
#include <charconv>
#include <string>

#include "agent/io/run_dir.h"
#include "agent/io/subprocess.h"
#include "common/bytes_text.h"

namespace mculab::agent {
namespace {

// What the program prints: a decimal CRC-32 and a newline.
constexpr std::size_t kMaxOutput = 64;
// The exit status mculab-model-reference uses when an allocation fails (model_reference_main.cc).
constexpr int kOutOfMemoryStatus = 3;

#if defined(__SANITIZE_ADDRESS__)
// An AddressSanitizer build's programs (the reference program beside this one too) reserve
// terabytes of address space for their shadow memory: no RLIMIT_AS there.
constexpr bool kAddressSpaceLimit = false;
#else
constexpr bool kAddressSpaceLimit = true;
#endif

}  // namespace

std::filesystem::path DefaultModelReferenceProgram() {
  return BesideThisProgram("mculab-model-reference");
}

Result<std::uint32_t> ModelReference::Checksum(std::span<const std::uint8_t> blob,
                                               std::uint32_t seed) const {
  if (options_.program.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "this agent cannot check a model's output: mculab-model-reference is not "
                     "beside mculab-agent (build it with the agent)");
  }
  auto dir = RunDir::Create("mculab-model-");
  if (!dir) return dir.error();
  if (auto f = (*dir)->CreateFile("model.blob", AsChars(blob)); !f) return f.error();
  auto capture = (*dir)->CreateCapture();
  if (!capture) return capture.error();
  const auto argv = std::vector<std::string>{options_.program.string(), std::to_string(seed),
                                             ((*dir)->path() / "model.blob").string()};
  auto wrapped = options_.sandbox.Wrap(argv, {options_.program}, (*dir)->path());
  if (!wrapped) return wrapped.error();
  if (auto s = options_.sandbox.PrepareWorkDir((*dir)->path()); !s) return s.error();
  SpawnOptions so;
  so.argv = std::move(*wrapped);
  so.pipe_stdout = true;
  so.stderr_fd = capture->get();
  so.memory_limit = kAddressSpaceLimit ? options_.memory_limit : 0;
  auto proc = Subprocess::Spawn(so);
  if (!proc) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "starting the model's reference run: " + proc.error().message);
  }
  UniqueFd out = (*proc)->TakeStdout();
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      (*proc)->Kill();
      return MakeError(ErrorCode::kDeadlineExceeded,
                       "the model's reference run on the agent took over " +
                           std::to_string(options_.timeout.count() / 1000) + " s");
    }
    std::uint8_t buf[64];
    auto n = ReadSome(out.get(), buf, std::min(left, std::chrono::milliseconds(200)));
    if (!n) break;  // end of stream: the program exited
    text.append(reinterpret_cast<const char*>(buf), *n);
    if (text.size() > kMaxOutput) {
      (*proc)->Kill();
      break;
    }
  }
  auto st = (*proc)->Wait(std::chrono::seconds(5));
  if (!st) {
    (*proc)->Kill();
    st = (*proc)->Wait(std::chrono::seconds(5));
  }
  const std::string err = ReadTail(capture->get(), 2048);
  if (!st || !st->success()) {
    const std::string how = st ? st->ToString() : "without ending";
    if (st && st->exited && st->code == kOutOfMemoryStatus) {
      return MakeError(ErrorCode::kResourceExhausted,
                       "the model needs more memory than the agent gives its reference run (" +
                           HumanBytes(options_.memory_limit) + "): " + err);
    }
    if (st && st->exited && st->code == 2 && !err.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, err);
    }
    return MakeError(ErrorCode::kInvalidArgument,
                     "the model's reference run on the agent ended " + how + " (memory limit " +
                         HumanBytes(options_.memory_limit) + ")" + (err.empty() ? "" : ": " + err));
  }
  std::uint32_t crc = 0;
  const char* end = text.data() + text.size();
  while (end != text.data() && (end[-1] == '\n' || end[-1] == ' ')) --end;
  const auto [p, ec] = std::from_chars(text.data(), end, crc);
  if (ec != std::errc() || p != end || text.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the model's reference run printed no checksum: \"" + text + "\"");
  }
  return crc;
}

}  // namespace mculab::agent
