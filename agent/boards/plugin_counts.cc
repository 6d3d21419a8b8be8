#include "agent/boards/plugin_counts.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "agent/boards/emulator_process.h"

namespace mculab::agent {
namespace {

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool ParseU64(std::string_view s, std::uint64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::string QemuOptValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    out += c;
    if (c == ',') out += ',';
  }
  return out;
}

std::vector<std::string> QemuPluginEvents(bool cpu_has_mve) {
  std::vector<std::string> events = {"instructions", "loads", "stores", "branches"};
  if (cpu_has_mve) events.push_back("mve_instructions");
  return events;
}

std::string QemuPluginArg(const std::string& library, const std::string& out,
                          const std::vector<std::string>& events, std::uint32_t markers) {
  std::string arg = QemuOptValue(library) + ",out=" + QemuOptValue(out);
  // The plugin watches a 64 KiB region; a runner that folds its markers (the STM32 ports) is no
  // QEMU board's runner, and the plugin's default stands.
  if (markers != 0 && markers % 0x10000 == 0) arg += ",markers=" + HexAddress(markers);
  if (!events.empty()) {
    arg += ",events=";
    for (std::size_t i = 0; i < events.size(); ++i) arg += (i ? "+" : "") + events[i];
  }
  return arg;
}

Result<RegionCounts> ParsePluginCounts(std::string_view text) {
  RegionCounts out;
  bool have_header = false;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const auto w = Words(line);
    if (w.empty()) continue;
    auto bad = [&](const std::string& what) {
      return MakeError(ErrorCode::kDataLoss, "QEMU plugin output line " + std::to_string(line_no) +
                                                 ": " + what + ": \"" + std::string(line) + "\"");
    };
    if (w[0] == "#") {
      if (w.size() >= 4 && w[1] == "kind" && w[2] == "case" && w[3] == "index") {
        out.columns.clear();
        for (std::size_t i = 4; i < w.size(); ++i) out.columns.emplace_back(w[i]);
        have_header = true;
      } else if (w.size() >= 2 && w[1] == "end") {
        out.ended = true;
        for (std::size_t i = 2; i < w.size(); ++i) {
          std::uint64_t v = 0;
          if (w[i].starts_with("unclosed=") && ParseU64(w[i].substr(9), v)) out.unclosed = v;
          if (w[i].starts_with("unmatched=") && ParseU64(w[i].substr(10), v)) out.unmatched = v;
        }
      }
      continue;
    }
    if (!have_header) return bad("a region before the column header");
    if (w.size() != 3 + out.columns.size()) {
      return bad("expected " + std::to_string(3 + out.columns.size()) + " fields");
    }
    CountedRegion r;
    std::uint64_t c = 0, i = 0;
    if (!ParseU64(w[1], c) || !ParseU64(w[2], i) || c > 0xFFFF || i > 0xFFFFFFFFu) {
      return bad("case and index must be numbers");
    }
    r.case_index = static_cast<std::uint32_t>(c);
    r.index = static_cast<std::uint32_t>(i);
    for (std::size_t k = 3; k < w.size(); ++k) {
      std::uint64_t v = 0;
      if (!ParseU64(w[k], v)) return bad("counts must be decimal numbers");
      r.values.push_back(v);
    }
    if (w[0] == "iter") {
      out.iterations.push_back(std::move(r));
    } else if (w[0] == "empty") {
      out.empties.push_back(std::move(r));
    } else if (w[0] == "op") {
      out.ops.push_back(std::move(r));
    } else {
      return bad("unknown region kind");
    }
  }
  if (!have_header) {
    return MakeError(ErrorCode::kDataLoss, "QEMU plugin output has no column header (empty file?)");
  }
  return out;
}

}  // namespace mculab::agent
