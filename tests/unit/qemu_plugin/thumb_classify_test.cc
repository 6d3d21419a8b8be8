// The T32 classifier on encodings produced by the GNU assembler (arm-none-eabi-as 2.40,
// -march=armv8.1-m.main+mve.fp+fp.dp), one test per family, each instruction named by its
// assembly. B = branch, L = may load, S = may store, V = MVE.
#include "thumb_classify.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr unsigned B = MCULAB_INSN_BRANCH;
constexpr unsigned L = MCULAB_INSN_LOAD;
constexpr unsigned S = MCULAB_INSN_STORE;
constexpr unsigned V = MCULAB_INSN_MVE;

struct Case {
  std::uint16_t hw1;
  std::uint16_t hw2;  // unused for 16-bit instructions
  unsigned want;
  const char* text;
};

std::string Describe(unsigned c) {
  std::string s;
  if (c & B) s += "B";
  if (c & L) s += "L";
  if (c & S) s += "S";
  if (c & V) s += "V";
  return s.empty() ? "-" : s;
}

void Check(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const bool wide = mculab_thumb_is_32bit(c.hw1);
    std::uint8_t bytes[4] = {
        static_cast<std::uint8_t>(c.hw1), static_cast<std::uint8_t>(c.hw1 >> 8),
        static_cast<std::uint8_t>(c.hw2), static_cast<std::uint8_t>(c.hw2 >> 8)};
    const unsigned got = mculab_thumb_classify(bytes, wide ? 4 : 2);
    EXPECT_EQ(Describe(got), Describe(c.want)) << c.text;
    EXPECT_EQ(mculab_thumb_classify_hw(c.hw1, c.hw2), got) << c.text;
  }
}

TEST(ThumbClassify, SixteenBitLoadsAndStores) {
  Check({
      {0x4802, 0, L, "ldr r0, [pc, #8]"},
      {0x5888, 0, L, "ldr r0, [r1, r2]"},
      {0x5088, 0, S, "str r0, [r1, r2]"},
      {0x5288, 0, S, "strh r0, [r1, r2]"},
      {0x5e88, 0, L, "ldrsh r0, [r1, r2]"},
      {0x6048, 0, S, "str r0, [r1, #4]"},
      {0x7908, 0, L, "ldrb r0, [r1, #4]"},
      {0x8088, 0, S, "strh r0, [r1, #4]"},
      {0x9801, 0, L, "ldr r0, [sp, #4]"},
      {0x9001, 0, S, "str r0, [sp, #4]"},
      {0xc006, 0, S, "stmia r0!, {r1, r2}"},
      {0xc806, 0, L, "ldmia r0!, {r1, r2}"},
      {0xb510, 0, S, "push {r4, lr}"},
      {0xbc30, 0, L, "pop {r4, r5}"},
  });
}

TEST(ThumbClassify, SixteenBitBranches) {
  Check({
      {0xbd10, 0, L | B, "pop {r4, pc}"},
      {0xb100, 0, B, "cbz r0, label"},
      {0xb900, 0, B, "cbnz r0, label"},
      {0xd0fe, 0, B, "beq.n label"},
      {0xe7fd, 0, B, "b.n label"},
      {0x4770, 0, B, "bx lr"},
      {0x4798, 0, B, "blx r3"},
      {0x4704, 0, B, "bxns r0"},
      {0x469f, 0, B, "mov pc, r3"},
      {0x449f, 0, B, "add pc, r3"},
  });
}

TEST(ThumbClassify, SixteenBitInstructionsThatAreNeither) {
  Check({
      {0x4698, 0, 0, "mov r8, r3"},
      {0x459f, 0, 0, "cmp pc, r3"},
      {0xbf08, 0, 0, "it eq"},
      {0x4608, 0, 0, "mov r0, r1"},
      {0xdf01, 0, 0, "svc 1"},
      {0xde01, 0, 0, "udf #1"},
      {0xbe01, 0, 0, "bkpt 1"},
      {0xbf00, 0, 0, "nop"},
      {0xb672, 0, 0, "cpsid i"},
      {0x3801, 0, 0, "subs r0, #1"},
  });
}

