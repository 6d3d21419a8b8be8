#include "tflite_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <utility>

namespace mculab::tflite_writer {
namespace {

class Builder {
 public:
  std::vector<uint8_t> buf;

  size_t Pad(size_t align, size_t extra = 0) {
    while ((buf.size() + extra) % align != 0) buf.push_back(0);
    return buf.size();
  }
  void PutU16(size_t at, uint16_t v) {
    buf[at] = static_cast<uint8_t>(v);
    buf[at + 1] = static_cast<uint8_t>(v >> 8);
  }
  void PutU32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) buf[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  void AppendU32(uint32_t v) {
    buf.resize(buf.size() + 4);
    PutU32(buf.size() - 4, v);
  }
  // Points the offset slot at `slot` to `target` (after it).
  void Link(size_t slot, size_t target) { PutU32(slot, static_cast<uint32_t>(target - slot)); }
};

// A table field: a scalar, or a reference to something written after the table.
struct Field {
  int id;
  std::vector<uint8_t> scalar;                // little-endian bytes
  std::function<size_t(Builder&)> reference;  // writes the target, returns its position
};

Field U8(int id, uint8_t v) { return {id, {v}, nullptr}; }
Field U32(int id, uint32_t v) {
  return {id,
          {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
           static_cast<uint8_t>(v >> 24)},
          nullptr};
}
Field F32(int id, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return U32(id, bits);
}
Field Ref(int id, std::function<size_t(Builder&)> f) { return {id, {}, std::move(f)}; }

size_t WriteTable(Builder& b, const std::vector<Field>& fields) {
  int num = 0;
  for (const Field& f : fields) num = std::max(num, f.id + 1);
  b.Pad(2);
  const size_t vt = b.buf.size();
  b.buf.resize(vt + 4 + 2 * num, 0);
  b.PutU16(vt, static_cast<uint16_t>(4 + 2 * num));
  const size_t table = b.Pad(4);
  b.AppendU32(static_cast<uint32_t>(table - vt));  // soffset: vtable = table - soffset
  std::vector<std::pair<size_t, const Field*>> refs;
  for (const Field& f : fields) {
    const size_t size = f.reference ? 4 : f.scalar.size();
    b.Pad(size);
    const size_t at = b.buf.size();
    b.PutU16(vt + 4 + 2 * f.id, static_cast<uint16_t>(at - table));
    if (f.reference) {
      b.AppendU32(0);
      refs.emplace_back(at, &f);
    } else {
      b.buf.insert(b.buf.end(), f.scalar.begin(), f.scalar.end());
    }
  }
  b.PutU16(vt + 2, static_cast<uint16_t>(b.buf.size() - table));
  for (auto& [slot, f] : refs) b.Link(slot, f->reference(b));
  return table;
}

// A vector of `count` elements of `size` bytes, its data aligned to `align`.
size_t WriteVector(Builder& b, const void* data, size_t count, size_t size, size_t align = 4) {
  b.Pad(align, 4);
  const size_t at = b.buf.size();
  b.AppendU32(static_cast<uint32_t>(count));
  const auto* p = static_cast<const uint8_t*>(data);
  b.buf.insert(b.buf.end(), p, p + count * size);
  return at;
}

size_t WriteString(Builder& b, const std::string& s) {
  const size_t at = WriteVector(b, s.data(), s.size(), 1);
  b.buf.push_back(0);
  return at;
}

size_t WriteTables(Builder& b, size_t count, const std::function<size_t(Builder&, size_t)>& one) {
  b.Pad(4);
  const size_t at = b.buf.size();
  b.AppendU32(static_cast<uint32_t>(count));
  const size_t slots = b.buf.size();
  b.buf.resize(slots + 4 * count, 0);
  for (size_t i = 0; i < count; ++i) b.Link(slots + 4 * i, one(b, i));
  return at;
}

std::function<size_t(Builder&)> Ints(const std::vector<int32_t>& v) {
  return [v](Builder& b) { return WriteVector(b, v.data(), v.size(), 4); };
}

}  // namespace

std::vector<uint8_t> Serialize(const Model& m) {
  // Operator codes: one per distinct builtin (or one per operator).
  std::vector<int32_t> codes;
  for (const Operator& op : m.operators) {
    if (m.code_per_operator || std::find(codes.begin(), codes.end(), op.builtin) == codes.end()) {
      codes.push_back(op.builtin);
    }
  }
  Builder b;
  b.buf = {0, 0, 0, 0, 'T', 'F', 'L', '3'};
  const size_t root = WriteTable(
      b,
      {U32(0, m.version),
       Ref(1,
           [&](Builder& b) {
             return WriteTables(b, codes.size(), [&](Builder& b, size_t i) {
               const int32_t c = codes[i];
               return WriteTable(b, {U8(0, static_cast<uint8_t>(c < 127 ? c : 127)), U32(2, 1),
                                     U32(3, static_cast<uint32_t>(c))});
             });
           }),
       Ref(2,
           [&](Builder& b) {
             return WriteTables(b, 1, [&](Builder& b, size_t) {
               return WriteTable(
                   b, {Ref(0,
                           [&](Builder& b) {
                             return WriteTables(b, m.tensors.size(), [&](Builder& b, size_t i) {
                               const Tensor& t = m.tensors[i];
                               std::vector<Field> f = {
                                   Ref(0, Ints(t.shape)), U8(1, t.type),
                                   U32(2, t.data.empty() ? 0u : static_cast<uint32_t>(i + 1)),
                                   Ref(3, [&](Builder& b) { return WriteString(b, t.name); })};
                               if (t.is_variable) f.push_back(U8(5, 1));
                               if (!t.scales.empty()) {
                                 f.push_back(Ref(4, [&](Builder& b) {
                                   return WriteTable(
                                       b, {Ref(2,
                                               [&](Builder& b) {
                                                 return WriteVector(b, t.scales.data(),
                                                                    t.scales.size(), 4);
                                               }),
                                           Ref(3,
                                               [&](Builder& b) {
                                                 return WriteVector(b, t.zero_points.data(),
                                                                    t.zero_points.size(), 8, 8);
                                               }),
                                           U32(6, static_cast<uint32_t>(t.quantized_dimension))});
                                 }));
                               }
                               return WriteTable(b, f);
                             });
                           }),
                       Ref(1, Ints(m.inputs)), Ref(2, Ints(m.outputs)), Ref(3, [&](Builder& b) {
                         return WriteTables(b, m.operators.size(), [&](Builder& b, size_t i) {
                           const Operator& op = m.operators[i];
                           const auto code =
                               m.code_per_operator
                                   ? static_cast<uint32_t>(i)
                                   : static_cast<uint32_t>(
                                         std::find(codes.begin(), codes.end(), op.builtin) -
                                         codes.begin());
                           std::vector<Field> f = {U32(0, code), Ref(1, Ints(op.inputs)),
                                                   Ref(2, Ints(op.outputs))};
                           if (op.options_type != 0) {
                             f.push_back(U8(3, op.options_type));
                             f.push_back(Ref(4, [&](Builder& b) {
                               std::vector<Field> o;
                               for (const Option& x : op.options) {
                                 o.push_back(x.kind == Option::kU8
                                                 ? U8(x.id, static_cast<uint8_t>(x.i))
                                             : x.kind == Option::kI32
                                                 ? U32(x.id, static_cast<uint32_t>(x.i))
                                                 : F32(x.id, x.f));
                               }
                               return WriteTable(b, o);
                             }));
                           }
                           return WriteTable(b, f);
                         });
                       })});
             });
           }),
       Ref(4, [&](Builder& b) {
         // Buffer 0 is the empty sentinel; tensor i's data is buffer i + 1.
         return WriteTables(b, m.tensors.size() + 1, [&](Builder& b, size_t i) {
           if (i == 0 || m.tensors[i - 1].data.empty()) return WriteTable(b, {});
           const std::vector<uint8_t>& d = m.tensors[i - 1].data;
           return WriteTable(
               b, {Ref(0, [&](Builder& b) { return WriteVector(b, d.data(), d.size(), 1, 16); })});
         });
       })});
  b.PutU32(0, static_cast<uint32_t>(root));
  return b.buf;
}

namespace {

class Rng {
 public:
  explicit Rng(uint32_t seed) : x_(seed != 0 ? seed : 0x6D2B79F5u) {}
  uint32_t Next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 17;
    x_ ^= x_ << 5;
    return x_;
  }
  // Symmetric int8 weight in [-127, 127].
  int8_t Weight() { return static_cast<int8_t>(static_cast<int32_t>(Next() % 255u) - 127); }
  // A scale in [lo, 2 lo).
  float Scale(float lo) { return lo * (1.0f + static_cast<float>(Next() % 1024u) / 1024.0f); }

