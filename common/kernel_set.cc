#include "common/kernel_set.h"

#include <array>

namespace mculab {
namespace {

// mculab's own runtimes, whose HELLO names the kernel set (firmware_stub/core/runner.c), and the
// fast sets a build can have (firmware_stub/kernels/kernel_sets.c): "tflite-micro" is a user's
// runtime, not ours on a "micro" set.
constexpr std::array<std::string_view, 2> kOwnRuntimes = {"builtin", "tflite"};
constexpr std::array<std::string_view, 2> kFastSets = {"helium", "dsp"};

}  // namespace

std::string_view KernelSetName(KernelSet set) {
  return set == KernelSet::kReference ? "reference" : "fast";
}

Result<KernelSet> ParseKernelSet(std::string_view text) {
  if (text.empty() || text == "fast") return KernelSet::kFast;
  if (text == "reference") return KernelSet::kReference;
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown kernel set \"" + std::string(text) +
                       "\": give fast (the runner's fastest bit-exact kernels, the default) or "
                       "reference (the portable reference kernels)");
}

std::string KernelSetRan(std::string_view runtime) {
  for (std::string_view own : kOwnRuntimes) {
    if (runtime == own) return "reference";
    if (runtime.size() <= own.size() + 1 || runtime.substr(0, own.size()) != own ||
        runtime[own.size()] != '-') {
      continue;
    }
    const std::string_view set = runtime.substr(own.size() + 1);
    for (std::string_view fast : kFastSets) {
      if (set == fast) return std::string(set);
    }
  }
  return {};
}

}  // namespace mculab