TEST(ThumbClassify, ThirtyTwoBitLoadsAndStoresSingle) {
  Check({
      {0xf8d1, 0x0190, L, "ldr.w r0, [r1, #400]"},
      {0xf8c1, 0x0190, S, "str.w r0, [r1, #400]"},
      {0xf851, 0x0c04, L, "ldr.w r0, [r1, #-4]"},
      {0xf841, 0x0d04, S, "str.w r0, [r1, #-4]!"},
      {0xf811, 0x0012, L, "ldrb.w r0, [r1, r2, lsl #1]"},
      {0xf8a1, 0x0190, S, "strh.w r0, [r1, #400]"},
      {0xf991, 0x0190, L, "ldrsb.w r0, [r1, #400]"},
      {0xf8df, 0x0190, L, "ldr.w r0, [pc, #400]"},
      {0xf85d, 0xfb04, L | B, "ldr.w pc, [sp], #4"},
      {0xf8d1, 0xf004, L | B, "ldr.w pc, [r1, #4]"},
      {0xf891, 0xf004, 0, "pld [r1, #4]"},
      {0xf991, 0xf004, 0, "pli [r1, #4]"},
  });
}

TEST(ThumbClassify, MultipleDualExclusiveAndTableBranch) {
  Check({
      {0xe92d, 0x4ff0, S, "push.w {r4-r11, lr} (stmdb sp!)"},
      {0xe8bd, 0x8ff0, L | B, "pop.w {r4-r11, pc}"},
      {0xe8bd, 0x0ff0, L, "pop.w {r4-r11}"},
      {0xe910, 0x0006, L, "ldmdb r0, {r1, r2}"},
      {0xe920, 0x0006, S, "stmdb r0!, {r1, r2}"},
      {0xe9d2, 0x0102, L, "ldrd r0, r1, [r2, #8]"},
      {0xe9c2, 0x0102, S, "strd r0, r1, [r2, #8]"},
      {0xe851, 0x0f00, L, "ldrex r0, [r1]"},
      {0xe841, 0x0200, S, "strex r2, r0, [r1]"},
      {0xe8d1, 0x0f4f, L, "ldrexb r0, [r1]"},
      {0xe8c1, 0x0f52, S, "strexh r2, r0, [r1]"},
      {0xe8d1, 0x0faf, L, "lda r0, [r1]"},
      {0xe8c1, 0x0faf, S, "stl r0, [r1]"},
      {0xe8d1, 0x0fef, L, "ldaex r0, [r1]"},
      {0xe8c1, 0x0fe2, S, "stlex r2, r0, [r1]"},
      {0xe8d0, 0xf001, L | B, "tbb [r0, r1]"},
      {0xe8d0, 0xf011, L | B, "tbh [r0, r1, lsl #1]"},
      {0xe841, 0xf000, 0, "tt r0, r1"},
      {0xe97f, 0xe97f, 0, "sg"},
  });
}

TEST(ThumbClassify, ThirtyTwoBitBranchesAndControl) {
  Check({
      {0xf7ff, 0xbfb5, B, "b.w label"},
      {0xf43f, 0xafb3, B, "beq.w label"},
      {0xf7ff, 0xffb1, B, "bl label"},
      {0xf3bf, 0x8f5f, 0, "dmb sy"},
      {0xf3bf, 0x8f6f, 0, "isb sy"},
      {0xf380, 0x8810, 0, "msr PRIMASK, r0"},
      {0xf3ef, 0x8010, 0, "mrs r0, PRIMASK"},
      {0xf240, 0x40d2, 0, "movw r0, #1234"},
      {0xeb01, 0x0002, 0, "add.w r0, r1, r2"},
      {0xfb01, 0xf000, 0, "mul.w r0, r1, r0"},
      {0xfb82, 0x0103, 0, "smull r0, r1, r2, r3"},
  });
}

TEST(ThumbClassify, LowOverheadLoopsAndBranchFuture) {
  Check({
      {0xf040, 0xe001, 0, "dls lr, r0"},
      {0xf00f, 0xc005, B, "le lr, label"},
      {0xf02f, 0xc007, B, "le label"},
      {0xf040, 0xc801, B, "wls lr, r0, label"},
      {0xf020, 0xe001, 0, "dlstp.32 lr, r0"},
      {0xf01f, 0xc803, B, "letp lr, label"},
      {0xf000, 0xc801, B, "wlstp.8 lr, r0, label"},
      {0xf00f, 0xe001, 0, "lctp"},
      {0xf022, 0xe801, V, "vctp.32 r2"},
      {0xf5df, 0xeffd, 0, "bf label, label"},
      {0xf4e3, 0xe001, 0, "bfx label, r3"},
      {0xf3ff, 0xcff9, 0, "bfl label, label"},
      {0xf173, 0xe001, 0, "bflx label, r3"},
  });
}

