/* The runner's own int8 TFLite interpreter: a bounds-checked reader of the .tflite flatbuffer
 * (written from the public schema's field ids), TFLite's reference kernels bit for bit, a greedy
 * arena planner over tensor lifetimes and an interpreter that marks every operator as an op
 * region. C11, no heap: every table has a fixed capacity and a model beyond it is refused.
 *
 *   static mculab_tfl_model m;
 *   if (mculab_tfl_load(&m, blob, blob_len) != MCULAB_TFL_OK) -> m.error says why
 *   if (mculab_tfl_prepare(&m, arena, arena_len) != MCULAB_TFL_OK) -> m.error; m.plan sizes
 *   fill mculab_tfl_input(&m), mculab_tfl_invoke(&m, &hooks), read mculab_tfl_output(&m)
 *
 * Contract: the model bytes stay in place and unchanged from load to the last invoke (weights
 * are read where they lie); a corrupt or hostile model is refused by load or prepare with a
 * status and a message, and nothing reads outside the model or the arena.
 * Thread-safety: one model per thread; the functions keep no global state. */
#ifndef MCULAB_TFLITE_H_
#define MCULAB_TFLITE_H_

#include <stddef.h>
#include <stdint.h>

#include "mculab/kernels_s8.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Capacities: MobileNetV2 (84 operators, about 170 tensors) with room to spare. */
#define MCULAB_TFL_MAX_TENSORS 512u
#define MCULAB_TFL_MAX_OPERATORS 256u
#define MCULAB_TFL_MAX_OPCODES 256u
#define MCULAB_TFL_MAX_DIMS 6u
/* UNIDIRECTIONAL_SEQUENCE_LSTM reads 24 tensors. */
#define MCULAB_TFL_MAX_OP_INPUTS 24u
/* The graph's inputs and outputs. */
#define MCULAB_TFL_MAX_GRAPH_IO 8u
/* Distinct operators a refused model may lack, all named in the message. */
#define MCULAB_TFL_MAX_MISSING 16u
/* Largest tensor, in elements (64 MiB of int8 activations: more than any board holds). */
#define MCULAB_TFL_MAX_ELEMENTS (1u << 26)
#define MCULAB_TFL_ERROR_LEN 640u
#define MCULAB_TFL_NAME_LEN 32u
/* Planned tensors start at multiples of this (TFLite Micro's alignment). */
#define MCULAB_TFL_ALIGN 16u

/* TFLite's BuiltinOperator codes the interpreter runs. */
enum {
  MCULAB_TFL_ADD = 0,
  MCULAB_TFL_AVERAGE_POOL_2D = 1,
  MCULAB_TFL_CONCATENATION = 2,
  MCULAB_TFL_CONV_2D = 3,
  MCULAB_TFL_DEPTHWISE_CONV_2D = 4,
  MCULAB_TFL_DEQUANTIZE = 6,
  MCULAB_TFL_FULLY_CONNECTED = 9,
  MCULAB_TFL_MAX_POOL_2D = 17,
  MCULAB_TFL_MUL = 18,
  MCULAB_TFL_RELU = 19,
  MCULAB_TFL_RELU6 = 21,
  MCULAB_TFL_RESHAPE = 22,
  MCULAB_TFL_SOFTMAX = 25,
  MCULAB_TFL_SVDF = 27,
  MCULAB_TFL_PAD = 34,
  MCULAB_TFL_TRANSPOSE = 39,
  MCULAB_TFL_MEAN = 40,
  MCULAB_TFL_SUB = 41,
  MCULAB_TFL_SQUEEZE = 43,
  MCULAB_TFL_STRIDED_SLICE = 45,
  MCULAB_TFL_PADV2 = 60,
  MCULAB_TFL_SLICE = 65,
  MCULAB_TFL_TRANSPOSE_CONV = 67,
  MCULAB_TFL_EXPAND_DIMS = 70,
  MCULAB_TFL_LEAKY_RELU = 98,
  MCULAB_TFL_QUANTIZE = 114,
  MCULAB_TFL_HARD_SWISH = 117,
  MCULAB_TFL_LOGISTIC = 14,
  MCULAB_TFL_TANH = 28,
  MCULAB_TFL_UNIDIRECTIONAL_SEQUENCE_LSTM = 44,
};

