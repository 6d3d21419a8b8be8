/* Loading a .tflite model: the schema's tables read through the bounds-checked reader
 * (flatbuffer.h) into the fixed tables of mculab_tfl_model. Field ids are those of
 * tensorflow/lite/schema/schema.fbs. */
#include <stdint.h>

#include "flatbuffer.h"
#include "mculab/tflite.h"
#include "ops/ops.h"
#include "tflite_internal.h"

/* Field ids (schema.fbs). */
enum { MODEL_VERSION = 0, MODEL_OPERATOR_CODES = 1, MODEL_SUBGRAPHS = 2, MODEL_BUFFERS = 4 };
enum { OPCODE_DEPRECATED_BUILTIN = 0, OPCODE_BUILTIN = 3 };
enum { SUBGRAPH_TENSORS = 0, SUBGRAPH_INPUTS = 1, SUBGRAPH_OUTPUTS = 2, SUBGRAPH_OPERATORS = 3 };
enum {
  TENSOR_SHAPE = 0,
  TENSOR_TYPE = 1,
  TENSOR_BUFFER = 2,
  TENSOR_NAME = 3,
  TENSOR_QUANT = 4,
  TENSOR_IS_VARIABLE = 5
};
enum { QUANT_SCALE = 2, QUANT_ZERO_POINT = 3, QUANT_DIMENSION = 6 };
enum { BUFFER_DATA = 0, BUFFER_OFFSET = 1 };
enum { OP_OPCODE_INDEX = 0, OP_INPUTS = 1, OP_OUTPUTS = 2, OP_OPTIONS_TYPE = 3, OP_OPTIONS = 4 };
static uint32_t type_size(uint8_t type) {
  switch (type) {
    case MCULAB_TFL_INT8:
      return 1;
    case MCULAB_TFL_INT16:
      return 2;
    case MCULAB_TFL_INT32:
    case MCULAB_TFL_FLOAT32:
      return 4;
    case MCULAB_TFL_INT64:
      return 8;
  }
  return 0;
}

const char* mculab_tfl_status_name(mculab_tfl_status s) {
  switch (s) {
    case MCULAB_TFL_OK:
      return "ok";
    case MCULAB_TFL_NOT_A_MODEL:
      return "not a TFLite model";
    case MCULAB_TFL_OUT_OF_BOUNDS:
      return "offset or length out of bounds";
    case MCULAB_TFL_MALFORMED:
      return "malformed model";
    case MCULAB_TFL_TOO_LARGE:
      return "model exceeds the interpreter's capacities";
    case MCULAB_TFL_UNSUPPORTED_OP:
      return "unsupported operator";
    case MCULAB_TFL_UNSUPPORTED:
      return "unsupported type, quantization or option";
    case MCULAB_TFL_BAD_SHAPE:
      return "inconsistent shapes";
    case MCULAB_TFL_NO_MEMORY:
      return "arena too small";
  }
  return "unknown status";
}

/* ---- error messages: "<what><number><detail>" without a formatting library ---- */

static size_t append(char* dst, size_t at, const char* s) {
  while (s != NULL && *s != 0 && at + 1 < MCULAB_TFL_ERROR_LEN) dst[at++] = *s++;
  dst[at] = 0;
  return at;
}