TEST(ThumbClassify, MveLoadsAndStoresOfEveryShape) {
  Check({
      {0xed91, 0x1f00, L | V, "vldrw.u32 q0, [r1]"},
      {0xed91, 0x2e80, L | V, "vldrb.s16 q1, [r1] (widening)"},
      {0xed81, 0x1f04, S | V, "vstrw.32 q0, [r1, #16]"},
      {0xed81, 0x0e80, S | V, "vstrb.16 q0, [r1] (narrowing)"},
      {0xed99, 0x0f00, L | V, "vldrh.s32 q0, [r1]"},
      {0xed89, 0x0f00, S | V, "vstrh.32 q0, [r1]"},
      {0xed91, 0x1e00, L | V, "vldrb.u8 q0, [r1]"},
      {0xeda1, 0x1e03, S | V, "vstrb.8 q0, [r1, #3]!"},
      {0xecb1, 0x1e81, L | V, "vldrh.u16 q0, [r1], #2"},
      {0xec21, 0x1f01, S | V, "vstrw.32 q0, [r1], #-4"},
      {0xfdb9, 0x0f02, L | V, "vldrh.u32 q0, [r1, #4]!"},
      {0xfc91, 0x0f45, L | V, "vldrw.u32 q0, [r1, q2, uxtw #2] (gather)"},
      {0xec81, 0x0f44, S | V, "vstrw.32 q0, [r1, q2] (scatter)"},
      {0xfd92, 0x1e02, L | V, "vldrw.u32 q0, [q1, #8]"},
      {0xfd92, 0x1f01, L | V, "vldrd.u64 q0, [q1, #8]"},
      {0xfd82, 0x1f01, S | V, "vstrd.64 q0, [q1, #8]"},
      {0xfc91, 0x0fd4, L | V, "vldrd.u64 q0, [r1, q2]"},
      {0xfc91, 0x0e82, L | V, "vldrb.u16 q0, [r1, q1]"},
      {0xfd22, 0x1e02, S | V, "vstrw.32 q0, [q1, #-8]!"},
      {0xfc90, 0x1f00, L | V, "vld20.32 {q0, q1}, [r0]"},
      {0xfcb0, 0x1e01, L | V, "vld40.8 {q0-q3}, [r0]!"},
      {0xfcb0, 0x1ea0, L | V, "vld21.16 {q0, q1}, [r0]!"},
      {0xfc80, 0x1e80, S | V, "vst20.16 {q0, q1}, [r0]"},
      {0xfc80, 0x1f01, S | V, "vst40.32 {q0-q3}, [r0]"},
      {0xfca0, 0x1e61, S | V, "vst43.8 {q0-q3}, [r0]!"},
  });
}

TEST(ThumbClassify, MveDataProcessingAndPredication) {
  Check({
      {0xef20, 0x0840, V, "vadd.i32 q0, q0, q0"},
      {0xef02, 0x0d44, V, "vadd.f32 q0, q1, q2"},
      {0xee03, 0x0e42, V, "vmla.s8 q0, q1, r2"},
      {0xeef2, 0x0f04, V, "vmlav.s8 r0, q1, q2"},
      {0xeef2, 0x0e24, V, "vmlava.s16 r0, q1, q2"},
      {0xef80, 0x0050, V, "vmov.i32 q0, #0"},
      {0xffb0, 0x05c2, V, "vmvn q0, q1"},
      {0xee39, 0x1e60, V, "vshl.s32 q0, r0"},
      {0xef22, 0x0b44, V, "vqdmulh.s32 q0, q1, q2"},
      {0xeee2, 0x0f02, V, "vmaxv.s8 r0, q1"},
      {0xfe71, 0x0f4d, V, "vpst"},
      {0xfe61, 0x1f02, V, "vpt.s32 ge, q0, q1"},
      {0xfe21, 0x0f02, V, "vcmp.i32 eq, q0, q1"},
      {0xfe32, 0x0e05, V, "vcmul.f32 q0, q1, q2, #90"},
      {0xffba, 0x0442, V, "vrintn.f32 q0, q1"},
      {0xef02, 0x0c54, V, "vfma.f32 q0, q1, q2"},
  });
}

TEST(ThumbClassify, LaneTransfersAreMveExceptTheThirtyTwoBitOnes) {
  Check({
      {0xeea0, 0x1b10, V, "vdup.32 q0, r1"},
      {0xee40, 0x1b30, V, "vmov.8 q0[1], r1"},
      {0xee20, 0x1b70, V, "vmov.16 q0[3], r1"},
      {0xee90, 0x0b70, V, "vmov.u16 r0, q0[1]"},
      {0xee70, 0x0b30, V, "vmov.s8 r0, q0[5]"},
      {0xee20, 0x1b10, 0, "vmov.32 q0[1], r1 (FP: VMOV to a D register half)"},
      {0xee30, 0x0b10, 0, "vmov.32 r0, q0[1]"},
      {0xec01, 0x0f00, V, "vmov r0, r1, q0[2], q0[0]"},
      {0xec11, 0x0f00, V, "vmov q0[2], q0[0], r0, r1"},
      {0xec51, 0x0b15, 0, "vmov r0, r1, d5"},
      {0xec41, 0x0b15, 0, "vmov d5, r0, r1"},
  });
}

