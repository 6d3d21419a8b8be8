// Durations on the command line (`mculab reserve BOARD --for 2h`): a number with a unit, ms, s,
// m, h or d (no unit: seconds), or several run together ("1h30m"). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab::cli {

// Milliseconds, > 0; an error naming the text and the accepted forms otherwise.
Result<std::int64_t> ParseDurationMs(std::string_view text);

// "2h", "1h30m", "45s", "500ms": the shortest exact form.
std::string FormatDurationMs(std::int64_t ms);

}  // namespace mculab::cli
