// mculab-tflite-writer: writes the sample int8 network (tflite_writer.h, SampleNet) as a .tflite
// file, e.g. for a quick-start job.
//   mculab-tflite-writer [--seed N] [--float-io] [--long-names] [--last-op CODE] OUT.tflite
//   mculab-tflite-writer --mobilenet-v2 [--seed N] [--resolution R] [--alpha A] OUT.tflite
// --mobilenet-v2 writes MobileNetV2 int8 as PyTorch's exporter does (tflite_writer.h), at
// resolution R (default 224, a multiple of 32) and width multiplier A (default 1.0).
// --long-names makes every tensor's name 100 characters long (its own, then "/xxx...").
// --float-io writes SampleNetFloatIO (float32 input and output around QUANTIZE and DEQUANTIZE).
// --last-op gives the last operator (SOFTMAX) another builtin code: a model with an operator the
// interpreter lacks, for admission tests.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "tflite_writer.h"

int main(int argc, char** argv) {
  uint32_t seed = 1;
  int32_t last_op = -1;
  bool float_io = false;
  bool long_names = false;
  bool mobilenet = false;
  int resolution = 224;
  float alpha = 1.0f;
  const char* out = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 0));
    } else if (std::strcmp(argv[i], "--float-io") == 0) {
      float_io = true;
    } else if (std::strcmp(argv[i], "--mobilenet-v2") == 0) {
      mobilenet = true;
    } else if (std::strcmp(argv[i], "--resolution") == 0 && i + 1 < argc) {
      resolution = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
      if (resolution < 32 || resolution > 512 || resolution % 32 != 0) {
        std::fprintf(stderr, "--resolution takes a multiple of 32 from 32 to 512, got %s\n",
                     argv[i]);
        return 2;
      }
    } else if (std::strcmp(argv[i], "--alpha") == 0 && i + 1 < argc) {
      alpha = std::strtof(argv[++i], nullptr);
      if (!(alpha >= 0.1f && alpha <= 2.0f)) {
        std::fprintf(stderr, "--alpha takes a width multiplier from 0.1 to 2, got %s\n", argv[i]);
        return 2;
      }
    } else if (std::strcmp(argv[i], "--long-names") == 0) {
      long_names = true;
    } else if (std::strcmp(argv[i], "--last-op") == 0 && i + 1 < argc) {
      last_op = static_cast<int32_t>(std::strtol(argv[++i], nullptr, 0));
    } else if (argv[i][0] != '-' && out == nullptr) {
      out = argv[i];
    } else {
      out = nullptr;
      break;
    }
  }
  if (out == nullptr) {
    std::fprintf(stderr,
                 "usage: mculab-tflite-writer [--seed N] [--float-io] [--long-names] "
                 "[--last-op CODE] OUT.tflite\n"
                 "       mculab-tflite-writer --mobilenet-v2 [--seed N] [--resolution R] "
                 "[--alpha A] OUT.tflite\n");
    return 2;
  }
  const bool sample_options = float_io || long_names || last_op >= 0;
  const bool mobilenet_options = resolution != 224 || alpha != 1.0f;
  if (mobilenet && sample_options) {
    std::fprintf(stderr,
                 "--float-io, --long-names and --last-op change the sample net; --mobilenet-v2 "
                 "takes --seed, --resolution and --alpha only\n");
    return 2;
  }
  if (!mobilenet && mobilenet_options) {
    std::fprintf(stderr, "--resolution and --alpha need --mobilenet-v2\n");
    return 2;
  }
  mculab::tflite_writer::Model model =
      mobilenet  ? mculab::tflite_writer::MobileNetV2(seed, resolution, alpha)
      : float_io ? mculab::tflite_writer::SampleNetFloatIO(seed)
                 : mculab::tflite_writer::SampleNet(seed);
  if (last_op >= 0) {
    model.operators.back().builtin = last_op;
    model.operators.back().options_type = 0;
    model.operators.back().options.clear();
  }
  if (long_names) {
    // Every tensor's name made 100 characters long ("conv1/" + x's), as converters write them.
    for (auto& t : model.tensors) {
      t.name += "/";
      t.name.resize(100, 'x');
    }
  }
  const std::vector<uint8_t> bytes = mculab::tflite_writer::Serialize(model);
  std::ofstream f(out, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    std::fprintf(stderr, "mculab-tflite-writer: cannot write %s\n", out);
    return 1;
  }
  std::printf("wrote %s (%zu bytes, seed %u)\n", out, bytes.size(), seed);
  return 0;
}