TEST(ThumbClassify, FloatingPointAndSystemRegisterAccessIsNotMve) {
  Check({
      {0xed91, 0x0a01, L, "vldr s0, [r1, #4]"},
      {0xed81, 0x0b02, S, "vstr d0, [r1, #8]"},
      {0xecb0, 0x0a04, L, "vldmia r0!, {s0-s3}"},
      {0xed2d, 0x8b04, S, "vpush {d8-d9}"},
      {0xed2d, 0x8a02, S, "vpush {s16-s17}"},
      {0xecbd, 0x8b02, L, "vpop {d8}"},
      {0xed91, 0x0901, L, "vldr.16 s0, [r1, #2]"},
      {0xed81, 0x0901, S, "vstr.16 s0, [r1, #2]"},
      {0xed90, 0x2f80, L, "vldr FPSCR, [r0]"},
      {0xed80, 0x4f80, S, "vstr FPSCR_nzcvqc, [r0]"},
      {0xedd0, 0x8f80, L, "vldr VPR, [r0]"},
      {0xedc0, 0xaf80, S, "vstr P0, [r0]"},
      {0xec20, 0x0a00, S, "vlstm r0"},
      {0xec30, 0x0a00, L, "vlldm r0"},
      {0xec9f, 0x0a04, 0, "vscclrm {s0-s3, VPR}"},
      {0xee30, 0x0a81, 0, "vadd.f32 s0, s1, s2"},
      {0xee00, 0x0a10, 0, "vmov s0, r0"},
      {0xeef1, 0x0a10, 0, "vmrs r0, fpscr"},
      {0xeee1, 0x0a10, 0, "vmsr fpscr, r0"},
      {0xfeb0, 0x0a60, 0, "vmovx.f16 s0, s1"},
      {0xfe00, 0x0a81, 0, "vseleq.f32 s0, s1, s2"},
      {0xeebd, 0x0ac0, 0, "vcvt.s32.f32 s0, s0"},
  });
}

TEST(ThumbClassify, ScalarLongShiftsAndOtherCoprocessorsAreNotMve) {
  Check({
      {0xea50, 0x01af, 0, "asrl r0, r1, #2"},
      {0xea50, 0x2f2d, 0, "sqrshr r0, r2"},
      {0xea51, 0x8002, 0, "csel r0, r1, r2, eq"},
      {0xee00, 0x0010, 0, "mcr p0, 0, r0, c0, c0, 0"},
      {0xee10, 0x0110, 0, "mrc p1, 0, r0, c0, c0, 0"},
      {0xec41, 0x0200, 0, "mcrr p2, 0, r0, r1, c0"},
      {0xed91, 0x0300, L, "ldc p3, c0, [r1]"},
      {0xed81, 0x0300, S, "stc p3, c0, [r1]"},
  });
}

TEST(ThumbClassify, ThirtyTwoBitInstructionCutShortIsNothing) {
  const std::uint8_t ldr_w[] = {0xd1, 0xf8, 0x90, 0x01};
  EXPECT_EQ(mculab_thumb_classify(ldr_w, 2), 0u);
  EXPECT_EQ(mculab_thumb_classify(ldr_w, 4), static_cast<unsigned>(L));
}

TEST(ThumbClassify, BytesQemuReadAheadAreIgnored) {
  // QEMU 7.2 hands the plugin `strd r9, sl, [sp, #12]` followed by the next instruction's first
  // halfword (`ldr r4, [sp, #40]`): 6 bytes. Seen in the runner's conv2d kernel.
  const std::uint8_t strd[] = {0xcd, 0xe9, 0x03, 0x9a, 0x0a, 0x9c};
  EXPECT_EQ(mculab_thumb_classify(strd, 6), static_cast<unsigned>(S));
  const std::uint8_t ldr16[] = {0x02, 0x48, 0x2d, 0xe9};  // ldr r0, [pc, #8] + a halfword
  EXPECT_EQ(mculab_thumb_classify(ldr16, 4), static_cast<unsigned>(L));
}

}  // namespace
