// Small operator-benchmark cases shared by the agent's unit tests.
#pragma once

#include <vector>

#include "agent/boards/board.h"
#include "agent/runner/runner_session.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"

namespace mculab::agent::testing {

// Three small conv2d_s8 cases (ids 10, 11, 12).
inline std::vector<WorkloadCase> ConvCases() {
  return {
      {10, {1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1}},
      {11, {1, 8, 6, 6, 8, 1, 1, 0, 0, 1, 1}},
      {12, {1, 3, 9, 9, 2, 3, 3, 0, 0, 2, 2}},
  };
}

inline constexpr std::uint32_t kSeed = 1234;

inline BoardInfo Info(std::string name, std::string kind, bool emulated = false) {
  BoardInfo i;
  i.name = std::move(name);
  i.kind = std::move(kind);
  i.emulated = emulated;
  return i;
}

}  // namespace mculab::agent::testing
