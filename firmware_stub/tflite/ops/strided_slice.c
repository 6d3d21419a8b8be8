/* STRIDED_SLICE (reference_ops::StridedSlice with strided_slice_logic.h's StartForAxis and
 * StopForAxis): begin, end and strides constant int32 or int64 vectors, begin, end and
 * shrink-axis masks; ellipsis and new-axis masks and `offset` are refused. SLICE
 * (reference_ops::Slice): begin and size constant vectors, both int32 or both int64, a size of
 * -1 running to the end; checked as TFLite Micro's GetValidatedBeginAndSizeVectors checks them.
 * Any element type: both copy the box with strides of 1 or more. */
#include <stdint.h>

#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->begin_mask = fb_i32(r, t, 0, 0);
  op->end_mask = fb_i32(r, t, 1, 0);
  const int32_t ellipsis = fb_i32(r, t, 2, 0), new_axis = fb_i32(r, t, 3, 0);
  op->shrink_axis_mask = fb_i32(r, t, 4, 0);
  op->other_masks = (uint8_t)((ellipsis != 0) | ((new_axis != 0) << 1) | (fb_u8(r, t, 5, 0) << 2));
}

static int32_t clamp64(int64_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* begin = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* end = mculab_tfl_in(c, 2);
  const mculab_tfl_tensor* strides = mculab_tfl_in(c, 3);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (in == NULL || in->type != out->type || in->elements == 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs an input of the output's type");
  }
  if (op->other_masks != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "ellipsis or new-axis masks, or offset");
  }
  const mculab_tfl_tensor* v[3] = {begin, end, strides};
  for (int k = 0; k < 3; ++k) {
    if (v[k] == NULL || !v[k]->is_const ||
        (v[k]->type != MCULAB_TFL_INT32 && v[k]->type != MCULAB_TFL_INT64) ||
        v[k]->elements != in->num_dims) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "begin, end and strides must be constant int32 [input dims]");
    }
  }
  mculab_tfl_box_params* p = &op->k.box;
  uint64_t count = 1;
  for (unsigned d = 0; d < in->num_dims; ++d) {
    const int32_t size = in->dims[d];
    const int64_t step = mculab_tfl_const_int(strides, d);
    if (step == 0 || step > 65535 || step < -65535) {
      return mculab_tfl_bad(c, MCULAB_TFL_MALFORMED, "a stride of 0 or out of range");
    }
    int64_t start = mculab_tfl_const_int(begin, d);
    if (op->begin_mask & (1 << d)) start = step > 0 ? INT32_MIN : INT32_MAX;
    if (start < 0) start += size;
    start = step > 0 ? clamp64(start, 0, size) : clamp64(start, -1, size - 1);
    int64_t stop;
    if (op->shrink_axis_mask & (1 << d)) {
      stop = start + 1;
    } else {
      stop = mculab_tfl_const_int(end, d);
      if (op->end_mask & (1 << d)) stop = step > 0 ? INT32_MAX : INT32_MIN;
      if (stop < 0) stop += size;
      stop = step > 0 ? clamp64(stop, 0, size) : clamp64(stop, -1, size - 1);
    }
    p->start[d] = (int32_t)start;
    p->stop[d] = (int32_t)stop;
    p->step[d] = (int32_t)step;
    const int64_t n =
        step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step;
    count *= n > 0 ? (uint64_t)n : 0u;
  }
  if (count != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "the slice's size differs from the output's");
  }
  op->macs = 0;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* ti = &m->tensors[op->inputs[0]];
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  if (to->elements == 0) return MCULAB_TFL_OK;
  const uint8_t* in = (const uint8_t*)mculab_tfl_data(m, op->inputs[0]);
  uint8_t* out = (uint8_t*)mculab_tfl_out_data(m, op);
  const uint32_t size = ti->bytes / ti->elements;
  const mculab_tfl_box_params* p = &op->k.box;
  const unsigned n = ti->num_dims;
  int64_t stride[MCULAB_TFL_MAX_DIMS];
  int32_t idx[MCULAB_TFL_MAX_DIMS];
  int64_t s = 1;
  for (int d = (int)n - 1; d >= 0; --d) {
    stride[d] = s;
    s *= ti->dims[d];
    idx[d] = p->start[d];
  }
  for (uint32_t k = 0; k < to->elements; ++k) {
    int64_t at = 0;
    for (unsigned d = 0; d < n; ++d) at += (int64_t)idx[d] * stride[d];
    for (uint32_t b = 0; b < size; ++b) out[(uint64_t)k * size + b] = in[at * size + b];
    for (int d = (int)n - 1; d >= 0; --d) {
      idx[d] += p->step[d];
      if (p->step[d] > 0 ? idx[d] < p->stop[d] : idx[d] > p->stop[d]) break;
      idx[d] = p->start[d];
    }
  }
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_slice(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* begin = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* size = mculab_tfl_in(c, 2);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (op->num_inputs != 3 || in == NULL || in->type != out->type || in->elements == 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs an input of the output's type");
  }
  if (begin == NULL || size == NULL || !begin->is_const || !size->is_const ||
      begin->type != size->type ||
      (begin->type != MCULAB_TFL_INT32 && begin->type != MCULAB_TFL_INT64) ||
      begin->num_dims != 1 || size->num_dims != 1 || begin->elements != in->num_dims ||
      size->elements != in->num_dims) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "begin and size must be constant vectors of one type, int32 or int64, "
                          "of one value per input dimension");
  }
  mculab_tfl_box_params* p = &op->k.box;
  uint64_t count = 1;
  for (unsigned d = 0; d < in->num_dims; ++d) {
    const int64_t first = mculab_tfl_const_int(begin, d);
    const int64_t n = mculab_tfl_const_int(size, d);
    const int64_t remaining = in->dims[d] - first;
    const int64_t resolved = n == -1 ? remaining : n;
    if (first < 0 || first > in->dims[d] || resolved < 0 || resolved > remaining) {
      return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "begin or size outside the input");
    }
    p->start[d] = (int32_t)first;
    p->stop[d] = (int32_t)(first + resolved);
    p->step[d] = 1;
    count *= (uint64_t)resolved;
  }
  if (count != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "the slice's size differs from the output's");
  }
  op->macs = 0;
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_strided_slice = {"STRIDED_SLICE", 32,   parse,
                                                           prepare,         NULL, invoke};
/* SliceOptions is empty. */
const mculab_tfl_kernel mculab_tfl_kernel_slice = {"SLICE", 0, NULL, prepare_slice, NULL, invoke};
