#include "cli/custom_submit.h"

#include <fmt/format.h>

#include <array>
#include <fstream>

#include "common/elf_arch.h"

namespace mculab::cli {

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
