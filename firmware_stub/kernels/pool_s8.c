/* average_pool_s8 and max_pool_s8: TFLite's reference_integer_ops::AveragePool and MaxPool. */
#include "mculab/kernels_s8.h"

static int32_t max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

int mculab_average_pool_s8_ref(const mculab_pool_s8_params* p, const int8_t* input,
                               int8_t* output) {
  const int32_t depth = p->channels;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t in_x0 = ox * p->stride_w - p->pad_w;
        const int32_t in_y0 = oy * p->stride_h - p->pad_h;
        /* The window clamped to the input. */
        const int32_t fx_start = max_i32(0, -in_x0);
        const int32_t fx_end = min_i32(p->filter_w, p->in_w - in_x0);
        const int32_t fy_start = max_i32(0, -in_y0);
        const int32_t fy_end = min_i32(p->filter_h, p->in_h - in_y0);
        int8_t* out = output + (((uint32_t)b * p->out_h + oy) * p->out_w + ox) * depth;
        for (int32_t ch = 0; ch < depth; ++ch) {
          int32_t acc = 0;
          int32_t count = 0;
          for (int32_t fy = fy_start; fy < fy_end; ++fy) {
            for (int32_t fx = fx_start; fx < fx_end; ++fx) {
              const uint32_t at =
                  (((uint32_t)b * p->in_h + in_y0 + fy) * p->in_w + in_x0 + fx) * depth + ch;
              acc += input[at];
              ++count;
            }
          }
          if (count == 0) return 0;
          /* Rounded to the nearest, halves away from zero. */
          acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
          acc = max_i32(acc, p->act_min);
          acc = min_i32(acc, p->act_max);
          out[ch] = (int8_t)acc;
        }
      }
    }
  }
  return 1;
}

void mculab_max_pool_s8_ref(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output) {
  const int32_t depth = p->channels;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t in_x0 = ox * p->stride_w - p->pad_w;
        const int32_t in_y0 = oy * p->stride_h - p->pad_h;
        const int32_t fx_start = max_i32(0, -in_x0);
        const int32_t fx_end = min_i32(p->filter_w, p->in_w - in_x0);
        const int32_t fy_start = max_i32(0, -in_y0);
        const int32_t fy_end = min_i32(p->filter_h, p->in_h - in_y0);
        int8_t* out = output + (((uint32_t)b * p->out_h + oy) * p->out_w + ox) * depth;
        for (int32_t ch = 0; ch < depth; ++ch) {
          int32_t max = -128;
          for (int32_t fy = fy_start; fy < fy_end; ++fy) {
            for (int32_t fx = fx_start; fx < fx_end; ++fx) {
              const uint32_t at =
                  (((uint32_t)b * p->in_h + in_y0 + fy) * p->in_w + in_x0 + fx) * depth + ch;
              max = max_i32(max, input[at]);
            }
          }
          max = max_i32(max, p->act_min);
          max = min_i32(max, p->act_max);
          out[ch] = (int8_t)max;
        }
      }
    }
  }
}
