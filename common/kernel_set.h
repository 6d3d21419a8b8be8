// The int8 kernel set of a job: what a user asks for at submit (`--kernels fast|reference`) and
// what a runner reports it ran (HELLO's runtime, docs/runner-protocol.md "Kernel sets").
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab {

// What a job asks for: the runner's fastest bit-exact set (the default) or the portable reference
// kernels (workload flag MCULAB_WORKLOAD_REFERENCE_KERNELS), to compare the two.
enum class KernelSet { kFast, kReference };

std::string_view KernelSetName(KernelSet set);  // "fast" | "reference"

// "fast" or "reference"; empty text is the default, fast. Anything else is kInvalidArgument
// naming the value and the choices.
Result<KernelSet> ParseKernelSet(std::string_view text);

// The kernel set a runner ran, read from HELLO's runtime: mculab's own runtimes (the generic
// runner's "builtin", the TFLite runner's "tflite") add the fast set after a dash
// ("builtin-helium", "tflite-dsp") and nothing on the reference set ("builtin" -> "reference").
// Empty for any other runtime: a custom runner's kernels are its own.
std::string KernelSetRan(std::string_view runtime);

}  // namespace mculab