/* TFLite's TensorType codes the interpreter knows (activations: int8, and float32 around
 * QUANTIZE and DEQUANTIZE). */
enum {
  MCULAB_TFL_FLOAT32 = 0,
  MCULAB_TFL_INT16 = 7,
  MCULAB_TFL_INT32 = 2,
  MCULAB_TFL_INT64 = 4,
  MCULAB_TFL_INT8 = 9,
};

typedef enum {
  MCULAB_TFL_OK = 0,
  MCULAB_TFL_NOT_A_MODEL = 1,   /* too short for a flatbuffer, or no "TFL3" identifier */
  MCULAB_TFL_OUT_OF_BOUNDS = 2, /* an offset or a length points outside the model */
  MCULAB_TFL_MALFORMED = 3,     /* a required field is missing, an index or a value is absurd */
  MCULAB_TFL_TOO_LARGE = 4,     /* more tensors, operators or dimensions than the capacities */
  MCULAB_TFL_UNSUPPORTED_OP = 5,
  MCULAB_TFL_UNSUPPORTED = 6, /* a type, a quantization or an option the interpreter lacks */
  MCULAB_TFL_BAD_SHAPE = 7,   /* an operator's tensors do not fit together */
  MCULAB_TFL_NO_MEMORY = 8,   /* the arena is smaller than the plan */
} mculab_tfl_status;

const char* mculab_tfl_status_name(mculab_tfl_status s);
/* The interpreter's operator names ("CONV_2D"), "UNKNOWN" for other codes. */
const char* mculab_tfl_op_name(int32_t builtin_code);
/* Any BuiltinOperator's name from TFLite's schema ("MUL", "CONCATENATION"), for messages about
 * operators the interpreter lacks; "UNKNOWN" for codes it does not list. */
const char* mculab_tfl_builtin_name(int32_t builtin_code);
/* The builtin codes the interpreter runs: sets *codes (may be NULL) and returns how many. */
uint32_t mculab_tfl_supported_ops(const int32_t** codes);

typedef struct {
  int32_t dims[MCULAB_TFL_MAX_DIMS];
  uint8_t num_dims;
  uint8_t type;        /* TensorType */
  uint8_t is_const;    /* data in the model (weights, bias, shapes) */
  uint8_t is_planned;  /* lives in the arena (read or written by an operator) */
  uint8_t is_input;    /* one of the graph's inputs */
  uint8_t is_variable; /* state an operator keeps (SVDF): reset before every inference */
  uint32_t elements;
  uint32_t bytes;
  const uint8_t* const_data; /* is_const: in the model */
  uint8_t* data;             /* planned: in the arena, after prepare */
  float scale;               /* the first (or only) scale; 0 when not quantized */
  int32_t zero_point;
  uint32_t num_scales;         /* per-channel scales: how many (1 per tensor, 0 none) */
  uint32_t scales_pos;         /* offset of the first scale (float32 LE) in the model */
  int32_t quantized_dim;       /* per-channel: the channel dimension; -1 when the scales do not
                                  run along a dimension (tolerated, as TFLite Micro does) */
  int16_t first_use, last_use; /* operator indices; -1: unused */
  uint32_t arena_offset;
} mculab_tfl_tensor;

/* QUANTIZE / DEQUANTIZE (quantize.c). */
enum {
  MCULAB_TFL_QUANT_FROM_FLOAT = 0,
  MCULAB_TFL_QUANT_REQUANTIZE = 1,
  MCULAB_TFL_QUANT_TO_FLOAT = 2
};
typedef struct {
  uint8_t mode;
  uint8_t in_type, out_type;
  int32_t in_zp, out_zp;
  int32_t multiplier, shift; /* REQUANTIZE */
  float scale;               /* FROM_FLOAT: the output's; TO_FLOAT: the input's */
} mculab_tfl_quant_params;

/* ADD and SUB over int16 or float32, broadcasting (TFLite's ArithmeticParams). */
typedef struct {
  int32_t in1_offset, in2_offset, out_offset, left_shift;
  int32_t in1_mult, in1_shift, in2_mult, in2_shift, out_mult, out_shift;
  int32_t act_min, act_max;
} mculab_tfl_arith_params;

/* LEAKY_RELU, quantized (TFLite's LeakyReluParams). */
typedef struct {
  int32_t in_zp, out_zp, mult_identity, shift_identity, mult_alpha, shift_alpha;
} mculab_tfl_leaky_params;

