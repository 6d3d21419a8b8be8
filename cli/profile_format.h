// Pure formatting of counter, pass, profile and memory results for `mculab show` and `mculab
// events`: event statistics per case, the memory report, the per-operator profile sorted by share
// like a profiler, and the counter units a kind of board offers. Emulated figures carry the
// EMULATED label.
#pragma once

#include <string>

#include "lab.pb.h"

namespace mculab::cli {

// "events (EMULATED: ...)": one row per (case, event) with its pass and statistics; "" when the
// job counted no event.
std::string RenderEventStats(const mculab::v1::Results& results);
// Flash and RAM from the runner ELF, and the runner's reports (largest use over the cases); ""
// when there is none.
std::string RenderMemory(const mculab::v1::Results& results);
// Ops summed over the cases, sorted by share of the timer's total, largest first; event totals
// beside. A note when there is no profile.
std::string RenderOps(const mculab::v1::Results& results);
// `mculab events --kind KIND`.
std::string RenderEventUnits(const mculab::v1::ListEventsReply& reply);

}  // namespace mculab::cli
