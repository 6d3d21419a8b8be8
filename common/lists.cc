#include "common/lists.h"

#include <charconv>

namespace mculab {
namespace {

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename T, typename Print>
std::string Join(const std::vector<T>& items, Print print) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += print(items[i]);
  }
  return out;
}

}  // namespace

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = TrimBlanks(text.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<std::vector<std::int32_t>> ParseIntList(std::string_view text) {
  std::vector<std::int32_t> out;
  for (const std::string& item : SplitList(text)) {
    std::int32_t v = 0;
    const char* end = item.data() + item.size();
    auto [next, ec] = std::from_chars(item.data(), end, v);
    if (ec != std::errc() || next != end) return std::nullopt;
    out.push_back(v);
  }
  return out;
}

std::string JoinList(const std::vector<std::string>& items) {
  return Join(items, [](const std::string& s) -> const std::string& { return s; });
}

std::string JoinList(const std::vector<std::int32_t>& items) {
  return Join(items, [](std::int32_t v) { return std::to_string(v); });
}

}  // namespace mculab
