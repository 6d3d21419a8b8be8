/* fully_connected_s8: TFLite's reference_integer_ops::FullyConnected (filter offset 0, per-tensor
 * requantization, activation range [-128, 127]). Input [N][in], filter [out][in], output [N][out].
 */
#include "kernels.h"

void mculab_fully_connected_s8(const mculab_case* c) {
  const int32_t batches = c->params[MCULAB_FC_N];
  const int32_t depth = c->params[MCULAB_FC_IN], out_c = c->params[MCULAB_FC_OUT];
  const int32_t input_offset = c->input_offset, output_offset = c->output_offset;
  const int32_t multiplier = c->out_multiplier[0];
  const int shift = c->out_shift[0];
  for (int32_t b = 0; b < batches; ++b) {
    const int8_t* in = c->input + (uint32_t)b * depth;
    for (int32_t oc = 0; oc < out_c; ++oc) {
      const int8_t* f = c->filter + (uint32_t)oc * depth;
      int32_t acc = 0;
      for (int32_t d = 0; d < depth; ++d) acc += f[d] * (in[d] + input_offset);
      acc += c->bias[oc];
      acc = mculab_mbqm(acc, multiplier, shift);
      acc += output_offset;
      if (acc < -128) acc = -128;
      if (acc > 127) acc = 127;
      c->output[(uint32_t)b * out_c + oc] = (int8_t)acc;
    }
  }
}
