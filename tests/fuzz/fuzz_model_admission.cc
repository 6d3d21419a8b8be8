// libFuzzer target: a model job's admission as the server runs it (server/service/
// model_admission.h) on arbitrary blobs: InspectModel parses and plans the blob, then
// AdmitModelOnBoards checks the plan against a board that declares its RAM and one that declares
// none (the max_model_arena bound). Refused with a status, or admitted only when the plan fits
// both; never a crash, a read out of bounds or an admitted arena over the bound.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common/tflite_model.h"
#include "server/domain/board.h"
#include "server/service/model_admission.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A copy of exactly `size` bytes, so ASan sees any read past the end.
  const std::vector<std::uint8_t> blob(data, data + size);
  auto m = mculab::InspectModel(blob);
  if (!m.ok()) return 0;
  constexpr std::uint64_t kMaxArena = 1u << 20;
  mculab::server::Board sized;
  sized.name = "sized-0";
  sized.ram_bytes = 2u << 20;
  mculab::server::Board undeclared;
  undeclared.name = "undeclared-0";
  const std::vector<const mculab::server::Board*> boards = {&sized, &undeclared};
  const mculab::Status s =
      mculab::server::AdmitModelOnBoards(*m, blob.size(), "fuzz.tflite", boards, kMaxArena);
  if (s.ok() && (mculab::server::ModelArenaPlan(*m) > kMaxArena ||
                 mculab::server::ModelRamNeed(*m, blob.size()) > sized.ram_bytes)) {
    std::abort();  // admitted a plan over a bound
  }
  return 0;
}