/* PAD, STRIDED_SLICE: per dimension of the input (up to MCULAB_TFL_MAX_DIMS). */
typedef struct {
  int32_t start[MCULAB_TFL_MAX_DIMS], stop[MCULAB_TFL_MAX_DIMS], step[MCULAB_TFL_MAX_DIMS];
  uint32_t pad_value; /* PAD: the fill, its bytes in the tensor's type */
} mculab_tfl_box_params;

/* SVDF, integer (TFLite Micro's EvalIntegerSvdfReference). */
typedef struct {
  int32_t rank, batches, input_size, filters, units, memory;
  int32_t input_zp, output_zp, state_zp;
  int32_t mult1, shift1, mult2, shift2; /* feature -> state, state x time -> output */
} mculab_tfl_svdf_params;

/* RELU (requantized, clamped) and RELU6 (clamped in the input's quantization), quantized. */
typedef struct {
  int32_t in_zp, out_zp, mult, shift, lo, hi;
} mculab_tfl_relu_params;

/* HARD_SWISH, int8 (TFLite's HardSwishParams: 16-bit fixed-point multipliers). */
typedef struct {
  int16_t in_zp, out_zp, reluish_mult, out_mult;
  int32_t reluish_exp, out_exp;
} mculab_tfl_hard_swish_params;

/* MEAN: per input dimension, its stride in the output (0 along a reduced axis); the elements
 * averaged into each output; quantized: the rescaling with 1 / count folded in. */
typedef struct {
  uint32_t out_stride[MCULAB_TFL_MAX_DIMS];
  uint32_t count;
  int32_t in_zp, out_zp, mult, shift;
} mculab_tfl_mean_params;
/* LOGISTIC, TANH: the input into Q4.27 (int8: zero point, saturation radius, multiplier and
 * shift) or into the sigmoid table's scale (int16: multiplier and left shift, ops.h). */
typedef struct {
  int32_t in_zp, range_radius, multiplier, left_shift;
} mculab_tfl_sigmoid_params;
/* SOFTMAX int16 -> int16 (TFLite Micro's SoftmaxInt16): the input difference's rescaling into
 * [-65535, 0] for [-10, 0], and the two 513-entry tables (e^x on [-10, 0], 1 / (1 + x) on [0, 1])
 * in the kernel's persistent bytes. */
typedef struct {
  int32_t multiplier, left_shift;
  const int16_t* exp_lut;
  const int16_t* one_over_one_plus_x_lut;
} mculab_tfl_softmax16_params;

/* UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite Micro's lstm_eval.h): float32, or integer with int8
 * weights, int16 cell state and gates and int8 activations with int32 bias or int16 activations
 * with int64 bias (16x8). Gates in order forget, input, cell, output; the multipliers below are
 * the integer kinds' only. */
typedef struct {
  int32_t batches, steps, input_size, units;
  uint8_t time_major, cell_act; /* cell_act: the cell gate's TANH (4) or SIGMOID (6) */
  uint8_t type;                 /* the activations' TensorType: INT8, INT16 or FLOAT32 */
  int32_t input_zp, hidden_zp;
  int32_t in_mult[4], in_shift[4], rec_mult[4], rec_shift[4]; /* FC into Q3.12 */
  int32_t forget_mult, forget_shift; /* forget gate x cell state -> cell state */
  int32_t input_mult, input_shift;   /* input gate x cell gate -> cell state */
  int32_t hidden_mult, hidden_shift; /* tanh(cell) x output gate -> hidden state */
  int32_t cell_scale_power;          /* the cell state's scale is 2^cell_scale_power */
  int32_t cell_clip;                 /* quantized; -1: none */
} mculab_tfl_lstm_params;

/* An operator's kernel (tflite/ops/ops.h): its options, prepare, invoke. */
typedef struct mculab_tfl_kernel mculab_tfl_kernel;

