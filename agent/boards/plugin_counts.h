// The QEMU counting plugin's output (docs/runner-protocol.md section 8, "Output") parsed into
// RegionCounts, and the emulated counter unit the plugin gives a QEMU board.
//
//   # mculab-qemu-counters 1 mem=inline markers=0x60ff0000
//   # kind case index instructions loads stores      <- the counted events, in column order
//   iter 0 0 1296389 428185 60817
//   op 0 0 1296000 428000 60800
//   empty 0 0 66 27 7
//   # end regions=10 unclosed=0 unmatched=0
//
// ParsePluginCounts is strict: a line that does not fit the header's columns is an error naming
// the line, since a miscounted region must never be stored as an event.
// Thread-safety: pure functions over plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/boards/region_counts.h"
#include "common/result.h"

namespace mculab::agent {

// The plugin's unit: five events, at most three per run (the plugin's events= limit, which
// bounds its instrumentation), so five events take two passes.
inline constexpr const char* kQemuPluginUnit = "qemu-plugin";
inline constexpr std::uint32_t kQemuPluginMaxSimultaneous = 3;
// instructions, loads, stores, branches, and mve_instructions where the CPU has MVE (Helium): a
// Cortex-M7 executes none, so its boards do not offer the event.
std::vector<std::string> QemuPluginEvents(bool cpu_has_mve);

// -plugin's value: "LIB,out=OUT,events=a+b" (QEMU's ',' escaped as ',,' in paths).
// A value inside a QEMU option ("path=..."): QEMU splits on ',' and takes ",," for a comma.
std::string QemuOptValue(const std::string& v);

// `markers`: the runner's marker region (MarkerRegion, elf_symbols.h); 0 leaves the plugin's
// default.
std::string QemuPluginArg(const std::string& library, const std::string& out,
                          const std::vector<std::string>& events, std::uint32_t markers = 0);

Result<RegionCounts> ParsePluginCounts(std::string_view text);

}  // namespace mculab::agent
