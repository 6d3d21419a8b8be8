#include "cli/model_submit.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/tflite_model.h"

namespace mculab::cli {
namespace {

Result<std::vector<std::uint8_t>> ReadBytes(const std::string& path, const char* what) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("cannot read the ") + what + " " + path + ": " + ec.message());
  if (size > kMaxModelBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("the ") + what + " " + path + " is " + std::to_string(size) +
                         " bytes; the limit is " + std::to_string(kMaxModelBytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> out(size);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(size));
  if (!in)
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("cannot read the ") + what + " " + path);
  return out;
}

}  // namespace

Result<std::vector<std::uint8_t>> ReadModelBlob(const std::string& model_path,
                                                const std::vector<std::string>& input_paths) {
  auto model = ReadBytes(model_path, "model");
  if (!model) return model.error();
  std::vector<std::uint8_t> input;
  // Several inputs travel concatenated in the graph's input order.
  for (const std::string& input_path : input_paths) {
    auto in = ReadBytes(input_path, "input");
    if (!in) return in.error();
    if (in->empty()) {
      return MakeError(ErrorCode::kInvalidArgument, "the input " + input_path + " is empty");
    }
    input.insert(input.end(), in->begin(), in->end());
  }
  std::vector<std::uint8_t> blob = PackModelBlob(*model, input);
  if (auto inspected = InspectModel(blob); !inspected) {
    return MakeError(ErrorCode::kInvalidArgument, model_path + ": " + inspected.error().message);
  }
  return blob;
}

Result<std::string> InspectModelFile(const std::string& model_path,
                                     const std::vector<std::string>& input_paths, bool json) {
  auto blob = ReadModelBlob(model_path, input_paths);
  if (!blob) return blob.error();
  auto m = InspectModel(*blob);
  if (!m) return m.error();
  if (!json) return RenderModelInspection(*m);
  nlohmann::json layers = nlohmann::json::array();
  for (const ModelLayer& l : m->layers) {
    layers.push_back({{"index", l.index},
                      {"type", l.type},
                      {"name", l.name},
                      {"input_shape", l.input_shape},
                      {"weight_shape", l.weight_shape},
                      {"output_shape", l.output_shape},
                      {"params", l.params},
                      {"macs", l.macs},
                      {"output_bytes", l.output_bytes}});
  }
  nlohmann::json out = {{"model_bytes", m->model_bytes},
                        {"input_shape", m->input_shape},
                        {"input_bytes", m->input_bytes},
                        {"given_input_bytes", m->given_input_bytes},
                        {"output_shape", m->output_shape},
                        {"output_bytes", m->output_bytes},
                        {"macs", m->macs},
                        {"arena_bytes", m->arena_bytes},
                        {"persistent_bytes", m->persistent_bytes},
                        {"scratch_bytes", m->scratch_bytes},
                        {"naive_bytes", m->naive_bytes},
                        {"tables_bytes", m->tables_bytes},
                        {"layers", layers}};
  return out.dump(2) + "\n";
}

}  // namespace mculab::cli
