// A request target taken apart: the percent-decoded path and the query's parameters, and typed
// reads of those parameters whose errors name the parameter (the API's 400 messages).
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace mculab::server::http {

// Percent-decodes `text`; with `plus_is_space` (query strings, as browsers' URLSearchParams
// writes them) '+' is a space. kInvalidArgument on a malformed escape or a NUL byte.
Result<std::string> PercentDecode(std::string_view text, bool plus_is_space);

class QueryParams {
 public:
  QueryParams() = default;
  explicit QueryParams(std::vector<std::pair<std::string, std::string>> params)
      : params_(std::move(params)) {}

  // The first value of `name`; nullopt when absent or empty (an empty value means "not given").
  std::optional<std::string> Get(std::string_view name) const;
  // An integer in [min, max]; `fallback` when absent or empty; kInvalidArgument naming the
  // parameter otherwise.
  Result<std::int64_t> Int(std::string_view name, std::int64_t min, std::int64_t max,
                           std::int64_t fallback) const;
  // As Int, nullopt when absent or empty.
  Result<std::optional<std::int64_t>> OptionalInt(std::string_view name, std::int64_t min,
                                                  std::int64_t max) const;

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

struct Target {
  std::string path;  // percent-decoded; '+' stays '+'
  QueryParams query;
};

// "/a%20b?x=1&y=2" -> {"/a b", {x: 1, y: 2}}. kInvalidArgument for a target that is not an
// absolute path or does not decode.
Result<Target> ParseTarget(std::string_view target);

}  // namespace mculab::server::http
