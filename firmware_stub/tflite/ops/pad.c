/* PAD and PADV2 (reference_ops::Pad): the input copied into the output with the paddings
 * ([dims][2], int32 or int64, constant) before and after each dimension; the fill is PADV2's
 * constant value, else 0 for float32 and the output's zero point for int8 and int16 (TFLite
 * Micro's pad.cc). Any element type of 1, 2 or 4 bytes. */
#include <stdint.h>

#include "ops.h"

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* pads = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* value = mculab_tfl_in(c, 2);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (in == NULL || in->type != out->type || in->elements == 0 ||
      (in->bytes / in->elements != 1 && in->bytes / in->elements != 2 &&
       in->bytes / in->elements != 4)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs an input of the output's type");
  }
  if (in->type != MCULAB_TFL_FLOAT32 && in->num_scales > 0 &&
      (in->zero_point != out->zero_point || in->scale != out->scale)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "input and output quantized differently");
  }
  if (pads == NULL || !pads->is_const ||
      (pads->type != MCULAB_TFL_INT32 && pads->type != MCULAB_TFL_INT64) ||
      pads->elements != 2u * in->num_dims || in->num_dims != out->num_dims) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "paddings must be a constant int32 or int64 [dims][2]");
  }
  mculab_tfl_box_params* p = &op->k.box;
  for (unsigned d = 0; d < in->num_dims; ++d) {
    const int64_t before = mculab_tfl_const_int(pads, 2u * d);
    const int64_t after = mculab_tfl_const_int(pads, 2u * d + 1u);
    if (before < 0 || after < 0 || before + in->dims[d] + after != out->dims[d]) {
      return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                            "paddings and input do not give the output's shape");
    }
    p->start[d] = (int32_t)before;
  }
  const uint32_t size = in->bytes / in->elements;
  p->pad_value = in->type == MCULAB_TFL_FLOAT32 ? 0u : (uint32_t)out->zero_point;
  if (value != NULL) {
    if (!value->is_const || value->type != in->type || value->elements != 1) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "the constant value must be one constant of the input's type");
    }
    uint32_t v = 0;
    for (uint32_t k = 0; k < size; ++k) v |= (uint32_t)value->const_data[k] << (8u * k);
    p->pad_value = size == 1 ? (uint32_t)(int8_t)v : size == 2 ? (uint32_t)(int16_t)v : v;
  }
  op->macs = 0;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* ti = &m->tensors[op->inputs[0]];
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const uint8_t* in = (const uint8_t*)mculab_tfl_data(m, op->inputs[0]);
  uint8_t* out = (uint8_t*)mculab_tfl_out_data(m, op);
  const uint32_t size = to->bytes / to->elements;
  const mculab_tfl_box_params* p = &op->k.box;
  uint32_t idx[MCULAB_TFL_MAX_DIMS] = {0};
  const uint8_t* src = in;
  for (uint32_t k = 0; k < to->elements; ++k) {
    int inside = 1;
    for (unsigned d = 0; d < to->num_dims; ++d) {
      const int32_t i = (int32_t)idx[d] - p->start[d];
      if (i < 0 || i >= ti->dims[d]) inside = 0;
    }
    /* Inside elements come in the input's order. */
    const uint8_t* from = inside ? src : (const uint8_t*)&p->pad_value;
    if (size == 1) {
      out[k] = inside ? *from : (uint8_t)p->pad_value;
    } else if (size == 2) {
      ((uint16_t*)(void*)out)[k] =
          inside ? *(const uint16_t*)(const void*)from : (uint16_t)p->pad_value;
    } else {
      ((uint32_t*)(void*)out)[k] = inside ? *(const uint32_t*)(const void*)from : p->pad_value;
    }
    if (inside) src += size;
    for (int d = (int)to->num_dims - 1; d >= 0; --d) {
      if (++idx[d] < (uint32_t)to->dims[d]) break;
      idx[d] = 0;
    }
  }
  return MCULAB_TFL_OK;
}

/* PadOptions and PadV2Options are empty. */
const mculab_tfl_kernel mculab_tfl_kernel_pad = {"PAD", 0, NULL, prepare, NULL, invoke};
const mculab_tfl_kernel mculab_tfl_kernel_padv2 = {"PADV2", 0, NULL, prepare, NULL, invoke};
