#include "common/tflite_model.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "common/sha256.h"
#include "mculab/runner_protocol.h"
#include "mculab/tflite.h"

namespace mculab {
namespace {

const char* TypeName(std::uint8_t type) {
  switch (type) {
    case MCULAB_TFL_INT8:
      return "int8";
    case MCULAB_TFL_INT16:
      return "int16";
    case MCULAB_TFL_INT32:
      return "int32";
    case MCULAB_TFL_INT64:
      return "int64";
    case MCULAB_TFL_FLOAT32:
      return "float32";
    default:
      return "other";
  }
}

std::vector<std::int32_t> ShapeOf(const mculab_tfl_tensor& t) {
  return std::vector<std::int32_t>(t.dims, t.dims + t.num_dims);
}

const char* ActivationName(std::uint8_t a) {
  switch (a) {
    case 1:
      return "RELU";
    case 2:
      return "RELU_N1_TO_1";
    case 3:
      return "RELU6";
  }
  return "";
}

std::string ParamsOf(const mculab_tfl_model& m, const mculab_tfl_op& op) {
  std::string out;
  auto act = [&] {
    if (*ActivationName(op.activation) != 0)
      out += std::string(" ") + ActivationName(op.activation);
  };
  switch (op.builtin) {
    case MCULAB_TFL_CONV_2D:
    case MCULAB_TFL_DEPTHWISE_CONV_2D: {
      const mculab_tfl_tensor& w = m.tensors[op.inputs[1]];
      out = fmt::format("{}x{} /{}x{} {}", w.dims[1], w.dims[2], op.stride_h, op.stride_w,
                        op.padding == 0 ? "SAME" : "VALID");
      if (op.dilation_h != 1 || op.dilation_w != 1) {
        out += fmt::format(" dil {}x{}", op.dilation_h, op.dilation_w);
      }
      if (op.builtin == MCULAB_TFL_DEPTHWISE_CONV_2D && op.depth_multiplier != 1) {
        out += fmt::format(" mult {}", op.depth_multiplier);
      }
      act();
      break;
    }
    case MCULAB_TFL_AVERAGE_POOL_2D:
    case MCULAB_TFL_MAX_POOL_2D:
      out = fmt::format("{}x{} /{}x{} {}", op.filter_h, op.filter_w, op.stride_h, op.stride_w,
                        op.padding == 0 ? "SAME" : "VALID");
      act();
      break;
    case MCULAB_TFL_FULLY_CONNECTED:
    case MCULAB_TFL_ADD:
      act();
      if (!out.empty()) out.erase(0, 1);
      break;
    case MCULAB_TFL_SOFTMAX:
      out = fmt::format("beta {}", op.beta);
      break;
    default:
      break;
  }
  return out;
}

struct Loaded {
  std::unique_ptr<mculab_tfl_model> model = std::make_unique<mculab_tfl_model>();
  mculab_tfl_blob blob{};
};

Error ModelError(const mculab_tfl_model& m, mculab_tfl_status st) {
  if (st == MCULAB_TFL_UNSUPPORTED_OP && m.num_missing > 0) {
    std::string missing;
    for (std::uint32_t k = 0; k < m.num_missing; ++k) {
      missing += fmt::format("{}{} (builtin code {}, first at operator {})", k == 0 ? "" : ", ",
                             mculab_tfl_builtin_name(m.missing_builtins[k]), m.missing_builtins[k],
                             m.missing_first_op[k]);
    }
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("the model needs {} operator{} the runner's interpreter does not "
                    "run: {}; it runs {}",
                    m.num_missing, m.num_missing == 1 ? "" : "s", missing, SupportedModelOps()));
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("{}: {}", mculab_tfl_status_name(st), m.error));
}

// Loads and plans (no arena when `arena` is empty).
Result<Loaded> Load(std::span<const std::uint8_t> blob, std::vector<std::uint8_t>* arena) {
  Loaded l;
  if (mculab_tfl_unpack(blob.data(), blob.size(), &l.blob) != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the model blob's lengths (\"MLMI\" header) do not match its size");
  }
  mculab_tfl_status st = mculab_tfl_load(l.model.get(), l.blob.model, l.blob.model_len);
  if (st != MCULAB_TFL_OK) return ModelError(*l.model, st);
  st = mculab_tfl_prepare(l.model.get(), nullptr, 0);
  if (st != MCULAB_TFL_OK && st != MCULAB_TFL_NO_MEMORY) return ModelError(*l.model, st);
  if (arena != nullptr) {
    const mculab_tfl_plan plan = l.model->plan;
    arena->assign(std::size_t{plan.arena_bytes} + plan.persistent_bytes + 64, 0);
    st = mculab_tfl_prepare(l.model.get(), arena->data(), arena->size());
    if (st != MCULAB_TFL_OK) return ModelError(*l.model, st);
  }
  const std::uint32_t in_bytes = mculab_tfl_inputs_bytes(l.model.get());
  if (l.blob.input != nullptr && l.blob.input_len != in_bytes) {
    std::string shapes;
    for (std::uint32_t k = 0; k < l.model->num_inputs; ++k) {
      shapes += fmt::format("{}{}", k == 0 ? "" : ", ",
                            fmt::join(ShapeOf(l.model->tensors[l.model->inputs[k]]), "x"));
    }
    const bool several = l.model->num_inputs > 1;
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the given input has {} bytes; the model's input tensor{} ({}{}) "
                                 "take{} {} bytes",
                                 l.blob.input_len, several ? "s" : "", shapes,
                                 several ? ", concatenated in the graph's order" : "",
                                 several ? "" : "s", in_bytes));
  }
  return l;
}

}  // namespace

