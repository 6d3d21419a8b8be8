/* T32 classification for Armv8.1-M + MVE (thumb_classify.h). Field names follow the Armv8-M ARM's
 * T32 decode tables (hw1 = the first halfword, hw2 = the second). */
#include "thumb_classify.h"

#define BRANCH MCULAB_INSN_BRANCH
#define LOAD MCULAB_INSN_LOAD
#define STORE MCULAB_INSN_STORE
#define MVE MCULAB_INSN_MVE

int mculab_thumb_is_32bit(uint16_t hw1) {
  const unsigned top = hw1 >> 11;
  return top == 0x1D || top == 0x1E || top == 0x1F;
}

static unsigned classify16(uint16_t hw) {
  if ((hw >> 11) == 0x09) return LOAD;                               /* LDR (literal) */
  if ((hw >> 12) == 0x5) return ((hw >> 9) & 7u) < 3 ? STORE : LOAD; /* register offset */
  if ((hw >> 13) == 0x3 || (hw >> 12) == 0x8 || (hw >> 12) == 0x9) { /* imm, halfword, SP */
    return (hw & 0x0800) ? LOAD : STORE;
  }
  if ((hw >> 12) == 0xC) return (hw & 0x0800) ? LOAD : STORE;               /* LDM / STM */
  if ((hw & 0xFE00) == 0xB400) return STORE;                                /* PUSH */
  if ((hw & 0xFE00) == 0xBC00) return LOAD | ((hw & 0x0100) ? BRANCH : 0u); /* POP {.., pc} */
  if ((hw & 0xF500) == 0xB100) return BRANCH;                               /* CBZ, CBNZ */
  if ((hw >> 12) == 0xD) {                                                  /* B<cond>, UDF, SVC */
    const unsigned cond = (hw >> 8) & 0xFu;
    return cond < 0xE ? BRANCH : 0u;
  }
  if ((hw >> 11) == 0x1C) return BRANCH;      /* B */
  if ((hw & 0xFF00) == 0x4700) return BRANCH; /* BX, BLX, BXNS, BLXNS */
  if ((hw & 0xFC00) == 0x4400) {              /* special data processing: ADD, CMP, MOV */
    const unsigned op = (hw >> 8) & 3u;
    const unsigned rd = ((hw >> 4) & 8u) | (hw & 7u);
    if ((op == 0 || op == 2) && rd == 15) return BRANCH;
  }
  return 0;
}

/* The coprocessor / FP / MVE space: hw1 = 111x 11xx (0xEC..0xEF, 0xFC..0xFF). */
static unsigned classify_coproc(uint16_t hw1, uint16_t hw2) {
  const unsigned t = (hw1 >> 12) & 1u;    /* 0: 0xE..., 1: 0xF... */
  const unsigned space = (hw1 >> 8) & 3u; /* 0/1: load/store, 2: data/transfers, 3: vector */
  const unsigned coproc = (hw2 >> 8) & 0xFu;
  const int mve_coproc = (coproc & 0xEu) == 0xEu;
  if (space == 3) return MVE; /* 0xEF.., 0xFF..: MVE vector data processing (no Neon on M) */
  if (space == 2) {           /* 0xEE.., 0xFE..: data processing and register transfers */
    if (mve_coproc) return MVE;
    if (t == 0 && coproc == 0xB && (hw2 & 0x0010)) { /* 8/16/32-bit transfers to/from lanes */
      const int l = (hw1 >> 4) & 1;
      if (!l && (hw1 & 0x0080)) return MVE; /* VDUP */
      const int is32 = !(hw1 & 0x0040) && (hw2 & 0x0060) == 0;
      return is32 ? 0u : MVE; /* VMOV .32 lane is FP, .8/.16 is MVE */
    }
    return 0;
  }
  /* 0xEC/0xED, 0xFC/0xFD: loads and stores, and the 64-bit register transfers */
  const unsigned p = (hw1 >> 8) & 1u, u = (hw1 >> 7) & 1u, w = (hw1 >> 5) & 1u;
  const unsigned l = (hw1 >> 4) & 1u;
  if (!p && !u && !w) return mve_coproc ? MVE : 0u; /* MCRR/MRRC, VMOV (two registers/lanes) */
  if ((coproc & 0xEu) == 0xAu && (hw1 & 0xFFBF) == 0xEC9F) return 0; /* VSCCLRM */
  const unsigned mem = l ? LOAD : STORE;
  if (mve_coproc && !(t == 0 && (hw2 & 0x0F80) == 0x0F80)) return mem | MVE;
  return mem; /* VLDR/VSTR/VLDM/VSTM (FP, system registers), VLLDM/VLSTM, LDC/STC */
}

