/* Classifies a T32 (Thumb-2) instruction of an Armv8.1-M core with MVE (Cortex-M55) from its
 * bytes, at translation time, for the QEMU counting plugin (mculab_counters.c).
 *
 * Bytes are in memory order: a 16-bit instruction is one little-endian halfword, a 32-bit one is
 * two (the first halfword, hw1, decides the size: hw1[15:11] in 0b11101..0b11111). Bytes beyond
 * that size are ignored: QEMU 7.2 appends to an instruction's data the halfword its Thumb
 * translator reads ahead (to see whether the next instruction crosses a page), so a 4-byte STRD
 * can come with 6 bytes and a 16-bit LDR with 4.
 *
 * MCULAB_INSN_BRANCH: may write the PC. B, B<cond>, BL, BX, BLX, BXNS/BLXNS, CBZ, CBNZ, TBB, TBH,
 *   LDR PC, LDM/POP with PC in the list, MOV PC and ADD PC (16-bit), and the loop branches LE,
 *   LETP, WLS, WLSTP. Not: DLS, DLSTP, LCTP (no branch), BF/BFX/BFL/BFLX/BFCSEL (branch-future
 *   hints: QEMU executes them as NOPs), SVC, BKPT, UDF.
 * MCULAB_INSN_LOAD / MCULAB_INSN_STORE: may read / write memory. LDR*, STR*, LDM/STM/PUSH/POP,
 *   LDRD/STRD, exclusives, LDA/STL, TBB/TBH (read the table), VLDR/VSTR (incl. system registers),
 *   VLDM/VSTM/VPUSH/VPOP, VLLDM/VLSTM, MVE VLDR/VSTR (contiguous, widening/narrowing,
 *   gather/scatter), VLD2x/VLD4x/VST2x/VST4x, LDC/STC. Not: PLD/PLI and the other hints with
 *   Rt = PC, TT, SG, VSCCLRM, register transfers (VMOV, MCRR).
 *   The plugin counts accesses as QEMU performs them; these flags only say where to look, so they
 *   err on the side of "may": a STORE flag on an instruction that stores nothing costs time, not
 *   accuracy. Coprocessor 0-7 encodings are taken as LDC/STC (a CDE coprocessor's VCX would be
 *   flagged too: harmless, as above).
 * MCULAB_INSN_MVE: an MVE vector instruction (what QEMU decodes as MVE): everything in the
 *   0xEF../0xFF.. space, the coprocessor space with coprocessor field 0b111x except the FP system
 *   register VLDR/VSTR, VDUP and the 8/16-bit VMOV lane transfers (the 32-bit ones are FP), and
 *   VCTP. Not: the tail-predicating loop instructions (DLSTP, WLSTP, LETP, LCTP: loop control),
 *   the scalar long shifts (ASRL, LSLL, SQRSHR, ...: general-purpose registers only), FP.
 *
 * Thread-safety: pure function. */
#ifndef MCULAB_QEMU_PLUGIN_THUMB_CLASSIFY_H_
#define MCULAB_QEMU_PLUGIN_THUMB_CLASSIFY_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  MCULAB_INSN_BRANCH = 1u << 0,
  MCULAB_INSN_LOAD = 1u << 1,
  MCULAB_INSN_STORE = 1u << 2,
  MCULAB_INSN_MVE = 1u << 3,
};

/* The class bits of the instruction at `bytes` (`size` bytes readable); 0 when fewer bytes than
 * the instruction's size. */
unsigned mculab_thumb_classify(const uint8_t* bytes, size_t size);

/* The same from halfwords: hw2 is ignored for a 16-bit instruction. */
unsigned mculab_thumb_classify_hw(uint16_t hw1, uint16_t hw2);

/* 1 when hw1 starts a 32-bit instruction. */
int mculab_thumb_is_32bit(uint16_t hw1);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_QEMU_PLUGIN_THUMB_CLASSIFY_H_ */