std::string SupportedModelOps() {
  const std::int32_t* codes = nullptr;
  const std::uint32_t n = mculab_tfl_supported_ops(&codes);
  std::string out;
  for (std::uint32_t i = 0; i < n; ++i) {
    out += (i == 0 ? "" : ", ") + std::string(mculab_tfl_op_name(codes[i]));
  }
  return out;
}

std::vector<std::uint8_t> PackModelBlob(std::span<const std::uint8_t> model,
                                        std::span<const std::uint8_t> input) {
  if (input.empty()) return std::vector<std::uint8_t>(model.begin(), model.end());
  std::vector<std::uint8_t> out(MCULAB_TFL_BLOB_HEAD, 0);
  std::memcpy(out.data(), MCULAB_TFL_BLOB_MAGIC, 4);
  auto put = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  put(4, static_cast<std::uint32_t>(model.size()));
  put(8, static_cast<std::uint32_t>(input.size()));
  out.insert(out.end(), model.begin(), model.end());
  out.insert(out.end(), input.begin(), input.end());
  return out;
}

Result<ModelInspection> InspectModel(std::span<const std::uint8_t> blob) {
  auto l = Load(blob, nullptr);
  if (!l) return l.error();
  const mculab_tfl_model& m = *l->model;
  ModelInspection out;
  out.model_bytes = l->blob.model_len;
  out.given_input_bytes = l->blob.input_len;
  out.input_shape = ShapeOf(m.tensors[m.inputs[0]]);
  out.output_shape = ShapeOf(m.tensors[m.outputs[0]]);
  out.input_type = TypeName(m.tensors[m.inputs[0]].type);
  out.output_type = TypeName(m.tensors[m.outputs[0]].type);
  out.model_sha256 = Sha256Hex(std::span<const std::uint8_t>(l->blob.model, l->blob.model_len));
  out.input_bytes = mculab_tfl_inputs_bytes(&m);
  for (std::uint32_t k = 0; k < m.num_outputs; ++k)
    out.output_bytes += m.tensors[m.outputs[k]].bytes;
  out.num_inputs = m.num_inputs;
  out.num_outputs = m.num_outputs;
  out.arena_bytes = m.plan.arena_bytes;
  out.persistent_bytes = m.plan.persistent_bytes;
  out.scratch_bytes = m.plan.scratch_bytes;
  out.naive_bytes = m.plan.naive_bytes;
  out.tables_bytes = sizeof(mculab_tfl_model);
  for (std::uint16_t i = 0; i < m.num_ops; ++i) {
    const mculab_tfl_op& op = m.ops[i];
    ModelLayer layer;
    layer.index = i;
    layer.type = mculab_tfl_op_name(op.builtin);
    // The whole name (the interpreter's tables keep 31 characters), printable ASCII.
    const char* whole = nullptr;
    const std::uint32_t n = mculab_tfl_tensor_name(&m, op.output, &whole);
    if (whole != nullptr) {
      layer.name.reserve(n);
      for (std::uint32_t k = 0; k < n; ++k) {
        const char c = whole[k];
        layer.name += c >= 32 && c < 127 ? c : '?';
      }
    } else {
      layer.name = op.name;
    }
    if (op.inputs[0] >= 0) layer.input_shape = ShapeOf(m.tensors[op.inputs[0]]);
    if (op.num_inputs > 1 && op.inputs[1] >= 0 && m.tensors[op.inputs[1]].is_const) {
      layer.weight_shape = ShapeOf(m.tensors[op.inputs[1]]);
    }
    layer.output_shape = ShapeOf(m.tensors[op.output]);
    layer.output_bytes = m.tensors[op.output].bytes;
    layer.params = ParamsOf(m, op);
    layer.macs = op.macs;
    out.macs += op.macs;
    out.layers.push_back(std::move(layer));
  }
  return out;
}