 private:
  uint32_t x_;
};

std::vector<uint8_t> Weights(Rng& r, size_t n) {
  std::vector<uint8_t> w(n);
  for (auto& v : w) v = static_cast<uint8_t>(r.Weight());
  return w;
}

std::vector<uint8_t> Bias(Rng& r, size_t n, int32_t bound) {
  std::vector<uint8_t> out(4 * n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t v = static_cast<int32_t>(r.Next() % (2u * bound + 1u)) - bound;
    std::memcpy(&out[4 * i], &v, 4);
  }
  return out;
}

Tensor Activation(std::vector<int32_t> shape, float scale, int64_t zp, std::string name) {
  return Tensor{std::move(shape), 9, {}, {scale}, {zp}, 0, std::move(name)};
}

std::vector<uint8_t> I32Bytes(const std::vector<int32_t>& v) {
  std::vector<uint8_t> b(4 * v.size());
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Option Pad(int id, int v) { return {id, Option::kU8, v}; }
Option I32(int id, int v) { return {id, Option::kI32, v}; }

}  // namespace

Model SampleNet(uint32_t seed) {
  Rng r(seed);
  Model m;
  auto add = [&](Tensor t) {
    m.tensors.push_back(std::move(t));
    return static_cast<int32_t>(m.tensors.size() - 1);
  };
  auto per_channel = [&](size_t n, float lo) {
    std::vector<float> s(n);
    for (auto& v : s) v = r.Scale(lo);
    return s;
  };
  const int32_t in = add(Activation({1, 16, 16, 3}, 0.02f, -3, "input"));
  // CONV_2D 3x3 stride 2 SAME, 8 channels, RELU6.
  const int32_t w1 = add(Tensor{{8, 3, 3, 3},
                                9,
                                Weights(r, 8 * 27),
                                per_channel(8, 0.004f),
                                std::vector<int64_t>(8, 0),
                                0,
                                "conv1/weights"});
  const int32_t b1 = add(Tensor{{8}, 2, Bias(r, 8, 2000), {}, {}, 0, "conv1/bias"});
  const int32_t a1 = add(Activation({1, 8, 8, 8}, 0.05f, -128, "conv1"));
  m.operators.push_back({3, {in, w1, b1}, {a1}, 1, {Pad(0, 0), I32(1, 2), I32(2, 2), Pad(3, 3)}});
  // DEPTHWISE_CONV_2D 3x3 stride 1 SAME, RELU.
  const int32_t w2 = add(Tensor{{1, 3, 3, 8},
                                9,
                                Weights(r, 72),
                                per_channel(8, 0.01f),
                                std::vector<int64_t>(8, 0),
                                3,
                                "dw/weights"});
  const int32_t b2 = add(Tensor{{8}, 2, Bias(r, 8, 1000), {}, {}, 0, "dw/bias"});
  const int32_t a2 = add(Activation({1, 8, 8, 8}, 0.12f, -128, "dw"));
  m.operators.push_back(
      {4, {a1, w2, b2}, {a2}, 2, {Pad(0, 0), I32(1, 1), I32(2, 1), I32(3, 1), Pad(4, 1)}});
  // CONV_2D 1x1, 8 channels, no activation, per-tensor filter scale.
  const int32_t w3 = add(Tensor{{8, 1, 1, 8}, 9, Weights(r, 64), {0.006f}, {0}, 0, "pw/weights"});
  const int32_t b3 = add(Tensor{{8}, 2, Bias(r, 8, 1000), {}, {}, 0, "pw/bias"});
  const int32_t a3 = add(Activation({1, 8, 8, 8}, 0.1f, 5, "pw"));
  m.operators.push_back({3, {a2, w3, b3}, {a3}, 1, {Pad(0, 1), I32(1, 1), I32(2, 1)}});
  // ADD of the depthwise and pointwise outputs.
  const int32_t a4 = add(Activation({1, 8, 8, 8}, 0.15f, -10, "add"));
  m.operators.push_back({0, {a2, a3}, {a4}, 11, {Pad(0, 0)}});
  // MAX_POOL_2D 2x2 stride 2, AVERAGE_POOL_2D 2x2 stride 2 VALID (same quantization).
  const int32_t a5 = add(Activation({1, 4, 4, 8}, 0.15f, -10, "maxpool"));
  m.operators.push_back(
      {17, {a4}, {a5}, 5, {Pad(0, 0), I32(1, 2), I32(2, 2), I32(3, 2), I32(4, 2)}});
  const int32_t a6 = add(Activation({1, 2, 2, 8}, 0.15f, -10, "avgpool"));
  m.operators.push_back(
      {1, {a5}, {a6}, 5, {Pad(0, 1), I32(1, 2), I32(2, 2), I32(3, 2), I32(4, 2)}});
  // RESHAPE to 1x32 (shape given as a constant input).
  const int32_t shape_data[2] = {1, 32};
  std::vector<uint8_t> shape_bytes(8);
  std::memcpy(shape_bytes.data(), shape_data, 8);
  const int32_t s7 = add(Tensor{{2}, 2, shape_bytes, {}, {}, 0, "reshape/shape"});
  const int32_t a7 = add(Activation({1, 32}, 0.15f, -10, "reshape"));
  m.operators.push_back({22, {a6, s7}, {a7}, 0, {}});
  // FULLY_CONNECTED 32 -> 10.
  const int32_t w8 = add(Tensor{{10, 32}, 9, Weights(r, 320), {0.01f}, {0}, 0, "fc/weights"});
  const int32_t b8 = add(Tensor{{10}, 2, Bias(r, 10, 3000), {}, {}, 0, "fc/bias"});
  const int32_t a8 = add(Activation({1, 10}, 0.6f, 3, "fc"));
  m.operators.push_back({9, {a7, w8, b8}, {a8}, 8, {Pad(0, 0)}});
  // SOFTMAX, beta 0.05 (a spread of probabilities).
  const int32_t a9 = add(Activation({1, 10}, 1.0f / 256.0f, -128, "softmax"));
  m.operators.push_back({25, {a8}, {a9}, 9, {{0, Option::kF32, 0, 0.05f}}});
  // Biases are quantized as TFLite's converter does: input scale x filter scale, zero point 0.
  for (const Operator& op : m.operators) {
    if (op.inputs.size() < 3) continue;
    const Tensor& x = m.tensors[op.inputs[0]];
    const Tensor& w = m.tensors[op.inputs[1]];
    Tensor& b = m.tensors[op.inputs[2]];
    b.scales.clear();
    for (float ws : w.scales) b.scales.push_back(x.scales[0] * ws);
    b.zero_points.assign(b.scales.size(), 0);
  }
  m.inputs = {in};
  m.outputs = {a9};
  return m;
}

Model SampleNetFloatIO(uint32_t seed) {
  Model m = SampleNet(seed);
  const int32_t in8 = m.inputs[0];
  const int32_t out8 = m.outputs[0];
  Tensor in_f;
  in_f.shape = m.tensors[in8].shape;
  in_f.type = 0;  // float32, not quantized
  in_f.name = "input_float";
  m.tensors.push_back(in_f);
  const int32_t in_f_i = static_cast<int32_t>(m.tensors.size() - 1);
  // QUANTIZE float32 -> int8 first, then the sample net, QUANTIZE int8 -> int8 (the softmax's
  // 1/256 to 1/128 with zero point 0) and DEQUANTIZE to float32 last.
  Tensor re = m.tensors[out8];
  re.scales = {1.0f / 128.0f};
  re.zero_points = {0};
  re.name = "requantized";
  m.tensors.push_back(re);
  const int32_t re_i = static_cast<int32_t>(m.tensors.size() - 1);
  Tensor out_f;
  out_f.shape = m.tensors[out8].shape;
  out_f.type = 0;
  out_f.name = "output_float";
  m.tensors.push_back(out_f);
  const int32_t out_f_i = static_cast<int32_t>(m.tensors.size() - 1);
  m.operators.insert(m.operators.begin(), Operator{114, {in_f_i}, {in8}, 0, {}});
  m.operators.push_back(Operator{114, {out8}, {re_i}, 0, {}});
  m.operators.push_back(Operator{6, {re_i}, {out_f_i}, 0, {}});
  m.inputs = {in_f_i};
  m.outputs = {out_f_i};
  return m;
}

Model ActivationsNet() {
  Model m;
  auto q = [](std::vector<int32_t> shape, float scale, int64_t zp, const char* name) {
    return Tensor{std::move(shape), 9, {}, {scale}, {zp}, 0, name};
  };
  m.tensors = {q({1, 6, 6, 8}, 0.05f, -5, "input"),
               q({1, 6, 6, 8}, 0.03f, -110, "hard_swish"),
               q({1, 6, 6, 8}, 0.04f, -128, "relu"),
               q({1, 6, 6, 8}, 0.04f, -128, "relu6"),
               Tensor{{2}, 2, I32Bytes({1, 2}), {}, {}, 0, "axes"},
               q({1, 1, 1, 8}, 0.01f, -128, "mean"),
               q({1, 8}, 0.04f, -128, "mean_same_quantization")};
  // HARD_SWISH (117), RELU (19), RELU6 (21), MEAN (40; ReducerOptions 27, keep_dims).
  m.operators = {Operator{117, {0}, {1}, 0, {}}, Operator{19, {1}, {2}, 0, {}},
                 Operator{21, {2}, {3}, 0, {}},
                 Operator{40, {3, 4}, {5}, 27, {{0, Option::kU8, 1}}},
                 Operator{40, {3, 4}, {6}, 27, {{0, Option::kU8, 0}}}};
  m.inputs = {0};
  m.outputs = {5, 6};
  return m;
}

Model ActivationsNetFloat() {
  Model m;
  auto f = [](std::vector<int32_t> shape, const char* name) {
    return Tensor{std::move(shape), 0, {}, {}, {}, 0, name};
  };
  float six = 6.0f;
  std::vector<uint8_t> six_bytes(4);
  std::memcpy(six_bytes.data(), &six, 4);
  m.tensors = {f({1, 4, 4, 3}, "input"),
               Tensor{{1}, 0, six_bytes, {}, {}, 0, "six"},
               f({1, 4, 4, 3}, "scaled"),
               f({1, 4, 4, 3}, "hard_swish"),
               Tensor{{2}, 2, I32Bytes({1, 2}), {}, {}, 0, "axes"},
               f({1, 1, 1, 3}, "mean"),
               f({1, 1, 1, 3}, "relu6"),
               f({1, 4, 4, 3}, "logistic"),
               f({1, 4, 4, 3}, "tanh")};
  // MUL (18; MulOptions 21), HARD_SWISH (117), MEAN (40), RELU6 (21); LOGISTIC (14) and TANH
  // (28) of the scaled input, two more graph outputs.
  m.operators = {Operator{18, {0, 1}, {2}, 21, {{0, Option::kU8, 0}}},
                 Operator{117, {2}, {3}, 0, {}},
                 Operator{40, {3, 4}, {5}, 27, {{0, Option::kU8, 1}}},
                 Operator{21, {5}, {6}, 0, {}},
                 Operator{14, {2}, {7}, 0, {}},
                 Operator{28, {2}, {8}, 0, {}}};
  m.inputs = {0};
  m.outputs = {6, 7, 8};
  return m;
}

Model ConvNetFloat(uint32_t seed) {
  Rng r(seed);
  // Weights and biases k / 128 for seeded k in [-127, 127]: exact in float.
  auto values = [&r](std::vector<int32_t> shape, const char* name) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    std::vector<uint8_t> bytes(4 * n);
    for (size_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(r.Weight()) / 128.0f;
      std::memcpy(&bytes[4 * i], &f, 4);
    }
    return Tensor{std::move(shape), 0, std::move(bytes), {}, {}, 0, name};
  };
  auto f = [](std::vector<int32_t> shape, const char* name) {
    return Tensor{std::move(shape), 0, {}, {}, {}, 0, name};
  };
  Model m;
  m.tensors = {f({1, 9, 9, 3}, "input"),
               values({8, 3, 3, 3}, "conv1_filter"),
               values({8}, "conv1_bias"),
               f({1, 5, 5, 8}, "conv1"),
               values({1, 3, 3, 16}, "dw_filter"),
               values({16}, "dw_bias"),
               f({1, 5, 5, 16}, "dw"),
               values({4, 2, 2, 16}, "conv2_filter"),
               values({4}, "conv2_bias"),
               f({1, 4, 4, 4}, "conv2"),
               Tensor{{4}, 2, I32Bytes({1, 8, 8, 3}), {}, {}, 0, "up_shape"},
               values({3, 3, 3, 4}, "up_filter"),
               values({3}, "up_bias"),
               f({1, 8, 8, 3}, "up")};
  // CONV_2D (3; Conv2DOptions 1): padding, stride w, h, activation, dilation w, h.
  // DEPTHWISE_CONV_2D (4; DepthwiseConv2DOptions 2): padding, stride w, h, depth multiplier,
  // activation, dilation w, h. TRANSPOSE_CONV (67; TransposeConvOptions 49): padding, stride w,
  // h; inputs output shape, filter, input, bias.
  m.operators = {
      Operator{3, {0, 1, 2}, {3}, 1, {Pad(0, 0), I32(1, 2), I32(2, 2), Pad(3, 1)}},
      Operator{4,
               {3, 4, 5},
               {6},
               2,
               {Pad(0, 0), I32(1, 1), I32(2, 1), I32(3, 2), Pad(4, 3), I32(5, 2), I32(6, 2)}},
      Operator{3, {6, 7, 8}, {9}, 1, {Pad(0, 1), I32(1, 1), I32(2, 1)}},
      Operator{67, {10, 11, 9, 12}, {13}, 49, {Pad(0, 0), I32(1, 2), I32(2, 2)}}};
  m.inputs = {0};
  m.outputs = {13};
  return m;
}

