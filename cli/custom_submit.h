// `mculab submit --firmware runner.elf [--blob model.bin] [--cases ids.csv]`: the CLI's pure parts
// of a custom-runner job (docs/writing-a-runner.md), tested without a network.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab::cli {

// Checks that the first bytes of `path` are an ELF header (the server checks the architecture);
// the error says what the file looks like instead.
Status CheckFirmwareFile(const std::string& path);

// "runner.elf: 12.0 of 48.0 MiB (25%)"
std::string UploadProgress(std::string_view name, std::uint64_t sent, std::uint64_t total);

}  // namespace mculab::cli
