/* The calibration loops (ops.h, MCULAB_OP_CALIBRATE): on Cortex-M55 hand-written loops whose
 * instruction mix per pass is fixed (the table in ops.h), so a counter can be checked against an
 * independent count: loops x the mix, exactly. Elsewhere plain C with the same effect on the
 * output, so checksums match the host reference. */
#include <stdint.h>

#include "kernels.h"

/* Effects, whatever the target: words 4..7 of the output = 2 x words 0..3 for the MVE loop; the
 * others leave the output as prepared (their stores write back what they read). */
#if defined(__ARM_FEATURE_MVE) && defined(__thumb2__)
void mculab_calibrate(const mculab_case* c) {
  uint32_t loops = (uint32_t)c->params[MCULAB_CAL_LOOPS];
  int8_t* buf = c->output;
  switch (c->params[MCULAB_CAL_KIND]) {
    case MCULAB_CAL_ALU:
      __asm__ volatile(
          "1: subs %0, %0, #1\n"
          "   bne 1b\n"
          : "+l"(loops)
          :
          : "cc");
      break;
    case MCULAB_CAL_LDST:
      __asm__ volatile(
          "1: ldr r3, [%1]\n"
          "   str r3, [%1, #4]\n"
          "   subs %0, %0, #1\n"
          "   bne 1b\n"
          : "+l"(loops)
          : "l"(buf)
          : "r3", "cc", "memory");
      break;
    case MCULAB_CAL_MVE:
      __asm__ volatile(
          "1: vldrw.u32 q0, [%1]\n"
          "   vldrb.s16 q1, [%1]\n"
          "   vadd.i32 q0, q0, q0\n"
          "   vstrw.32 q0, [%1, #16]\n"
          "   subs %0, %0, #1\n"
          "   bne 1b\n"
          : "+l"(loops)
          : "l"(buf)
          : "q0", "q1", "cc", "memory");
      break;
    case MCULAB_CAL_MVE_TP: {
      uint32_t lanes = 3;
      __asm__ volatile(
          "1: vctp.32 %2\n"
          "   vpst\n"
          "   vldrwt.u32 q0, [%1]\n"
          "   subs %0, %0, #1\n"
          "   bne 1b\n"
          : "+l"(loops)
          : "l"(buf), "r"(lanes)
          : "q0", "cc", "memory");
      break;
    }
    case MCULAB_CAL_LDM:
      __asm__ volatile(
          "1: ldmia %1, {r3, r4}\n"
          "   stmia %2, {r3, r4}\n"
          "   subs %0, %0, #1\n"
          "   bne 1b\n"
          : "+l"(loops)
          : "l"(buf), "l"(buf + 8)
          : "r3", "r4", "cc", "memory");
      break;
  }
}
#else
void mculab_calibrate(const mculab_case* c) {
  const int32_t loops = c->params[MCULAB_CAL_LOOPS];
  volatile uint32_t* w = (volatile uint32_t*)(void*)c->output;
  for (int32_t i = 0; i < loops; ++i) {
    switch (c->params[MCULAB_CAL_KIND]) {
      case MCULAB_CAL_LDST:
        w[1] = w[0];
        break;
      case MCULAB_CAL_MVE:
        for (int k = 0; k < 4; ++k) w[4 + k] = w[k] * 2u;
        break;
      case MCULAB_CAL_LDM:
        w[2] = w[0];
        w[3] = w[1];
        break;
      default: /* alu, mve_tp: no effect on memory */
        break;
    }
  }
}
#endif
