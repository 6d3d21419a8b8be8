/* fully_connected_s8: TFLite's reference_integer_ops::FullyConnected (filter offset 0, per-tensor
 * requantization). Input [N][in], filter [out][in], output [N][out]. */
#include "kernels.h"
#include "mculab/kernels_s8.h"

void mculab_fully_connected_s8_run_ref(const mculab_fc_s8_params* p, const int8_t* input,
                                       const int8_t* filter, const int32_t* bias, int8_t* output) {
  const int32_t depth = p->depth, out_c = p->out_c;
  const int32_t input_offset = p->input_offset, output_offset = p->output_offset;
  const int32_t multiplier = p->out_multiplier;
  const int shift = p->out_shift;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* in = input + (uint32_t)b * depth;
    for (int32_t oc = 0; oc < out_c; ++oc) {
      const int8_t* f = filter + (uint32_t)oc * depth;
      int32_t acc = 0;
      for (int32_t d = 0; d < depth; ++d) acc += f[d] * (in[d] + input_offset);
      /* Wrap-around, as in conv2d_s8.c. */
      if (bias != NULL) acc = (int32_t)((uint32_t)acc + (uint32_t)bias[oc]);
      acc = mculab_mbqm(acc, multiplier, shift);
      acc += output_offset;
      if (acc < p->act_min) acc = p->act_min;
      if (acc > p->act_max) acc = p->act_max;
      output[(uint32_t)b * out_c + oc] = (int8_t)acc;
    }
  }
}

void mculab_fully_connected_s8_prepare(mculab_fc_s8_params* p, const int8_t* filter,
                                       int32_t* sums) {
  for (int32_t oc = 0; oc < p->out_c; ++oc) {
    const int8_t* f = filter + (uint32_t)oc * (uint32_t)p->depth;
    int32_t s = 0;
    for (int32_t d = 0; d < p->depth; ++d) s += f[d];
    sums[oc] = s;
  }
  p->kernel_sums = sums;
}

/* The operator benchmark: no fused activation. */
void mculab_fully_connected_s8(const mculab_case* c) {
  mculab_fc_s8_params p;
  p.batches = c->params[MCULAB_FC_N];
  p.depth = c->params[MCULAB_FC_IN];
  p.out_c = c->params[MCULAB_FC_OUT];
  p.input_offset = c->input_offset;
  p.output_offset = c->output_offset;
  p.out_multiplier = c->out_multiplier[0];
  p.out_shift = c->out_shift[0];
  p.act_min = -128;
  p.act_max = 127;
  p.kernel_sums = c->kernel_sums;
  mculab_fully_connected_s8_run(&p, c->input, c->filter, c->bias, c->output);
}