Model LstmNet(LstmKind kind, const LstmShape& shape, int extra_input) {
  uint32_t x = 0x2545f491u;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  const bool is_float = kind == LstmKind::kFloat32;
  const bool wide = kind == LstmKind::kInt16x8;
  const uint8_t act_type = is_float ? 0 : wide ? 7 : 9;
  const int32_t units = shape.units;
  // A tensor of `type`, quantized with `scale` and `zp` unless float32.
  auto tensor = [&](std::vector<int32_t> dims, uint8_t type, std::vector<uint8_t> data, float scale,
                    int64_t zp, const char* name) {
    return is_float ? Tensor{std::move(dims), 0, std::move(data), {}, {}, 0, name}
                    : Tensor{std::move(dims), type, std::move(data), {scale}, {zp}, 0, name};
  };
  auto put_float = [](std::vector<uint8_t>& bytes, float f) {
    uint8_t b[4];
    std::memcpy(b, &f, 4);
    bytes.insert(bytes.end(), b, b + 4);
  };
  auto weights = [&](int32_t rows, int32_t cols, float scale) {
    std::vector<uint8_t> w;
    for (int32_t i = 0; i < rows * cols; ++i) {
      const auto q = static_cast<uint8_t>(next() >> 24);
      if (is_float) {
        put_float(w, static_cast<float>(static_cast<int8_t>(q)) * scale);
      } else {
        w.push_back(q);
      }
    }
    return tensor({rows, cols}, 9, std::move(w), scale, 0, "weights");
  };
  const float in_scale = wide ? 1.0f / 4096.0f : 0.05f;
  const float hidden_scale = wide ? 1.0f / 32768.0f : 1.0f / 128.0f;
  const int64_t in_zp = wide ? 0 : 3, hidden_zp = wide ? 0 : -2;
  // About -2..2 in every kind: int16 inputs have a finer scale, so their biases more steps.
  auto bias = [&](float scale) {
    std::vector<uint8_t> b;
    for (int32_t u = 0; u < units; ++u) {
      const int64_t v = (static_cast<int64_t>(next() % 4001u) - 2000) * (wide ? 200 : 1);
      if (is_float) {
        put_float(b, static_cast<float>(v) * scale);
      } else {
        for (int k = 0; k < (wide ? 8 : 4); ++k) b.push_back(static_cast<uint8_t>(v >> (8 * k)));
      }
    }
    return tensor({units}, wide ? 4 : 2, std::move(b), scale, 0, "bias");
  };
  const std::vector<int32_t> seq =
      shape.time_major ? std::vector<int32_t>{shape.steps, shape.batches, shape.width}
                       : std::vector<int32_t>{shape.batches, shape.steps, shape.width};
  Model m;
  m.tensors.push_back(tensor(seq, act_type, {}, in_scale, in_zp, "input"));
  for (int g = 0; g < 4; ++g) m.tensors.push_back(weights(units, shape.width, 0.02f));  // 1..4
  for (int g = 0; g < 4; ++g) m.tensors.push_back(weights(units, units, 0.03f));        // 5..8
  for (int g = 0; g < 4; ++g) m.tensors.push_back(bias(in_scale * 0.02f));              // 9..12
  m.tensors.push_back(tensor({shape.batches, units}, act_type, {}, hidden_scale, hidden_zp,
                             "hidden"));  // 13
  m.tensors.back().is_variable = true;
  m.tensors.push_back(tensor({shape.batches, units}, 7, {}, 1.0f / 2048.0f, 0, "cell"));  // 14
  m.tensors.back().is_variable = true;
  std::vector<int32_t> out_shape = seq;
  out_shape[2] = units;
  m.tensors.push_back(tensor(out_shape, act_type, {}, hidden_scale, hidden_zp, "output"));  // 15
  m.tensors.push_back(weights(units, units, 0.01f));  // 16: an optional input's constant
  std::vector<int32_t> inputs = {0, 1,  2,  3,  4,  5,  6,  7,  8,  -1, -1, -1,
                                 9, 10, 11, 12, -1, -1, 13, 14, -1, -1, -1, -1};
  if (extra_input >= 0) inputs[static_cast<size_t>(extra_input)] = 16;
  // UNIDIRECTIONAL_SEQUENCE_LSTM (44; UnidirectionalSequenceLSTMOptions 71): the cell gate's
  // activation TANH (4), cell_clip, time_major.
  m.operators = {Operator{44,
                          inputs,
                          {15},
                          71,
                          {Option{0, Option::kU8, 4}, Option{1, Option::kF32, 0, shape.cell_clip},
                           Option{3, Option::kU8, shape.time_major ? 1 : 0}}}};
  m.inputs = {0};
  m.outputs = {15};
  return m;
}

