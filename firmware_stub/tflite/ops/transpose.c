/* TRANSPOSE (reference_ops::Transpose): output dimension d is input dimension perm[d]; the
 * permutation a constant int32 or int64 vector; any element type, quantization unchanged. */
#include <stdint.h>

#include "ops.h"

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* perm = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (in == NULL || in->type != out->type || in->zero_point != out->zero_point ||
      in->scale != out->scale) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs an input of the output's type and quantization");
  }
  if (perm == NULL || !perm->is_const ||
      (perm->type != MCULAB_TFL_INT32 && perm->type != MCULAB_TFL_INT64) ||
      perm->elements != in->num_dims || in->num_dims != out->num_dims) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "the permutation must be a constant int32 [input dims]");
  }
  mculab_tfl_box_params* p = &c->op->k.box;
  uint32_t seen = 0;
  for (unsigned d = 0; d < in->num_dims; ++d) {
    const int64_t from = mculab_tfl_const_int(perm, d);
    if (from < 0 || from >= in->num_dims || (seen & (1u << from)) != 0 ||
        in->dims[from] != out->dims[d]) {
      return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "not a permutation giving the output's shape");
    }
    seen |= 1u << from;
    p->start[d] = (int32_t)from;
  }
  c->op->macs = 0;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* ti = &m->tensors[op->inputs[0]];
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const uint8_t* in = (const uint8_t*)mculab_tfl_data(m, op->inputs[0]);
  uint8_t* out = (uint8_t*)mculab_tfl_out_data(m, op);
  const uint32_t size = ti->bytes / ti->elements;
  const unsigned n = ti->num_dims;
  /* The input stride of each output dimension. */
  uint64_t in_stride[MCULAB_TFL_MAX_DIMS], stride[MCULAB_TFL_MAX_DIMS];
  uint64_t s = 1;
  for (int d = (int)n - 1; d >= 0; --d) {
    in_stride[d] = s;
    s *= (uint64_t)ti->dims[d];
  }
  for (unsigned d = 0; d < n; ++d) stride[d] = in_stride[op->k.box.start[d]];
  uint32_t idx[MCULAB_TFL_MAX_DIMS] = {0};
  uint64_t at = 0;
  for (uint32_t k = 0; k < to->elements; ++k) {
    for (uint32_t b = 0; b < size; ++b) out[(uint64_t)k * size + b] = in[at * size + b];
    for (int d = (int)n - 1; d >= 0; --d) {
      at += stride[d];
      if (++idx[d] < (uint32_t)to->dims[d]) break;
      at -= stride[d] * idx[d];
      idx[d] = 0;
    }
  }
  return MCULAB_TFL_OK;
}

/* TransposeOptions is empty. */
const mculab_tfl_kernel mculab_tfl_kernel_transpose = {"TRANSPOSE", 0, NULL, prepare, NULL, invoke};
