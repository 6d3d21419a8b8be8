// TensorFlow Lite Micro's own models for the interpreter's tests (../shared/models/tflite-micro):
// the files, and the seanet int16 integration tests' inputs and golden outputs (CSV of values in
// row-major order, one file per graph input) as the bytes the interpreter reads and writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "mculab/tflite.h"

namespace mculab::test_support {

inline std::string TfliteMicroDir() {
  return std::string(MCULAB_SHARED_MODELS_DIR) + "/tflite-micro";
}

inline std::vector<std::uint8_t> ReadBinary(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), {});
}

inline std::vector<std::int64_t> ReadCsvValues(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::int64_t> v;
  std::string cell;
  while (std::getline(f, cell, ',')) {
    std::istringstream c(cell);
    std::int64_t x;
    if (c >> x) v.push_back(x);
  }
  return v;
}

// Values as a tensor of `type` holds them (little-endian).
inline std::vector<std::uint8_t> ValuesAsBytes(const std::vector<std::int64_t>& v,
                                               std::uint8_t type) {
  const std::size_t size = type == MCULAB_TFL_INT16 ? 2 : type == MCULAB_TFL_INT8 ? 1 : 4;
  std::vector<std::uint8_t> b;
  for (std::int64_t x : v) {
    for (std::size_t k = 0; k < size; ++k) b.push_back(static_cast<std::uint8_t>(x >> (8 * k)));
  }
  return b;
}

// A seanet test: "add0" is seanet/add/add0.tflite with add0_input<k>_<type>.csv and
// add0_golden_<type>.csv.
struct SeanetFiles {
  std::string dir, name;
  std::string Model() const { return dir + "/" + name + ".tflite"; }
  // The CSV whose name starts with `<name>_<what>`, "" when none.
  std::string Csv(const std::string& what) const {
    const std::string prefix = name + "_" + what;
    if (!std::filesystem::is_directory(dir)) return "";
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string f = e.path().filename().string();
      if (f.rfind(prefix, 0) == 0 && f.size() > 4 && f.substr(f.size() - 4) == ".csv") {
        return e.path().string();
      }
    }
    return "";
  }
};

inline SeanetFiles Seanet(const std::string& name) {
  return {TfliteMicroDir() + "/seanet/" + name.substr(0, name.size() - 1), name};
}

// Every input CSV, in the graph's order, as the bytes of a given input; empty when one is missing
// or does not fit its tensor.
inline std::vector<std::uint8_t> SeanetInput(const SeanetFiles& s, const mculab_tfl_model& m) {
  std::vector<std::uint8_t> given;
  for (unsigned k = 0; k < m.num_inputs; ++k) {
    const std::string csv = s.Csv("input" + std::to_string(k) + "_");
    if (csv.empty()) return {};
    const mculab_tfl_tensor& t = m.tensors[m.inputs[k]];
    const std::vector<std::uint8_t> b = ValuesAsBytes(ReadCsvValues(csv), t.type);
    if (b.size() != t.bytes) return {};
    given.insert(given.end(), b.begin(), b.end());
  }
  return given;
}

}  // namespace mculab::test_support
