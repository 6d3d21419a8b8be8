#include "cli/custom_submit.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <fstream>
#include <set>

#include "common/elf_arch.h"

namespace mculab::cli {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

Result<std::vector<std::int64_t>> ParseCaseIdsCsv(std::string_view text, std::string_view source) {
  std::vector<std::int64_t> ids;
  std::set<std::int64_t> seen;
  std::size_t line_no = 0;
  bool header = true;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (Trim(line).empty()) continue;
    if (header) {
      header = false;
      continue;
    }
    const std::string_view cell = Trim(line.substr(0, line.find(',')));
    std::int64_t id = 0;
    auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), id);
    if (ec != std::errc() || end != cell.data() + cell.size()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{}:{}: the first column must be an integer case id, got '{}'",
                                   source, line_no, cell));
    }
    if (!seen.insert(id).second) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{}:{}: case id {} appears twice", source, line_no, id));
    }
    ids.push_back(id);
  }
  if (ids.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: no cases (a header line, then one case id per line)", source));
  }
  return ids;
}

Status CheckFirmwareFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kInvalidArgument, "cannot open " + path);
  std::array<std::uint8_t, 64> head{};
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  auto elf = ReadElfHeader(
      std::span<const std::uint8_t>(head.data(), static_cast<std::size_t>(in.gcount())));
  if (!elf.ok()) return MakeError(ErrorCode::kInvalidArgument, path + ": " + elf.error().message);
  return {};
}

std::string UploadProgress(std::string_view name, std::uint64_t sent, std::uint64_t total) {
  const double mib = 1024.0 * 1024.0;
  const unsigned pct = total == 0 ? 100u : static_cast<unsigned>(sent * 100 / total);
  return fmt::format("{}: {:.1f} of {:.1f} MiB ({}%)", name, static_cast<double>(sent) / mib,
                     static_cast<double>(total) / mib, pct);
}

}  // namespace mculab::cli
