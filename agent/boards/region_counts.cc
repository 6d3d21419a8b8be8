#include "agent/boards/region_counts.h"

#include <algorithm>

namespace mculab::agent {

const std::vector<std::uint64_t>* RegionCounts::Iteration(std::uint32_t case_index,
                                                          std::uint32_t iteration) const {
  for (const CountedRegion& r : iterations) {
    if (r.case_index == case_index && r.index == iteration) return &r.values;
  }
  return nullptr;
}

std::map<std::pair<std::uint32_t, std::uint32_t>, OpAggregate> AggregateOps(
    const RegionCounts& counts) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, OpAggregate> out;
  for (const CountedRegion& r : counts.ops) {
    OpAggregate& a = out[{r.case_index, r.index}];
    if (a.count == 0) {
      a.sum.assign(r.values.size(), 0);
      a.min = r.values;
      a.max = r.values;
    }
    ++a.count;
    for (std::size_t k = 0; k < r.values.size() && k < a.sum.size(); ++k) {
      a.sum[k] += r.values[k];
      a.min[k] = std::min(a.min[k], r.values[k]);
      a.max[k] = std::max(a.max[k], r.values[k]);
    }
  }
  return out;
}

}  // namespace mculab::agent
