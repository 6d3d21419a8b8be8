// `mculab submit --firmware runner.elf [--blob model.bin] [--cases ids.csv]`: the CLI's pure parts
// of a custom-runner job (docs/writing-a-runner.md), tested without a network.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mculab::cli {

// The case ids of a custom runner's CSV: a header line, then one case per line whose first column
// is the id (other columns are the runtime's business and are ignored). Errors name the line.
// No data lines is an error; ids must be unique.
Result<std::vector<std::int64_t>> ParseCaseIdsCsv(std::string_view text, std::string_view source);

// Checks that the first bytes of `path` are an ELF header (the server checks the architecture);
// the error says what the file looks like instead.
Status CheckFirmwareFile(const std::string& path);

// "runner.elf: 12.0 of 48.0 MiB (25%)"
std::string UploadProgress(std::string_view name, std::uint64_t sent, std::uint64_t total);

}  // namespace mculab::cli