static size_t append_int(char* dst, size_t at, int64_t v) {
  char digits[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1u : (uint64_t)v;
  do {
    digits[n++] = (char)('0' + u % 10u);
    u /= 10u;
  } while (u != 0);
  if (v < 0 && at + 1 < MCULAB_TFL_ERROR_LEN) dst[at++] = '-';
  while (n > 0 && at + 1 < MCULAB_TFL_ERROR_LEN) dst[at++] = digits[--n];
  dst[at] = 0;
  return at;
}

mculab_tfl_status mculab_tfl_fail(mculab_tfl_model* m, mculab_tfl_status st, const char* what,
                                  int64_t index, const char* detail) {
  size_t at = append(m->error, 0, what);
  if (index >= 0) at = append_int(m->error, at, index);
  if (detail != NULL) at = append(m->error, at, detail);
  return st;
}

mculab_tfl_status mculab_tfl_fail2(mculab_tfl_model* m, mculab_tfl_status st, const char* what,
                                   int64_t index, const char* detail, int64_t value,
                                   const char* tail) {
  size_t at = append(m->error, 0, what);
  if (index >= 0) at = append_int(m->error, at, index);
  at = append(m->error, at, detail);
  at = append_int(m->error, at, value);
  append(m->error, at, tail);
  return st;
}

static mculab_tfl_status reader_failed(mculab_tfl_model* m, const fb_reader* r, const char* what,
                                       int64_t index) {
  size_t at = append(m->error, 0, what);
  if (index >= 0) at = append_int(m->error, at, index);
  at = append(m->error, at, ": ");
  at = append(m->error, at, r->why);
  /* Most reads past the end are a file cut short (a download or a copy that stopped). Only a
   * plausible length is named: a wild offset is corruption, not truncation. */
  if (r->need > r->len && r->need <= (uint64_t)r->len * 16u + 4096u) {
    at = append(m->error, at, " (the file ends at byte ");
    at = append_int(m->error, at, (int64_t)r->len);
    at = append(m->error, at, ", the model needs at least ");
    at = append_int(m->error, at, (int64_t)r->need);
    append(m->error, at, " bytes: is it truncated?)");
  }
  return r->status;
}

/* ---- tensors ---- */

static mculab_tfl_status load_tensor(mculab_tfl_model* m, fb_reader* r, fb_table* t, fb_vec buffers,
                                     uint32_t i) {
  mculab_tfl_tensor* x = &m->tensors[i];
  const fb_vec shape = fb_vector(r, t, TENSOR_SHAPE, 4);
  x->type = fb_u8(r, t, TENSOR_TYPE, MCULAB_TFL_FLOAT32);
  const uint32_t buffer = fb_u32(r, t, TENSOR_BUFFER, 0);
  const fb_vec name = fb_vector(r, t, TENSOR_NAME, 1);
  const uint8_t is_variable = fb_u8(r, t, TENSOR_IS_VARIABLE, 0);
  fb_table q;
  const int has_quant = fb_subtable(r, t, TENSOR_QUANT, &q);
  if (r->status != MCULAB_TFL_OK) return reader_failed(m, r, "tensor ", i);

  if (shape.count > MCULAB_TFL_MAX_DIMS) {
    return mculab_tfl_fail2(m, MCULAB_TFL_TOO_LARGE, "tensor ", i, ": ", shape.count,
                            " dimensions (at most 6)");
  }
  x->num_dims = (uint8_t)shape.count;
  uint64_t elements = 1;
  for (uint32_t d = 0; d < shape.count; ++d) {
    const int32_t dim = (int32_t)fb_vec_u32(r, shape, d);
    /* An empty tensor (a dimension of 0) is read, as TFLite reads it; prepare refuses an
     * operator that uses one. */
    if (dim < 0) {
      return mculab_tfl_fail2(m, MCULAB_TFL_MALFORMED, "tensor ", i, ": dimension of ", dim,
                              " (each must be >= 0)");
    }
    x->dims[d] = dim;
    elements *= (uint64_t)dim;
    if (elements > MCULAB_TFL_MAX_ELEMENTS) {
      return mculab_tfl_fail(m, MCULAB_TFL_TOO_LARGE, "tensor ", i, ": more than 2^26 elements");
    }
  }
  const uint32_t size = type_size(x->type);
  if (size == 0) {
    return mculab_tfl_fail2(m, MCULAB_TFL_UNSUPPORTED, "tensor ", i, ": tensor type ", x->type,
                            " (the interpreter knows int8, int16, int32, int64, float32)");
  }
  x->elements = (uint32_t)elements;
  x->bytes = (uint32_t)elements * size;

  /* Name: the first MCULAB_TFL_NAME_LEN - 1 bytes are kept by the operators that write it. */
  x->first_use = x->last_use = -1;
  x->is_const = 0;
  x->is_planned = 0;
  x->is_input = 0;
  x->is_variable = 0;
  x->const_data = NULL;
  x->data = NULL;
  x->arena_offset = 0;
  (void)name;

  if (buffer >= buffers.count) {
    return mculab_tfl_fail2(m, MCULAB_TFL_MALFORMED, "tensor ", i, ": buffer index ", buffer,
                            " out of range");
  }
  if (buffer != 0) {
    fb_table b;
    fb_vec_table(r, buffers, buffer, &b);
    const fb_vec data = fb_vector(r, &b, BUFFER_DATA, 1);
    const uint32_t offset_field = fb_field(r, &b, BUFFER_OFFSET, 8);
    if (r->status != MCULAB_TFL_OK) return reader_failed(m, r, "buffer of tensor ", i);
    if (offset_field != 0 &&
        (fb_u32_at(r->b + offset_field) | fb_u32_at(r->b + offset_field + 4))) {
      return mculab_tfl_fail(m, MCULAB_TFL_UNSUPPORTED, "tensor ", i,
                             ": data outside the flatbuffer (models over 2 GiB)");
    }
    if (data.count != 0) {
      if (data.count != x->bytes) {
        return mculab_tfl_fail2(m, MCULAB_TFL_MALFORMED, "tensor ", i, ": buffer holds ",
                                data.count, " bytes, the shape and type need another size");
      }
      x->is_const = 1;
      x->const_data = r->b + data.pos;
    }
  }
  /* A variable (an operator's state, with no data in the model) is not planned: it lives with
   * the persistent data (prepare.c), as TFLite Micro keeps variables out of its plan. */
  if (is_variable && !x->is_const) {
    x->is_variable = 1;
    x->first_use = 0;
  }

  x->scale = 0.0f;
  x->zero_point = 0;
  x->num_scales = 0;
  x->scales_pos = 0;
  x->quantized_dim = 0;
  if (has_quant) {
    const fb_vec scales = fb_vector(r, &q, QUANT_SCALE, 4);
    const fb_vec zps = fb_vector(r, &q, QUANT_ZERO_POINT, 8);
    const int32_t qdim = fb_i32(r, &q, QUANT_DIMENSION, 0);
    if (r->status != MCULAB_TFL_OK) return reader_failed(m, r, "quantization of tensor ", i);
    if (zps.count != 0 && zps.count != scales.count) {
      return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "tensor ", i,
                             ": scales and zero points differ in number");
    }
    if (scales.count > 0) {
      const uint32_t bits = fb_u32_at(r->b + scales.pos);
      __builtin_memcpy(&x->scale, &bits, sizeof x->scale);
      x->num_scales = scales.count;
      x->scales_pos = scales.pos;
    }
    for (uint32_t z = 0; z < zps.count; ++z) {
      const uint32_t lo = fb_u32_at(r->b + zps.pos + 8u * z);
      const uint32_t hi = fb_u32_at(r->b + zps.pos + 8u * z + 4u);
      const int64_t zp = (int64_t)(((uint64_t)hi << 32) | lo);
      const int64_t zp_lo = x->type == MCULAB_TFL_INT8    ? -128
                            : x->type == MCULAB_TFL_INT16 ? -32768
                                                          : -2147483647;
      if (zp < zp_lo || zp > -zp_lo - 1) {
        return mculab_tfl_fail2(m, MCULAB_TFL_UNSUPPORTED, "tensor ", i, ": zero point ", zp,
                                " outside the tensor's type");
      }
      if (z == 0) x->zero_point = (int32_t)zp;
      if (scales.count > 1 && zp != 0) {
        return mculab_tfl_fail(m, MCULAB_TFL_UNSUPPORTED, "tensor ", i,
                               ": per-channel quantization with a zero point other than 0");
      }
    }
    /* Scales that do not run along their quantized dimension (TFLite converters write biases
     * with quantized_dimension 3 over a 1-D tensor) are kept, as TFLite Micro keeps them, with
     * quantized_dim -1: a kernel that reads scales per channel refuses them, one that does not
     * (a bias, whose scales are the input's times the filter's) never looks. */
    if (scales.count > 1) {
      const int along =
          qdim >= 0 && (uint32_t)qdim < x->num_dims && (uint32_t)x->dims[qdim] == scales.count;
      x->quantized_dim = along ? qdim : -1;
    }
  }
  return MCULAB_TFL_OK;
}

