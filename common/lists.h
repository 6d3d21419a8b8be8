// Comma-separated lists: the one rule for every place that reads or writes one (CLI flags such as
// --events and --params, HTTP query values such as state= and jobs=, the store's text columns,
// the runner's Hello counter names).
//
// Splitting: the text is cut at every ',', each item is trimmed of spaces and tabs at both ends,
// and items left empty are dropped: "a, b,,c ," gives {"a", "b", "c"} and "" or " , " gives {}.
// There is no quoting: an item never holds a comma. Joining writes the items with ',' and nothing
// else, so SplitList(JoinList(v)) == v for items without commas, outer blanks or emptiness.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mculab {

std::vector<std::string> SplitList(std::string_view text);

// SplitList, then every item read as a decimal int32 (an optional '-' sign, digits, nothing else);
// nullopt when an item is not one.
std::optional<std::vector<std::int32_t>> ParseIntList(std::string_view text);

std::string JoinList(const std::vector<std::string>& items);
std::string JoinList(const std::vector<std::int32_t>& items);

}  // namespace mculab
