// RegionCounts: events a board backend counted outside the runner (the QEMU plugin's instruction,
// load and store counts), as values per measured region: each iteration, each empty (overhead)
// region, each op invocation. A backend parses its own output format into this; everything above
// the Board interface sees only these values.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mculab::agent {

struct CountedRegion {
  std::uint32_t case_index = 0;
  std::uint32_t index = 0;            // iteration, empty-region ordinal, or op index
  std::vector<std::uint64_t> values;  // per column
};

struct RegionCounts {
  std::vector<std::string> columns;  // event names, in the values' order
  std::vector<CountedRegion> iterations;
  std::vector<CountedRegion> empties;
  std::vector<CountedRegion> ops;  // each op invocation, in closing order
  bool ended = false;              // the backend's counting ended normally (QEMU exited)
  std::uint64_t unclosed = 0, unmatched = 0;

  // The values of (case, iteration), or nullptr.
  const std::vector<std::uint64_t>* Iteration(std::uint32_t case_index,
                                              std::uint32_t iteration) const;
};

// Per (case, op index): invocations and sum/min/max per column, over the op regions.
struct OpAggregate {
  std::uint64_t count = 0;
  std::vector<std::uint64_t> sum, min, max;
};
std::map<std::pair<std::uint32_t, std::uint32_t>, OpAggregate> AggregateOps(
    const RegionCounts& counts);

}  // namespace mculab::agent