static void copy_name(fb_reader* r, const fb_table* t, char* dst) {
  const fb_vec name = fb_vector(r, t, TENSOR_NAME, 1);
  uint32_t n = 0;
  for (; n < name.count && n + 1 < MCULAB_TFL_NAME_LEN; ++n) {
    const uint8_t c = r->b[name.pos + n];
    dst[n] = (char)(c >= 32 && c < 127 ? c : '?');
  }
  for (; n < MCULAB_TFL_NAME_LEN; ++n) dst[n] = 0;
}

/* ---- operators ---- */

static mculab_tfl_status load_options(mculab_tfl_model* m, fb_reader* r, const fb_table* o,
                                      mculab_tfl_op* op, uint32_t i) {
  op->padding = 0;
  op->activation = 0;
  op->weights_format = op->keep_num_dims = 0;
  op->stride_w = op->stride_h = 0;
  op->filter_w = op->filter_h = 0;
  op->depth_multiplier = 0;
  op->dilation_w = op->dilation_h = 1;
  op->beta = 0.0f;
  const uint8_t type = fb_u8(r, o, OP_OPTIONS_TYPE, 0);
  fb_table t;
  const int present = fb_subtable(r, o, OP_OPTIONS, &t);
  if (r->status != MCULAB_TFL_OK) return reader_failed(m, r, "options of operator ", i);
  /* Absent: TFLite's defaults throughout. A kernel whose options it never reads (options_type
   * 0) takes any table. */
  if (!present || op->kernel->options_type == 0) return MCULAB_TFL_OK;
  if (type != op->kernel->options_type) {
    return mculab_tfl_fail2(m, MCULAB_TFL_MALFORMED, "operator ", i, ": options of type ", type,
                            " do not belong to its operator");
  }
  if (op->kernel->parse != NULL) op->kernel->parse(r, &t, op);
  if (r->status != MCULAB_TFL_OK) return reader_failed(m, r, "options of operator ", i);
  return MCULAB_TFL_OK;
}