typedef struct {
  int32_t builtin;
  const mculab_tfl_kernel* kernel;
  uint8_t num_inputs;
  int16_t inputs[MCULAB_TFL_MAX_OP_INPUTS]; /* -1: an omitted optional input */
  int16_t output;
  /* builtin options (TFLite's defaults when absent) */
  uint8_t padding; /* 0 SAME, 1 VALID */
  uint8_t activation;
  uint8_t weights_format, keep_num_dims; /* FULLY_CONNECTED */
  int32_t stride_w, stride_h, filter_w, filter_h, depth_multiplier, dilation_w, dilation_h;
  float beta;
  float alpha;                                    /* LEAKY_RELU */
  int32_t rank;                                   /* SVDF; CONCATENATION: the axis */
  int32_t begin_mask, end_mask, shrink_axis_mask; /* STRIDED_SLICE */
  uint8_t other_masks;                            /* STRIDED_SLICE: ellipsis, new axis, offset */
  uint8_t keep_dims;                              /* MEAN */
  float f_act_min, f_act_max;                     /* float32 kernels: the fused activation */
  float cell_clip, proj_clip;                     /* UNIDIRECTIONAL_SEQUENCE_LSTM */
  uint8_t time_major, diagonal_recurrent;         /* UNIDIRECTIONAL_SEQUENCE_LSTM */
  /* prepared kernel parameters */
  union {
    mculab_conv_s8_params conv;
    mculab_fc_s8_params fc;
    mculab_pool_s8_params pool;
    mculab_add_s8_params add;
    mculab_softmax_s8_params softmax;
    mculab_tfl_quant_params quant;
    mculab_tfl_arith_params arith;
    mculab_tfl_leaky_params leaky;
    mculab_tfl_box_params box;
    mculab_tfl_svdf_params svdf;
    mculab_tfl_relu_params relu;
    mculab_tfl_hard_swish_params hard_swish;
    mculab_tfl_mean_params mean;
    mculab_tfl_sigmoid_params sigmoid;
    mculab_tfl_softmax16_params softmax16;
    mculab_tfl_lstm_params lstm;
  } k;
  uint32_t softmax_outer, softmax_depth;
  uint32_t persistent_bytes; /* the kernel's own, for the model's life (per-channel multipliers) */
  uint32_t scratch_bytes;    /* the kernel's scratch during its invoke (m->scratch) */
  uint32_t scratch_offset;   /* where the planner put it in the arena (scratch_bytes != 0) */
  uint64_t macs;             /* multiply-accumulates per invocation */
  char name[MCULAB_TFL_NAME_LEN]; /* the output tensor's name, cut */
} mculab_tfl_op;

typedef struct {
  /* The planned activations and each operator's scratch, one greedy plan over their lifetimes
   * (planner.c: TFLite Micro's planner and rules, its arena "head"). */
  uint32_t arena_bytes;
  /* After the plan: the kernels' own data (per-channel requantization parameters) and the
   * variable tensors (operators' state), each rounded up to MCULAB_TFL_ALIGN. */
  uint32_t persistent_bytes;
  uint32_t scratch_bytes; /* the largest scratch an operator asks: inside arena_bytes */
  uint32_t naive_bytes;   /* every planned buffer apart: what the plan saves against */
} mculab_tfl_plan;

typedef struct {
  const uint8_t* model;
  uint32_t model_len;
  uint32_t version;
  uint16_t num_tensors, num_ops;
  uint8_t num_inputs, num_outputs;
  int16_t inputs[MCULAB_TFL_MAX_GRAPH_IO]; /* the graph's, in its order */
  int16_t outputs[MCULAB_TFL_MAX_GRAPH_IO];
  mculab_tfl_tensor tensors[MCULAB_TFL_MAX_TENSORS];
  mculab_tfl_op ops[MCULAB_TFL_MAX_OPERATORS];
  mculab_tfl_plan plan;
  uint8_t* arena;
  uint32_t arena_len;
  uint8_t* planned; /* the plan's first byte (in the arena, aligned) */
  uint8_t* scratch; /* the running operator's scratch (op->scratch_bytes), else NULL */
  int prepared;
  int16_t refused_op;      /* MCULAB_TFL_UNSUPPORTED_OP: the first such operator, else -1 */
  int32_t refused_builtin; /* ... and its builtin code, else -1 */
  /* MCULAB_TFL_UNSUPPORTED_OP: every distinct builtin the model needs and the interpreter lacks,
   * in order of first use, with that first operator's index. */
  uint8_t num_missing;
  int32_t missing_builtins[MCULAB_TFL_MAX_MISSING];
  int16_t missing_first_op[MCULAB_TFL_MAX_MISSING];
  char error[MCULAB_TFL_ERROR_LEN];
} mculab_tfl_model;