Model MobileNetV2(uint32_t seed, int resolution, float alpha) {
  Rng r(seed);
  Model m;
  m.code_per_operator = true;
  auto add = [&](Tensor t) {
    m.tensors.push_back(std::move(t));
    return static_cast<int32_t>(m.tensors.size() - 1);
  };
  // torchvision's _make_divisible: the nearest multiple of 8, never 10% below.
  auto divisible = [](float v) {
    int n = std::max(8, (static_cast<int>(v + 4.0f) / 8) * 8);
    if (static_cast<float>(n) < 0.9f * v) n += 8;
    return n;
  };
  // The quantizations: after RELU6 [0, 6]; a projection's linear output and the sums of the
  // residual adds about [-8, 8] and [-11, 11]; the input about [-2.4, 2.4]. `rms`: the real
  // values' typical size, which sets the filter scales.
  struct Q {
    float scale;
    int64_t zp;
    float rms;
  };
  const Q relu6{6.0f / 255.0f, -128, 2.5f}, linear{8.0f / 127.0f, 0, 2.0f},
      sum{11.0f / 127.0f, 0, 2.8f}, input_q{2.4f / 127.0f, -3, 1.0f};
  auto name = [](const std::string& what) { return "mobilenet_v2/" + what; };
  int pads = 0;
  auto act = [&](std::vector<int32_t> shape, Q q, const std::string& what) {
    return add(Activation(std::move(shape), q.scale, q.zp, name(what)));
  };
  // A filter [o][kh][kw][i] (or [1][kh][kw][o] for a depthwise one: quantized_dimension 3) and
  // its int32 bias, scaled so the output's rms is about `out.rms` when the input's is `in.rms`.
  // `channels` filter scales (1: per tensor) and `outputs` biases.
  auto filter = [&](std::vector<int32_t> shape, int channels, int outputs, int depth, int qdim,
                    Q in, Q out, const std::string& what) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    // A weight's integer rms is 127/sqrt(3); the sum of `depth` products.
    const float lo = out.rms / (std::sqrt(static_cast<float>(depth)) * 73.3f * in.rms) / 1.5f;
    std::vector<float> scales(static_cast<size_t>(channels));
    for (auto& s : scales) s = r.Scale(lo);
    const int32_t w = add(Tensor{std::move(shape), 9, Weights(r, n), scales,
                                 std::vector<int64_t>(static_cast<size_t>(channels), 0), qdim,
                                 name(what + "/weight")});
    // Biases of about +-0.3 in real units, quantized as the converter does (input scale x
    // filter scale, zero point 0).
    std::vector<uint8_t> bias(4 * static_cast<size_t>(outputs));
    std::vector<float> bias_scales;
    for (float ws : scales) bias_scales.push_back(in.scale * ws);
    for (int c = 0; c < outputs; ++c) {
      const float s = bias_scales[channels == 1 ? 0 : static_cast<size_t>(c)];
      const float real = 0.3f * (static_cast<float>(r.Next() % 2001u) / 1000.0f - 1.0f);
      const auto v = static_cast<int32_t>(std::lround(real / s));
      std::memcpy(&bias[4 * static_cast<size_t>(c)], &v, 4);
    }
    const size_t nscales = bias_scales.size();
    const int32_t b = add(Tensor{{outputs},
                                 2,
                                 std::move(bias),
                                 std::move(bias_scales),
                                 std::vector<int64_t>(nscales, 0),
                                 0,
                                 name(what + "/bias")});
    return std::pair{w, b};
  };
  // PAD by one on H and W before a stride-2 VALID convolution (PyTorch's padding=1).
  const int32_t paddings = add(
      Tensor{{4, 2}, 2, I32Bytes({0, 0, 1, 1, 1, 1, 0, 0}), {}, {}, 0, "mobilenet_v2/paddings"});
  auto pad = [&](int32_t x, int h, int c, Q q) {
    const int32_t y = act({1, h + 2, h + 2, c}, q, "pad" + std::to_string(pads++));
    m.operators.push_back({34, {x, paddings}, {y}, 0, {}});
    return y;
  };
  // CONV_2D (3; Conv2DOptions 1: padding 0 SAME 1 VALID, stride_w, stride_h, activation 3 RELU6).
  auto conv = [&](int32_t x, int cin, Q in, int cout, int k, int stride, bool valid, bool relu,
                  Q out, int out_h, const std::string& what) {
    const auto [w, b] = filter({cout, k, k, cin}, cout, cout, k * k * cin, 0, in, out, what);
    const int32_t y = act({1, out_h, out_h, cout}, out, what);
    m.operators.push_back(
        {3,
         {x, w, b},
         {y},
         1,
         {Pad(0, valid ? 1 : 0), I32(1, stride), I32(2, stride), Pad(3, relu ? 3 : 0)}});
    return y;
  };
  const int res = resolution;
  // Input NCHW, transposed to NHWC (TRANSPOSE 39 with a constant permutation).
  const int32_t in = add(Activation({1, 3, res, res}, input_q.scale, input_q.zp, "input"));
  const int32_t perm = add(Tensor{{4}, 2, I32Bytes({0, 2, 3, 1}), {}, {}, 0, "mobilenet_v2/perm"});
  const int32_t nhwc = act({1, res, res, 3}, input_q, "transpose");
  m.operators.push_back({39, {in, perm}, {nhwc}, 0, {}});
  int h = res;
  int c = divisible(32.0f * alpha);
  int32_t x =
      conv(pad(nhwc, h, 3, input_q), 3, input_q, c, 3, 2, true, true, relu6, h / 2, "features.0");
  h /= 2;
  Q xq = relu6;
  const int blocks[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                            {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int block = 1;
  for (const auto& [t, channels, n, first_stride] : blocks) {
    const int cout = divisible(static_cast<float>(channels) * alpha);
    for (int i = 0; i < n; ++i, ++block) {
      const int stride = i == 0 ? first_stride : 1;
      const std::string f = "features." + std::to_string(block);
      const int hidden = c * t;
      int32_t y = x;
      if (t != 1) y = conv(x, c, xq, hidden, 1, 1, false, true, relu6, h, f + ".expand");
      const Q yq = t != 1 ? relu6 : xq;
      // DEPTHWISE_CONV_2D (4; DepthwiseConv2DOptions 2: padding, stride_w, stride_h,
      // depth_multiplier, activation).
      const int out_h = h / stride;
      const int32_t dw_in = stride == 2 ? pad(y, h, hidden, yq) : y;
      const auto [w, b] =
          filter({1, 3, 3, hidden}, hidden, hidden, 9, 3, yq, relu6, f + ".depthwise");
      const int32_t dw = act({1, out_h, out_h, hidden}, relu6, f + ".depthwise");
      m.operators.push_back(
          {4,
           {dw_in, w, b},
           {dw},
           2,
           {Pad(0, stride == 2 ? 1 : 0), I32(1, stride), I32(2, stride), I32(3, 1), Pad(4, 3)}});
      int32_t p = conv(dw, hidden, relu6, cout, 1, 1, false, false, linear, out_h, f + ".project");
      Q pq = linear;
      if (stride == 1 && c == cout) {
        // ADD (0; AddOptions 11) of the block's input and its projection.
        const int32_t s = act({1, out_h, out_h, cout}, sum, f + ".add");
        m.operators.push_back({0, {x, p}, {s}, 11, {Pad(0, 0)}});
        p = s;
        pq = sum;
      }
      x = p;
      xq = pq;
      c = cout;
      h = out_h;
    }
  }
  const int last = std::max(1280, divisible(1280.0f * alpha));
  x = conv(x, c, xq, last, 1, 1, false, true, relu6, h, "features.18");
  // MEAN (40; ReducerOptions 27, keep_dims 0) over H and W, RESHAPE (22) to [1][last], then
  // FULLY_CONNECTED (9; FullyConnectedOptions 8) to 1000 logits.
  const int32_t axes = add(Tensor{{2}, 2, I32Bytes({1, 2}), {}, {}, 0, "mobilenet_v2/axes"});
  const int32_t mean = act({1, last}, relu6, "mean");
  m.operators.push_back({40, {x, axes}, {mean}, 27, {Pad(0, 0)}});
  const int32_t shape = add(Tensor{{2}, 2, I32Bytes({1, last}), {}, {}, 0, "mobilenet_v2/shape"});
  const int32_t flat = act({1, last}, relu6, "flatten");
  m.operators.push_back({22, {mean, shape}, {flat}, 0, {}});
  const Q logits{0.1f, 0, 3.0f};
  const auto [w, b] = filter({1000, last}, 1, 1000, last, 0, relu6, logits, "classifier");
  // The classifier's filter is per tensor (one scale), as the exporter writes it.
  const int32_t out = act({1, 1000}, logits, "classifier");
  m.operators.push_back({9, {flat, w, b}, {out}, 8, {Pad(0, 0)}});
  m.inputs = {in};
  m.outputs = {out};
  return m;
}

Model PoolNet(PoolNetKind kind, uint32_t seed) {
  Rng r(seed);
  const bool wide = kind == PoolNetKind::kInt16x8;
  Model m;
  // A tensor of [shape]: int16 of `scale` (zero point 0) in 16x8, float32 otherwise.
  auto act = [&](std::vector<int32_t> shape, float scale, const char* name) {
    return wide ? Tensor{std::move(shape), 7, {}, {scale}, {0}, 0, name}
                : Tensor{std::move(shape), 0, {}, {}, {}, 0, name};
  };
  const float in_scale = 1.0f / 4096, w_scale = 1.0f / 128;
  std::vector<uint8_t> weights, bias;
  for (int i = 0; i < 10 * 27; ++i) {
    const int8_t q = r.Weight();
    const float f = static_cast<float>(q) * w_scale;
    uint8_t b[4];
    std::memcpy(b, &f, 4);
    if (wide) {
      weights.push_back(static_cast<uint8_t>(q));
    } else {
      weights.insert(weights.end(), b, b + 4);
    }
  }
  for (int i = 0; i < 10; ++i) {
    const int64_t q = static_cast<int64_t>(r.Next() % 314573u) - 157286;  // within +-0.3
    const float f = static_cast<float>(q) * in_scale * w_scale;
    uint8_t b[8];
    if (wide) {
      std::memcpy(b, &q, 8);
    } else {
      std::memcpy(b, &f, 4);
    }
    bias.insert(bias.end(), b, b + (wide ? 8 : 4));
  }
  m.tensors = {act({1, 8, 8, 3}, in_scale, "input"),
               act({1, 4, 4, 3}, in_scale, "avgpool"),
               act({1, 3, 3, 3}, in_scale, "maxpool"),
               wide ? Tensor{{10, 27}, 9, weights, {w_scale}, {0}, 0, "fc/weights"}
                    : Tensor{{10, 27}, 0, weights, {}, {}, 0, "fc/weights"},
               wide ? Tensor{{10}, 4, bias, {in_scale * w_scale}, {0}, 0, "fc/bias"}
                    : Tensor{{10}, 0, bias, {}, {}, 0, "fc/bias"},
               act({1, 10}, 1.0f / 512, "fc")};
  m.operators = {
      Operator{1, {0}, {1}, 5, {Pad(0, 0), I32(1, 2), I32(2, 2), I32(3, 3), I32(4, 3), Pad(5, 3)}},
      Operator{17, {1}, {2}, 5, {Pad(0, 1), I32(1, 1), I32(2, 1), I32(3, 2), I32(4, 2)}},
      Operator{9, {2, 3, 4}, {5}, 8, {Pad(0, 0)}}};
  m.inputs = {0};
  m.outputs = {5};
  m.tensors.push_back(act({1, 10}, 1.0f / 32768, "softmax"));
  m.operators.push_back(Operator{25, {5}, {6}, 9, {{0, Option::kF32, 0, 1.5f}}});
  m.outputs = {6};
  return m;
}

Model SvdfNetFloat(int32_t batches, int32_t rank, uint8_t activation, uint32_t seed) {
  Rng r(seed);
  const int32_t input_size = 5, units = 3, memory = 4, filters = units * rank;
  auto floats = [&r](int32_t n) {
    std::vector<uint8_t> bytes;
    for (int32_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(r.Weight()) / 128.0f;
      uint8_t b[4];
      std::memcpy(b, &f, 4);
      bytes.insert(bytes.end(), b, b + 4);
    }
    return bytes;
  };
  auto f32 = [](std::vector<int32_t> shape, std::vector<uint8_t> data, const char* name) {
    return Tensor{std::move(shape), 0, std::move(data), {}, {}, 0, name};
  };
  Model m;
  m.tensors = {f32({batches, input_size}, {}, "input"),
               f32({filters, input_size}, floats(filters * input_size), "svdf/weights_feature"),
               f32({filters, memory}, floats(filters * memory), "svdf/weights_time"),
               f32({units}, floats(units), "svdf/bias"),
               f32({batches, memory * filters}, {}, "svdf/state"),
               f32({batches, units}, {}, "output")};
  m.tensors[4].is_variable = true;
  // SVDF (27; SVDFOptions 6): rank, fused activation.
  m.operators = {Operator{27, {0, 1, 2, 3, 4}, {5}, 6, {I32(0, rank), Pad(1, activation)}}};
  m.inputs = {0};
  m.outputs = {5};
  return m;
}

}  // namespace mculab::tflite_writer
