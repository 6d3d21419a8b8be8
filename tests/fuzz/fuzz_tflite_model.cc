// libFuzzer target: the runner's TFLite flatbuffer reader, planner and interpreter
// (firmware_stub/include/mculab/tflite.h) on arbitrary models: refused with a status, or run,
// never a read or write out of bounds.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mculab/tflite.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static mculab_tfl_model m;
  // The reader keeps pointers into the model: give it a copy of exactly `size` bytes, so ASan
  // sees any read past the end.
  std::vector<std::uint8_t> model(data, data + size);
  if (mculab_tfl_load(&m, model.data(), model.size()) != MCULAB_TFL_OK) return 0;
  static std::vector<std::uint8_t> arena(256 * 1024);
  if (mculab_tfl_prepare(&m, arena.data(), arena.size()) != MCULAB_TFL_OK) return 0;
  // Every input (a graph may have several), given as one concatenated block, then every output
  // checksummed.
  std::vector<std::uint8_t> given(mculab_tfl_inputs_bytes(&m), 0x5A);
  (void)mculab_tfl_set_input(&m, given.data(), static_cast<std::uint32_t>(given.size()));
  mculab_tfl_seed_input(&m, 1);
  (void)mculab_tfl_invoke(&m, nullptr);
  (void)mculab_tfl_output_crc32(&m);
  return 0;
}
