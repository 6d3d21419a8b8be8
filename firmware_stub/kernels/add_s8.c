/* add_s8: TFLite's reference_integer_ops::AddElementwise (both inputs of one shape). */
#include "kernels.h"
#include "mculab/kernels_s8.h"

void mculab_add_s8_ref(const mculab_add_s8_params* p, const int8_t* input1, const int8_t* input2,
                       int8_t* output, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t v1 = (p->input1_offset + input1[i]) * (1 << p->left_shift);
    const int32_t v2 = (p->input2_offset + input2[i]) * (1 << p->left_shift);
    const int32_t s1 = mculab_mbqm(v1, p->input1_multiplier, p->input1_shift);
    const int32_t s2 = mculab_mbqm(v2, p->input2_multiplier, p->input2_shift);
    int32_t out = mculab_mbqm(s1 + s2, p->output_multiplier, p->output_shift) + p->output_offset;
    if (out < p->act_min) out = p->act_min;
    if (out > p->act_max) out = p->act_max;
    output[i] = (int8_t)out;
  }
}