/* Reads the model: the first subgraph's tensors and operators, with every offset and length
 * checked against [data, data + len). Up to MCULAB_TFL_MAX_GRAPH_IO inputs and outputs.
 * Unsupported operators are refused here, naming every one the model lacks. */
mculab_tfl_status mculab_tfl_load(mculab_tfl_model* m, const uint8_t* data, size_t len);

/* The whole name of tensor `tensor` of a loaded model (operators keep MCULAB_TFL_NAME_LEN - 1
 * characters of their output's): its bytes inside the model, not NUL-terminated, and their count;
 * 0 and NULL when the tensor has no name or the model is not loaded. For the host's tools. */
uint32_t mculab_tfl_tensor_name(const mculab_tfl_model* m, int32_t tensor, const char** name);

/* Checks each operator's shapes and quantization, computes its kernel parameters, plans the
 * arena and lays the tensors out in `arena` (any alignment; NULL with 0 bytes only plans).
 * m->plan holds the sizes even when the arena is too small (MCULAB_TFL_NO_MEMORY). */
mculab_tfl_status mculab_tfl_prepare(mculab_tfl_model* m, uint8_t* arena, size_t arena_len);

/* Called around each operator by invoke (NULL hooks: none). */
typedef struct {
  void (*op_begin)(uint16_t index, const char* type, const char* name);
  void (*op_end)(void);
} mculab_tfl_hooks;

/* Runs the graph once. MCULAB_TFL_MALFORMED if a kernel finds an empty pooling window. */
mculab_tfl_status mculab_tfl_invoke(mculab_tfl_model* m, const mculab_tfl_hooks* hooks);

/* The graph's first input and first output. */
int8_t* mculab_tfl_input(mculab_tfl_model* m, uint32_t* bytes);
const int8_t* mculab_tfl_output(const mculab_tfl_model* m, uint32_t* bytes);
/* The graph's input or output k (in the graph's order); NULL past the last or before prepare. */
void* mculab_tfl_input_at(mculab_tfl_model* m, uint32_t k, uint32_t* bytes);
const void* mculab_tfl_output_at(const mculab_tfl_model* m, uint32_t k, uint32_t* bytes);
/* Every input's bytes, added up: what a given input holds. */
uint32_t mculab_tfl_inputs_bytes(const mculab_tfl_model* m);

/* The output checksum: the CRC-32 (mculab_crc32) over every output's bytes concatenated in the
 * graph's output order; for one output, the CRC-32 of that output. 0 before prepare. */
uint32_t mculab_tfl_output_crc32(const mculab_tfl_model* m);

/* Fills the inputs, in the graph's order, from one xorshift32 stream started at `seed` (the same
 * bytes on every platform). */
void mculab_tfl_seed_input(mculab_tfl_model* m, uint32_t seed);

/* Copies a given input into the prepared model's input tensors: the inputs' bytes concatenated
 * in the graph's input order. MCULAB_TFL_BAD_SHAPE (with m->error saying both sizes) when `len`
 * is not mculab_tfl_inputs_bytes. */
mculab_tfl_status mculab_tfl_set_input(mculab_tfl_model* m, const uint8_t* input, uint32_t len);

/* A model job's blob (what `mculab submit --model FILE [--input FILE.bin]` uploads): either the
 * .tflite model alone (the input then comes from the workload's seed) or a model with its input:
 *
 *   "MLMI" | u32 model_len | u32 input_len | u32 0 | model (at byte 16) | input      (LE)
 *
 * The model starts 16 bytes in, so its buffers keep the blob's alignment. A graph of several
 * inputs takes them concatenated in the graph's input order (`--input` repeated in that order). */
#define MCULAB_TFL_BLOB_MAGIC "MLMI"
#define MCULAB_TFL_BLOB_HEAD 16u

typedef struct {
  const uint8_t* model;
  uint32_t model_len;
  const uint8_t* input; /* NULL: no input given (seed it) */
  uint32_t input_len;
} mculab_tfl_blob;

/* Splits a blob into model and input. Returns 0, or -1 when a "MLMI" blob's lengths do not
 * match its size (a blob without the magic is taken as a bare model, which load checks). */
int mculab_tfl_unpack(const uint8_t* blob, size_t len, mculab_tfl_blob* out);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_TFLITE_H_ */