static mculab_tfl_status check_index(mculab_tfl_model* m, int32_t t, uint32_t op, int optional) {
  if ((optional && t == -1) || (t >= 0 && (uint32_t)t < m->num_tensors)) return MCULAB_TFL_OK;
  return mculab_tfl_fail2(m, MCULAB_TFL_MALFORMED, "operator ", op, ": tensor index ", t,
                          " out of range");
}

mculab_tfl_status mculab_tfl_load(mculab_tfl_model* m, const uint8_t* data, size_t len) {
  m->model = data;
  m->model_len = 0;
  m->num_tensors = m->num_ops = 0;
  m->num_inputs = m->num_outputs = 0;
  m->num_missing = 0;
  m->prepared = 0;
  m->arena = NULL;
  m->arena_len = 0;
  m->plan.arena_bytes = m->plan.persistent_bytes = m->plan.scratch_bytes = 0;
  m->plan.naive_bytes = 0;
  m->error[0] = 0;
  m->refused_op = -1;
  m->refused_builtin = -1;
  if (data == NULL || len < 8) {
    return mculab_tfl_fail(m, MCULAB_TFL_NOT_A_MODEL, "the model is shorter than 8 bytes", -1,
                           NULL);
  }
  if (len > 0x7FFFFFF0u) {
    return mculab_tfl_fail(m, MCULAB_TFL_TOO_LARGE, "the model is over 2 GiB", -1, NULL);
  }
  if (data[4] != 'T' || data[5] != 'F' || data[6] != 'L' || data[7] != '3') {
    return mculab_tfl_fail(m, MCULAB_TFL_NOT_A_MODEL,
                           "no TFLite file identifier (\"TFL3\" at byte 4)", -1, NULL);
  }
  m->model_len = (uint32_t)len;
  fb_reader r = {data, (uint32_t)len, MCULAB_TFL_OK, NULL, 0};
  fb_table root, sg;
  fb_table_at(&r, fb_u32_at(data), &root);
  m->version = fb_u32(&r, &root, MODEL_VERSION, 0);
  const fb_vec opcodes = fb_vector(&r, &root, MODEL_OPERATOR_CODES, 4);
  const fb_vec subgraphs = fb_vector(&r, &root, MODEL_SUBGRAPHS, 4);
  const fb_vec buffers = fb_vector(&r, &root, MODEL_BUFFERS, 4);
  if (r.status != MCULAB_TFL_OK) return reader_failed(m, &r, "model", -1);
  if (m->version != 3) {
    return mculab_tfl_fail2(m, MCULAB_TFL_UNSUPPORTED, "model", -1, ": schema version ", m->version,
                            " (the interpreter reads version 3)");
  }
  /* Every buffer is checked, used or not, as flatbuffers' verifier would: a model cut short is
   * refused even where it only loses buffers no tensor names. */
  for (uint32_t i = 0; i < buffers.count; ++i) {
    fb_table b;
    fb_vec_table(&r, buffers, i, &b);
    (void)fb_vector(&r, &b, BUFFER_DATA, 1);
    if (r.status != MCULAB_TFL_OK) return reader_failed(m, &r, "buffer ", i);
  }
  if (subgraphs.count != 1) {
    return mculab_tfl_fail2(m, subgraphs.count == 0 ? MCULAB_TFL_MALFORMED : MCULAB_TFL_UNSUPPORTED,
                            "model", -1, ": ", subgraphs.count,
                            " subgraphs (the interpreter runs one)");
  }
  if (opcodes.count > MCULAB_TFL_MAX_OPCODES) {
    return mculab_tfl_fail2(m, MCULAB_TFL_TOO_LARGE, "model", -1, ": ", opcodes.count,
                            " operator codes (at most 256)");
  }
  int32_t codes[MCULAB_TFL_MAX_OPCODES];
  for (uint32_t i = 0; i < opcodes.count; ++i) {
    fb_table c;
    fb_vec_table(&r, opcodes, i, &c);
    const int32_t deprecated = (int8_t)fb_u8(&r, &c, OPCODE_DEPRECATED_BUILTIN, 0);
    const int32_t builtin = fb_i32(&r, &c, OPCODE_BUILTIN, 0);
    if (r.status != MCULAB_TFL_OK) return reader_failed(m, &r, "operator code ", i);
    codes[i] = builtin > deprecated ? builtin : deprecated;
  }

  fb_vec_table(&r, subgraphs, 0, &sg);
  const fb_vec tensors = fb_vector(&r, &sg, SUBGRAPH_TENSORS, 4);
  const fb_vec inputs = fb_vector(&r, &sg, SUBGRAPH_INPUTS, 4);
  const fb_vec outputs = fb_vector(&r, &sg, SUBGRAPH_OUTPUTS, 4);
  const fb_vec operators = fb_vector(&r, &sg, SUBGRAPH_OPERATORS, 4);
  if (r.status != MCULAB_TFL_OK) return reader_failed(m, &r, "subgraph", -1);
  if (tensors.count > MCULAB_TFL_MAX_TENSORS) {
    return mculab_tfl_fail2(m, MCULAB_TFL_TOO_LARGE, "model", -1, ": ", tensors.count,
                            " tensors (at most 512)");
  }
  if (operators.count > MCULAB_TFL_MAX_OPERATORS) {
    return mculab_tfl_fail2(m, MCULAB_TFL_TOO_LARGE, "model", -1, ": ", operators.count,
                            " operators (at most 256)");
  }
  if (operators.count == 0) {
    return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "model: no operators", -1, NULL);
  }
  m->num_tensors = (uint16_t)tensors.count;
  for (uint32_t i = 0; i < tensors.count; ++i) {
    fb_table t;
    fb_vec_table(&r, tensors, i, &t);
    if (r.status != MCULAB_TFL_OK) return reader_failed(m, &r, "tensor ", i);
    const mculab_tfl_status st = load_tensor(m, &r, &t, buffers, i);
    if (st != MCULAB_TFL_OK) return st;
  }
  if (inputs.count == 0 || outputs.count == 0 || inputs.count > MCULAB_TFL_MAX_GRAPH_IO ||
      outputs.count > MCULAB_TFL_MAX_GRAPH_IO) {
    return mculab_tfl_fail2(
        m, inputs.count == 0 || outputs.count == 0 ? MCULAB_TFL_MALFORMED : MCULAB_TFL_TOO_LARGE,
        "model", -1, ": graph inputs and outputs: ", (int64_t)inputs.count * 1000 + outputs.count,
        " (inputs x 1000 + outputs; each from 1 to 8)");
  }
  for (uint32_t k = 0; k < inputs.count + outputs.count; ++k) {
    const int is_in = k < inputs.count;
    const int32_t t =
        (int32_t)fb_vec_u32(&r, is_in ? inputs : outputs, is_in ? k : k - inputs.count);
    if (t < 0 || (uint32_t)t >= m->num_tensors) {
      return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED,
                             "model: graph input or output index out of range", -1, NULL);
    }
    mculab_tfl_tensor* x = &m->tensors[t];
    if (x->is_const || x->is_input) {
      return mculab_tfl_fail2(m, MCULAB_TFL_MALFORMED, "model", -1,
                              ": the graph's input or output is a constant or repeats an input: "
                              "tensor ",
                              t, "");
    }
    if (is_in) {
      m->inputs[k] = (int16_t)t;
      x->is_input = 1;
      x->is_planned = 1;
      x->first_use = 0;
    } else {
      m->outputs[k - inputs.count] = (int16_t)t;
    }
  }
  m->num_inputs = (uint8_t)inputs.count;
  m->num_outputs = (uint8_t)outputs.count;

  /* Every operator's code first, so that a refused model names everything it lacks at once. */
  for (uint32_t i = 0; i < operators.count; ++i) {
    fb_table o;
    fb_vec_table(&r, operators, i, &o);
    const uint32_t opcode = fb_u32(&r, &o, OP_OPCODE_INDEX, 0);
    if (r.status != MCULAB_TFL_OK) return reader_failed(m, &r, "operator ", i);
    if (opcode >= opcodes.count) {
      return mculab_tfl_fail2(m, MCULAB_TFL_MALFORMED, "operator ", i, ": operator code index ",
                              opcode, " out of range");
    }
    m->ops[i].builtin = codes[opcode];
    m->ops[i].kernel = mculab_tfl_find_kernel(codes[opcode]);
    if (m->ops[i].kernel != NULL) continue;
    uint32_t k = 0;
    while (k < m->num_missing && m->missing_builtins[k] != codes[opcode]) ++k;
    if (k == m->num_missing && k < MCULAB_TFL_MAX_MISSING) {
      m->missing_builtins[k] = codes[opcode];
      m->missing_first_op[k] = (int16_t)i;
      ++m->num_missing;
    }
  }
  if (m->num_missing != 0) {
    m->refused_op = m->missing_first_op[0];
    m->refused_builtin = m->missing_builtins[0];
    size_t at = append(m->error, 0, "not supported: ");
    for (uint32_t k = 0; k < m->num_missing; ++k) {
      at = append(m->error, at, k == 0 ? "operator " : ", operator ");
      at = append_int(m->error, at, m->missing_first_op[k]);
      at = append(m->error, at, ": ");
      at = append(m->error, at, mculab_tfl_builtin_name(m->missing_builtins[k]));
      at = append(m->error, at, " (builtin ");
      at = append_int(m->error, at, m->missing_builtins[k]);
      at = append(m->error, at, ")");
    }
    at = append(m->error, at, "; the interpreter runs");
    const int32_t* have = NULL;
    const uint32_t n_have = mculab_tfl_supported_ops(&have);
    for (uint32_t k = 0; k < n_have; ++k) {
      at = append(m->error, at, k == 0 ? " " : ", ");
      at = append(m->error, at, mculab_tfl_op_name(have[k]));
    }
    return MCULAB_TFL_UNSUPPORTED_OP;
  }

  m->num_ops = (uint16_t)operators.count;
  for (uint32_t i = 0; i < operators.count; ++i) {
    mculab_tfl_op* op = &m->ops[i];
    fb_table o;
    fb_vec_table(&r, operators, i, &o);
    const fb_vec op_in = fb_vector(&r, &o, OP_INPUTS, 4);
    const fb_vec op_out = fb_vector(&r, &o, OP_OUTPUTS, 4);
    if (r.status != MCULAB_TFL_OK) return reader_failed(m, &r, "operator ", i);
    if (op_in.count == 0 || op_in.count > MCULAB_TFL_MAX_OP_INPUTS || op_out.count != 1) {
      return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "operator ", i,
                             ": wrong number of inputs or outputs");
    }
    op->num_inputs = (uint8_t)op_in.count;
    for (uint32_t k = 0; k < op_in.count; ++k) {
      const int32_t t = (int32_t)fb_vec_u32(&r, op_in, k);
      const mculab_tfl_status st = check_index(m, t, i, k > 0);
      if (st != MCULAB_TFL_OK) return st;
      op->inputs[k] = (int16_t)t;
    }
    const int32_t t_out = (int32_t)fb_vec_u32(&r, op_out, 0);
    mculab_tfl_status st = check_index(m, t_out, i, 0);
    if (st != MCULAB_TFL_OK) return st;
    op->output = (int16_t)t_out;
    st = load_options(m, &r, &o, op, i);
    if (st != MCULAB_TFL_OK) return st;
    fb_table t;
    fb_vec_table(&r, tensors, (uint32_t)t_out, &t);
    copy_name(&r, &t, op->name);
    if (r.status != MCULAB_TFL_OK) return reader_failed(m, &r, "operator ", i);

    /* Operators run in the model's order: each reads what the input or an earlier operator
     * wrote, and writes a tensor nothing else writes. */
    for (uint32_t k = 0; k < op->num_inputs; ++k) {
      if (op->inputs[k] < 0) continue;
      mculab_tfl_tensor* x = &m->tensors[op->inputs[k]];
      if (x->is_const) continue;
      if (x->first_use < 0 || x->first_use > (int16_t)i ||
          (x->first_use == (int16_t)i && !x->is_input && !x->is_variable)) {
        return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "operator ", i,
                               ": reads a tensor before any operator writes it");
      }
      x->last_use = (int16_t)i;
    }
    mculab_tfl_tensor* y = &m->tensors[t_out];
    if (y->is_const || y->first_use >= 0 || y->is_variable) {
      return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "operator ", i,
                             ": writes a constant, the input or a tensor already written");
    }
    y->is_planned = 1;
    y->first_use = (int16_t)i;
    if (y->last_use < (int16_t)i) y->last_use = (int16_t)i;
  }
  /* The outputs live to the end. The inputs live to their last reader, as in TFLite Micro: an
   * inference may overwrite them, so whoever runs several fills them before each (the runner's
   * reload). */
  for (uint32_t k = 0; k < m->num_outputs; ++k) {
    mculab_tfl_tensor* y = &m->tensors[m->outputs[k]];
    if (y->first_use < 0) {
      return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED,
                             "model: no operator writes the graph's output ", k, NULL);
    }
    y->last_use = (int16_t)(m->num_ops - 1);
  }
  for (uint32_t k = 0; k < m->num_inputs; ++k) {
    mculab_tfl_tensor* x = &m->tensors[m->inputs[k]];
    if (x->last_use < 0) x->last_use = 0; /* read by no operator */
  }
  return MCULAB_TFL_OK;
}

uint32_t mculab_tfl_tensor_name(const mculab_tfl_model* m, int32_t tensor, const char** name) {
  *name = NULL;
  if (m->model == NULL || tensor < 0 || (uint32_t)tensor >= m->num_tensors) return 0;
  fb_reader r = {m->model, m->model_len, MCULAB_TFL_OK, NULL, 0};
  fb_table root, sg, t;
  fb_table_at(&r, fb_u32_at(m->model), &root);
  const fb_vec subgraphs = fb_vector(&r, &root, MODEL_SUBGRAPHS, 4);
  fb_vec_table(&r, subgraphs, 0, &sg);
  const fb_vec tensors = fb_vector(&r, &sg, SUBGRAPH_TENSORS, 4);
  if (r.status != MCULAB_TFL_OK || (uint32_t)tensor >= tensors.count) return 0;
  fb_vec_table(&r, tensors, (uint32_t)tensor, &t);
  const fb_vec n = fb_vector(&r, &t, TENSOR_NAME, 1);
  if (r.status != MCULAB_TFL_OK || n.count == 0) return 0;
  *name = (const char*)&r.b[n.pos];
  return n.count;
}
