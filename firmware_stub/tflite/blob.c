/* A model job's blob (model alone, or "MLMI" model + input), a given input, and the names of
 * TFLite's builtin operators for messages about the ones the interpreter lacks. */
#include <stddef.h>
#include <stdint.h>

#include "mculab/tflite.h"
#include "tflite_internal.h"

static uint32_t le32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

int mculab_tfl_unpack(const uint8_t* blob, size_t len, mculab_tfl_blob* out) {
  out->model = blob;
  out->model_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
  out->input = NULL;
  out->input_len = 0;
  if (blob == NULL || len < 4 || blob[0] != 'M' || blob[1] != 'L' || blob[2] != 'M' ||
      blob[3] != 'I') {
    return 0;
  }
  if (len < MCULAB_TFL_BLOB_HEAD) return -1;
  const uint64_t model_len = le32(blob + 4);
  const uint64_t input_len = le32(blob + 8);
  if (le32(blob + 12) != 0 || MCULAB_TFL_BLOB_HEAD + model_len + input_len != (uint64_t)len) {
    return -1;
  }
  out->model = blob + MCULAB_TFL_BLOB_HEAD;
  out->model_len = (uint32_t)model_len;
  out->input = input_len != 0 ? blob + MCULAB_TFL_BLOB_HEAD + model_len : NULL;
  out->input_len = (uint32_t)input_len;
  return 0;
}

mculab_tfl_status mculab_tfl_set_input(mculab_tfl_model* m, const uint8_t* input, uint32_t len) {
  if (!m->prepared) return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "not prepared", -1, NULL);
  const uint32_t bytes = mculab_tfl_inputs_bytes(m);
  if (len != bytes) {
    return mculab_tfl_fail2(m, MCULAB_TFL_BAD_SHAPE, "the given input has ", len,
                            " bytes; the model's input tensors take ", bytes, " bytes");
  }
  for (uint32_t k = 0; k < m->num_inputs; ++k) {
    uint32_t n = 0;
    uint8_t* in = (uint8_t*)mculab_tfl_input_at(m, k, &n);
    for (uint32_t i = 0; i < n; ++i) in[i] = *input++;
  }
  return MCULAB_TFL_OK;
}

const char* mculab_tfl_builtin_name(int32_t code) {
  /* tensorflow/lite/schema/schema.fbs, BuiltinOperator 0..126. */
  static const char* const kNames[] = {
      "ADD",
      "AVERAGE_POOL_2D",
      "CONCATENATION",
      "CONV_2D",
      "DEPTHWISE_CONV_2D",
      "DEPTH_TO_SPACE",
      "DEQUANTIZE",
      "EMBEDDING_LOOKUP",
      "FLOOR",
      "FULLY_CONNECTED",
      "HASHTABLE_LOOKUP",
      "L2_NORMALIZATION",
      "L2_POOL_2D",
      "LOCAL_RESPONSE_NORMALIZATION",
      "LOGISTIC",
      "LSH_PROJECTION",
      "LSTM",
      "MAX_POOL_2D",
      "MUL",
      "RELU",
      "RELU_N1_TO_1",
      "RELU6",
      "RESHAPE",
      "RESIZE_BILINEAR",
      "RNN",
      "SOFTMAX",
      "SPACE_TO_DEPTH",
      "SVDF",
      "TANH",
      "CONCAT_EMBEDDINGS",
      "SKIP_GRAM",
      "CALL",
      "CUSTOM",
      "EMBEDDING_LOOKUP_SPARSE",
      "PAD",
      "UNIDIRECTIONAL_SEQUENCE_RNN",
      "GATHER",
      "BATCH_TO_SPACE_ND",
      "SPACE_TO_BATCH_ND",
      "TRANSPOSE",
      "MEAN",
      "SUB",
      "DIV",
      "SQUEEZE",
      "UNIDIRECTIONAL_SEQUENCE_LSTM",
      "STRIDED_SLICE",
      "BIDIRECTIONAL_SEQUENCE_RNN",
      "EXP",
      "TOPK_V2",
      "SPLIT",
      "LOG_SOFTMAX",
      "DELEGATE",
      "BIDIRECTIONAL_SEQUENCE_LSTM",
      "CAST",
      "PRELU",
      "MAXIMUM",
      "ARG_MAX",
      "MINIMUM",
      "LESS",
      "NEG",
      "PADV2",
      "GREATER",
      "GREATER_EQUAL",
      "LESS_EQUAL",
      "SELECT",
      "SLICE",
      "SIN",
      "TRANSPOSE_CONV",
      "SPARSE_TO_DENSE",
      "TILE",
      "EXPAND_DIMS",
      "EQUAL",
      "NOT_EQUAL",
      "LOG",
      "SUM",
      "SQRT",
      "RSQRT",
      "SHAPE",
      "POW",
      "ARG_MIN",
      "FAKE_QUANT",
      "REDUCE_PROD",
      "REDUCE_MAX",
      "PACK",
      "LOGICAL_OR",
      "ONE_HOT",
      "LOGICAL_AND",
      "LOGICAL_NOT",
      "UNPACK",
      "REDUCE_MIN",
      "FLOOR_DIV",
      "REDUCE_ANY",
      "SQUARE",
      "ZEROS_LIKE",
      "FILL",
      "FLOOR_MOD",
      "RANGE",
      "RESIZE_NEAREST_NEIGHBOR",
      "LEAKY_RELU",
      "SQUARED_DIFFERENCE",
      "MIRROR_PAD",
      "ABS",
      "SPLIT_V",
      "UNIQUE",
      "CEIL",
      "REVERSE_V2",
      "ADD_N",
      "GATHER_ND",
      "COS",
      "WHERE",
      "RANK",
      "ELU",
      "REVERSE_SEQUENCE",
      "MATRIX_DIAG",
      "QUANTIZE",
      "MATRIX_SET_DIAG",
      "ROUND",
      "HARD_SWISH",
      "IF",
      "WHILE",
      "NON_MAX_SUPPRESSION_V4",
      "NON_MAX_SUPPRESSION_V5",
      "SCATTER_ND",
      "SELECT_V2",
      "DENSIFY",
      "SEGMENT_SUM",
      "BATCH_MATMUL",
  };
  if (code >= 0 && (uint32_t)code < sizeof kNames / sizeof kNames[0]) return kNames[code];
  return "UNKNOWN";
}