Result<std::uint32_t> ModelReferenceChecksum(std::span<const std::uint8_t> blob,
                                             std::uint32_t seed) {
  std::vector<std::uint8_t> arena;
  auto l = Load(blob, &arena);
  if (!l) return l.error();
  mculab_tfl_model* m = l->model.get();
  if (l->blob.input != nullptr) {
    if (mculab_tfl_set_input(m, l->blob.input, l->blob.input_len) != MCULAB_TFL_OK) {
      return MakeError(ErrorCode::kInvalidArgument, m->error);
    }
  } else {
    mculab_tfl_seed_input(m, seed);
  }
  const mculab_tfl_status st = mculab_tfl_invoke(m, nullptr);
  if (st != MCULAB_TFL_OK) return ModelError(*m, st);
  return mculab_tfl_output_crc32(m);
}

namespace {
std::string ShapeText(const std::vector<std::int32_t>& s) {
  return s.empty() ? std::string("-") : fmt::format("{}", fmt::join(s, "x"));
}
}  // namespace

std::string ModelSummary(const ModelInspection& m) {
  return fmt::format("{} operators, {} MACs, input{} {} {}, output{} {} {}", m.layers.size(),
                     m.macs, m.num_inputs > 1 ? fmt::format(" 1 of {}", m.num_inputs) : "",
                     ShapeText(m.input_shape), m.input_type,
                     m.num_outputs > 1 ? fmt::format(" 1 of {}", m.num_outputs) : "",
                     ShapeText(m.output_shape), m.output_type);
}

std::string RenderModelInspection(const ModelInspection& m) {
  auto shape = ShapeText;
  std::string out = fmt::format(
      "model: {} bytes, {} operators, {} MACs per inference, SHA-256 {}\ninput{} {} {} ({} "
      "bytes{}), output{} {} {} ({} bytes)\n\n",
      m.model_bytes, m.layers.size(), m.macs, m.model_sha256,
      m.num_inputs > 1 ? fmt::format(" 1 of {}", m.num_inputs) : "", shape(m.input_shape),
      m.input_type, m.input_bytes, m.given_input_bytes != 0 ? ", given" : ", seeded by the runner",
      m.num_outputs > 1 ? fmt::format(" 1 of {}", m.num_outputs) : "", shape(m.output_shape),
      m.output_type, m.output_bytes);
  out +=
      fmt::format("{:>3}  {:<18} {:<14} {:<14} {:<14} {:<22} {:>11} {:>6}  {}\n", "#", "operator",
                  "input", "weights", "output", "parameters", "MACs", "share", "name");
  for (const ModelLayer& l : m.layers) {
    const double share = m.macs == 0 ? 0.0 : 100.0 * static_cast<double>(l.macs) / m.macs;
    out += fmt::format("{:>3}  {:<18} {:<14} {:<14} {:<14} {:<22} {:>11} {:>5.1f}%  {}\n", l.index,
                       l.type, shape(l.input_shape), shape(l.weight_shape), shape(l.output_shape),
                       l.params.empty() ? "-" : l.params, l.macs, share, l.name);
  }
  out += fmt::format(
      "\nplanned arena: {} bytes of activations and operator scratch (largest scratch {}), one "
      "plan "
      "by TFLite Micro's rules (every buffer apart: {})\npersistent: {} bytes (kernel data and "
      "variables)\ninterpreter tables: {} bytes in this build (less on a 32-bit board)\n",
      m.arena_bytes, m.scratch_bytes, m.naive_bytes, m.persistent_bytes, m.tables_bytes);
  return out;
}

}  // namespace mculab