/* hw1 = 11110..: data processing with immediates (hw2[15] = 0), branches and control. */
static unsigned classify_branch_space(uint16_t hw1, uint16_t hw2) {
  if (!(hw2 & 0x8000)) return 0;
  switch (hw2 & 0xD000) {
    case 0x8000: /* B<cond> (T3), or MSR/MRS/hints/barriers when cond is 111x */
      return (hw1 & 0x0380) != 0x0380 ? BRANCH : 0u;
    case 0x9000: /* B (T4) */
    case 0xD000: /* BL */
      return BRANCH;
    default: /* 0xC000: the Armv8.1-M low-overhead loops and branch-future hints */
      if ((hw1 & 0xF780) == 0xF000 && (hw2 & 1u)) {
        if ((hw2 & 0xF001) == 0xC001) return BRANCH; /* WLS, WLSTP, LE, LETP */
        if (hw2 == 0xE801) return MVE;               /* VCTP */
        return 0;                                    /* DLS, DLSTP, LCTP */
      }
      return 0; /* BF, BFX, BFL, BFLX, BFCSEL */
  }
}

/* hw1 = 11101 00..: load/store multiple, dual, exclusive, acquire/release, table branch. */
static unsigned classify_ldst_multiple(uint16_t hw1, uint16_t hw2) {
  const unsigned l = (hw1 >> 4) & 1u;
  if (!(hw1 & 0x0040)) { /* LDM/STM (IA, DB), PUSH.W, POP.W */
    if (l) return LOAD | ((hw2 & 0x8000) ? BRANCH : 0u);
    return STORE;
  }
  if (hw1 == 0xE97F && hw2 == 0xE97F) return 0;                       /* SG */
  if ((hw1 & 0xFFF0) == 0xE840 && (hw2 & 0xF000) == 0xF000) return 0; /* TT, TTT, TTA, TTAT */
  const unsigned op1 = (hw1 >> 7) & 3u, op2 = (hw1 >> 4) & 3u;
  if ((op1 & 2u) || (op2 & 2u)) return l ? LOAD : STORE; /* LDRD, STRD */
  if (op2 == 0) return STORE;                            /* STREX{B,H}, STL{B,H}, STLEX{B,H} */
  if (op1 == 1 && ((hw2 >> 4) & 0xFu) <= 1u) return LOAD | BRANCH; /* TBB, TBH */
  return LOAD; /* LDREX{B,H}, LDA{B,H}, LDAEX{B,H} */
}

/* hw1 = 11111 00..: load/store single. */
static unsigned classify_ldst_single(uint16_t hw1, uint16_t hw2) {
  const unsigned l = (hw1 >> 4) & 1u;
  const unsigned rt = (hw2 >> 12) & 0xFu;
  if (!l) return STORE;
  if (rt == 15) {
    const unsigned size = (hw1 >> 5) & 3u;
    return size == 2 ? (LOAD | BRANCH) : 0u; /* LDR PC; else PLD, PLI, hints */
  }
  return LOAD;
}

unsigned mculab_thumb_classify_hw(uint16_t hw1, uint16_t hw2) {
  if (!mculab_thumb_is_32bit(hw1)) return classify16(hw1);
  if ((hw1 & 0xEC00) == 0xEC00) return classify_coproc(hw1, hw2);
  switch (hw1 >> 11) {
    case 0x1D: /* 11101 */
      if ((hw1 & 0x0600) == 0x0000) return classify_ldst_multiple(hw1, hw2);
      return 0; /* data processing (shifted register), long shifts */
    case 0x1E:  /* 11110 */
      return classify_branch_space(hw1, hw2);
    default: /* 11111 */
      if ((hw1 & 0x0600) == 0x0000) return classify_ldst_single(hw1, hw2);
      return 0; /* data processing (register), multiplies, divides */
  }
}

unsigned mculab_thumb_classify(const uint8_t* bytes, size_t size) {
  if (size < 2) return 0;
  const uint16_t hw1 = (uint16_t)(bytes[0] | (bytes[1] << 8));
  if (!mculab_thumb_is_32bit(hw1)) return classify16(hw1);
  if (size < 4) return 0;
  const uint16_t hw2 = (uint16_t)(bytes[2] | (bytes[3] << 8));
  return mculab_thumb_classify_hw(hw1, hw2);
}
