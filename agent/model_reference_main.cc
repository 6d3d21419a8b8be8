// mculab-model-reference SEED FILE: the CRC-32 of a model job's output after one inference on this
// machine (common/tflite_model.h), printed in decimal. The agent runs it in the job sandbox under a
// memory limit (agent/run/model_reference.h). Exit status: 0 printed, 2 the model is refused (the
// reason on stderr), 3 out of memory, 1 a usage or file error.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <new>
#include <vector>

#include "common/tflite_model.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: mculab-model-reference SEED BLOB_FILE\n");
    return 1;
  }
  try {
    const auto seed = static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 10));
    std::ifstream in(argv[2], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", argv[2]);
      return 1;
    }
    const std::vector<std::uint8_t> blob((std::istreambuf_iterator<char>(in)),
                                         std::istreambuf_iterator<char>());
    auto crc = mculab::ModelReferenceChecksum(blob, seed);
    if (!crc) {
      std::fprintf(stderr, "%s\n", crc.error().message.c_str());
      return 2;
    }
    std::printf("%u\n", static_cast<unsigned>(*crc));
    return 0;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "out of memory: the model's tensors do not fit in the memory limit\n");
    return 3;
  }
}
