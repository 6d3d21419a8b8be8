#include "common/elf_arch.h"

#include <fmt/format.h>

namespace mculab {
namespace {

constexpr std::uint16_t kEmArm = 40;
constexpr std::uint16_t kEmX86_64 = 62;
constexpr std::uint16_t kEmAarch64 = 183;
constexpr std::uint16_t kEmRiscv = 243;

std::uint16_t U16(std::span<const std::uint8_t> b, std::size_t off, bool le) {
  return le ? static_cast<std::uint16_t>(b[off] | (b[off + 1] << 8))
            : static_cast<std::uint16_t>((b[off] << 8) | b[off + 1]);
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string ArchNeeds(std::string_view arch) {
  if (arch == "arm32") return "an ARM 32-bit ELF";
  if (arch == "x86_64") return "an x86-64 ELF";
  if (arch == "aarch64") return "an AArch64 ELF";
  return "an ELF for " + std::string(arch);
}

}  // namespace

Result<ElfHeaderInfo> ReadElfHeader(std::span<const std::uint8_t> b) {
  if (b.size() < 20 || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F') {
    std::string looks = "it does not start with \\x7fELF";
    if (b.size() < 20) looks = fmt::format("it has only {} bytes", b.size());
    if (b.size() >= 2 && b[0] == '#' && b[1] == '!') looks = "it is a script (#!)";
    return MakeError(ErrorCode::kInvalidArgument,
                     "the firmware is not an ELF file (" + looks +
                         "): give the runner's .elf (or, for a host board, its Linux executable)");
  }
  ElfHeaderInfo h;
  if (b[4] != 1 && b[4] != 2) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the firmware's ELF class {} is neither 32- nor 64-bit", b[4]));
  }
  if (b[5] != 1 && b[5] != 2) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the firmware's ELF data encoding {} is unknown", b[5]));
  }
  h.bits = b[4] == 1 ? 32 : 64;
  h.little_endian = b[5] == 1;
  h.type = U16(b, 16, h.little_endian);
  h.machine = U16(b, 18, h.little_endian);
  return h;
}

std::string DescribeElf(const ElfHeaderInfo& e) {
  switch (e.machine) {
    case kEmArm:
      return e.bits == 32 ? "ARM 32-bit" : "ARM (64-bit class)";
    case kEmX86_64:
      return "x86-64";
    case kEmAarch64:
      return "AArch64";
    case kEmRiscv:
      return fmt::format("RISC-V {}-bit", e.bits);
    case 3:
      return "x86 32-bit";
    default:
      return fmt::format("machine {}, {}-bit", e.machine, e.bits);
  }
}

std::optional<std::string> ElfArch(const ElfHeaderInfo& e) {
  if (e.machine == kEmArm && e.bits == 32 && e.little_endian) return "arm32";
  if (e.machine == kEmX86_64 && e.bits == 64) return "x86_64";
  if (e.machine == kEmAarch64 && e.bits == 64) return "aarch64";
  return std::nullopt;
}

std::optional<std::string> ArchOfCpu(std::string_view cpu) {
  if (StartsWith(cpu, "cortex-m")) return "arm32";
  if (cpu == "x86_64" || cpu == "amd64") return "x86_64";
  if (cpu == "aarch64" || cpu == "arm64" || StartsWith(cpu, "cortex-a")) return "aarch64";
  return std::nullopt;
}

std::string HostArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__arm__)
  return "arm32";
#else
  return "unknown";
#endif
}

Status CheckElfRunsOn(const ElfHeaderInfo& elf, std::string_view arch, std::string_view what) {
  auto mine = ElfArch(elf);
  if (mine && *mine == arch) return {};
  return MakeError(
      ErrorCode::kFailedPrecondition,
      fmt::format("the firmware is an ELF for {}, but {} {} ({} needed)", DescribeElf(elf), what,
                  arch == "arm32" ? "is ARM 32-bit (Cortex-M)" : "runs " + std::string(arch),
                  ArchNeeds(arch)));
}

}  // namespace mculab
