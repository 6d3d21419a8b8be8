// libFuzzer target: the operator-benchmark CSV parser (common/csv_cases.h) for every built-in op.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/csv_cases.h"
#include "common/op_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& op : mculab::AllOps()) (void)mculab::ParseCasesCsv(text, op, "fuzz.csv");
  return 0;
}
