#include "server/http/params.h"

#include <charconv>

namespace mculab::server::http {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

Result<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return Invalid("the address has a malformed percent-escape");
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return Invalid("the address has a malformed percent-escape");
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return Invalid("the address contains a NUL byte");
    out += c;
  }
  return out;
}

std::optional<std::string> QueryParams::Get(std::string_view name) const {
  for (const auto& [k, v] : params_) {
    if (k == name) {
      if (v.empty()) return std::nullopt;
      return v;
    }
  }
  return std::nullopt;
}

Result<std::optional<std::int64_t>> QueryParams::OptionalInt(std::string_view name,
                                                             std::int64_t min,
                                                             std::int64_t max) const {
  auto raw = Get(name);
  if (!raw) return std::optional<std::int64_t>();
  std::int64_t v = 0;
  const char* begin = raw->data();
  const char* end = begin + raw->size();
  auto [p, ec] = std::from_chars(begin, end, v);
  if (ec == std::errc::result_out_of_range) {
    return Invalid(std::string(name) + " must be from " + std::to_string(min) + " to " +
                   std::to_string(max) + ", got " + *raw);
  }
  if (ec != std::errc() || p != end) {
    return Invalid(std::string(name) + " must be an integer, got \"" + *raw + "\"");
  }
  if (v < min || v > max) {
    return Invalid(std::string(name) + " must be from " + std::to_string(min) + " to " +
                   std::to_string(max) + ", got " + std::to_string(v));
  }
  return std::optional<std::int64_t>(v);
}

Result<std::int64_t> QueryParams::Int(std::string_view name, std::int64_t min, std::int64_t max,
                                      std::int64_t fallback) const {
  auto v = OptionalInt(name, min, max);
  if (!v.ok()) return v.error();
  return v->value_or(fallback);
}

Result<Target> ParseTarget(std::string_view target) {
  if (target.empty() || target[0] != '/') {
    return Invalid("the request target must be an absolute path");
  }
  const std::size_t q = target.find('?');
  Target t;
  auto path = PercentDecode(target.substr(0, q), false);
  if (!path.ok()) return path.error();
  t.path = std::move(*path);
  std::vector<std::pair<std::string, std::string>> params;
  if (q != std::string_view::npos) {
    std::string_view rest = target.substr(q + 1);
    const std::size_t hash = rest.find('#');
    if (hash != std::string_view::npos) rest = rest.substr(0, hash);
    while (!rest.empty()) {
      const std::size_t amp = rest.find('&');
      std::string_view pair = rest.substr(0, amp);
      rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
      if (pair.empty()) continue;
      const std::size_t eq = pair.find('=');
      auto key = PercentDecode(pair.substr(0, eq), true);
      if (!key.ok()) return key.error();
      auto value = PercentDecode(
          eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
      if (!value.ok()) return value.error();
      params.emplace_back(std::move(*key), std::move(*value));
    }
  }
  t.query = QueryParams(std::move(params));
  return t;
}

}  // namespace mculab::server::http
