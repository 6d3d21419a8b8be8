// The built-in operator benchmarks by name: ids, parameter names in the runner's order, the
// synonyms a CSV header may use for each, and defaults for optional parameters.
// The ids and parameter order are firmware_stub/include/mculab/ops.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mculab {

struct OpParam {
  std::string name;                           // canonical name, as shown and exported
  std::vector<std::string> synonyms;          // lowercase; matched case-insensitively
  std::optional<std::int32_t> default_value;  // optional parameter when set
  std::int32_t min_value = 1;
  std::int32_t max_value = 65535;  // MCULAB_MAX_DIM (mculab/ops.h)
};

struct OpInfo {
  std::string name;  // e.g. conv2d_s8
  std::uint16_t id;  // mculab_op_id
  std::string description;
  std::vector<OpParam> params;
  std::string limits;  // the kernel's limits across parameters, in words ("" when none)
};

const std::vector<OpInfo>& AllOps();
const OpInfo* FindOp(std::string_view name);
const OpInfo* FindOp(std::uint16_t id);
// "conv2d_s8, fully_connected_s8" for error messages.
std::string OpNames();

// Validates one case's parameters against the op (count and ranges), naming what is wrong.
Status ValidateCaseParams(const OpInfo& op, const std::vector<std::int32_t>& params);

}  // namespace mculab
