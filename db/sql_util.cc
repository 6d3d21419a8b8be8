#include "db/sql_util.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace mculab::db {

std::string JoinInts(const std::vector<std::int32_t>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  return out;
}

std::vector<std::int32_t> SplitInts(const std::string& s) {
  std::vector<std::int32_t> out;
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    std::int32_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) break;
    out.push_back(v);
    p = next;
    if (p < end && *p == ',') ++p;
  }
  return out;
}

std::string JoinStrings(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += v[i];
  }
  return out;
}

std::vector<std::string> SplitStrings(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

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
