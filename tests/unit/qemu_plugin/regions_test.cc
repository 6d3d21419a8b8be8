// The counting plugin's region bookkeeping (regions.h): what each closed region's line says.
#include "regions.h"

#include <gtest/gtest.h>

#include <string>

namespace {

mculab_qc_counts At(std::uint64_t insns, std::uint64_t loads = 0, std::uint64_t stores = 0,
                    std::uint64_t branches = 0, std::uint64_t mve = 0) {
  return mculab_qc_counts{{insns, loads, stores, branches, mve}};
}

std::uint32_t Word(std::uint32_t kind, std::uint32_t index) { return (kind << 12) | index; }

class Regions : public ::testing::Test {
 protected:
  void SetUp() override { mculab_qc_init(&t_); }
  void Begin(std::uint32_t word, const mculab_qc_counts& c) { mculab_qc_begin(&t_, word, &c); }
  std::string End(std::uint32_t word, const mculab_qc_counts& c) {
    char line[MCULAB_QC_LINE_MAX];
    unsigned kind = 99;
    const std::size_t n = mculab_qc_end(&t_, word, &c, line, sizeof line, &kind);
    return n == 0 ? "" : std::string(line, n);
  }
  mculab_qc_tracker t_;
};

TEST_F(Regions, ALineIsTheDifferenceOfTheTwoSnapshots) {
  Begin(Word(0, 3), At(100, 10, 5, 2, 1));
  EXPECT_EQ(End(Word(0, 3), At(1100, 310, 55, 102, 41)), "iter 3 0 1000 300 50 100 40\n");
}

TEST_F(Regions, IterationsOfACaseAreNumberedFromZeroAndRestartWithTheNextCase) {
  for (int i = 0; i < 3; ++i) {
    Begin(Word(0, 7), At(0));
    EXPECT_EQ(End(Word(0, 7), At(5)), "iter 7 " + std::to_string(i) + " 5 0 0 0 0\n");
  }
  Begin(Word(1, 7), At(0));
  EXPECT_EQ(End(Word(1, 7), At(2)), "empty 7 0 2 0 0 0 0\n");
  Begin(Word(1, 7), At(0));
  EXPECT_EQ(End(Word(1, 7), At(2)), "empty 7 1 2 0 0 0 0\n");
  Begin(Word(0, 8), At(0));
  EXPECT_EQ(End(Word(0, 8), At(9)), "iter 8 0 9 0 0 0 0\n");
}

TEST_F(Regions, OpsInsideAnIterationNameTheCaseAndTheirOpIndex) {
  Begin(Word(0, 2), At(0));
  Begin(Word(2, 40), At(10));
  Begin(Word(2, 41), At(12));  // nested
  EXPECT_EQ(End(Word(2, 41), At(20)), "op 2 41 8 0 0 0 0\n");
  EXPECT_EQ(End(Word(2, 40), At(30)), "op 2 40 20 0 0 0 0\n");
  EXPECT_EQ(End(Word(0, 2), At(35)), "iter 2 0 35 0 0 0 0\n");
  EXPECT_EQ(t_.regions, 3u);
}

TEST_F(Regions, AnEndWithoutABeginIsCountedAndWritesNothing) {
  EXPECT_EQ(End(Word(0, 1), At(5)), "");
  EXPECT_EQ(t_.unmatched, 1u);
}

TEST_F(Regions, AnOuterEndClosesInnerRegionsLeftOpen) {
  Begin(Word(0, 1), At(0));
  Begin(Word(2, 5), At(1));  // never ended
  EXPECT_EQ(End(Word(0, 1), At(9)), "iter 1 0 9 0 0 0 0\n");
  EXPECT_EQ(t_.unclosed, 1u);
  EXPECT_EQ(t_.depth, 0u);
}

TEST_F(Regions, BeginsBeyondTheDepthAreDroppedNotCrashing) {
  for (unsigned i = 0; i < MCULAB_QC_MAX_DEPTH + 2; ++i) Begin(Word(2, i), At(i));
  EXPECT_EQ(t_.depth, MCULAB_QC_MAX_DEPTH);
  EXPECT_EQ(t_.unclosed, 2u);
}

}  // namespace
