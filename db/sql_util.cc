#include "db/sql_util.h"

#include <nlohmann/json.hpp>

#include "common/lists.h"

namespace mculab::db {

std::string JoinInts(const std::vector<std::int32_t>& v) { return JoinList(v); }

std::vector<std::int32_t> SplitInts(const std::string& s) {
  return ParseIntList(s).value_or(std::vector<std::int32_t>{});
}

std::string JoinStrings(const std::vector<std::string>& v) { return JoinList(v); }

std::vector<std::string> SplitStrings(const std::string& s) { return SplitList(s); }

std::string TagsToJson(const std::map<std::string, std::string>& tags) {
  return nlohmann::json(tags).dump();
}

std::map<std::string, std::string> TagsFromJson(const std::string& text) {
  std::map<std::string, std::string> tags;
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return tags;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_string()) tags[it.key()] = it.value().get<std::string>();
  }
  return tags;
}
}  // namespace mculab::db
