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
  uint32_t bytes = 0;
  int8_t* in = mculab_tfl_input(m, &bytes);
  if (in == NULL) return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "not prepared", -1, NULL);
  if (len != bytes) {
    return mculab_tfl_fail2(m, MCULAB_TFL_BAD_SHAPE, "the given input has ", len,
                            " bytes; the model's input tensor takes ", bytes, " bytes");
  }
  for (uint32_t i = 0; i < len; ++i) in[i] = (int8_t)input[i];
  return MCULAB_TFL_OK;
}

const char* mculab_tfl_builtin_name(int32_t code) {
  /* tensorflow/lite/schema/schema.fbs, BuiltinOperator: the common ones. */
  switch (code) {
    case 2:
      return "CONCATENATION";
    case 5:
      return "DEPTH_TO_SPACE";
    case 8:
      return "FLOOR";
    case 11:
      return "L2_NORMALIZATION";
    case 14:
      return "LOGISTIC";
    case 16:
      return "LSTM";
    case 18:
      return "MUL";
    case 19:
      return "RELU";
    case 21:
      return "RELU6";
    case 23:
      return "RESIZE_BILINEAR";
    case 28:
      return "TANH";
    case 32:
      return "CUSTOM";
    case 34:
      return "PAD";
    case 39:
      return "TRANSPOSE";
    case 40:
      return "MEAN";
    case 41:
      return "SUB";
    case 42:
      return "DIV";
    case 45:
      return "STRIDED_SLICE";
    case 49:
      return "SPLIT";
    case 50:
      return "LOG_SOFTMAX";
    case 53:
      return "CAST";
    case 55:
      return "MAXIMUM";
    case 57:
      return "MINIMUM";
    case 65:
      return "SLICE";
    case 67:
      return "TRANSPOSE_CONV";
    case 74:
      return "SUM";
    case 82:
      return "REDUCE_MAX";
    case 83:
      return "PACK";
    case 88:
      return "UNPACK";
    case 97:
      return "RESIZE_NEAREST_NEIGHBOR";
    case 98:
      return "LEAKY_RELU";
    case 117:
      return "HARD_SWISH";
    case 126:
      return "BATCH_MATMUL";
  }
  return mculab_tfl_op_name(code);
}
