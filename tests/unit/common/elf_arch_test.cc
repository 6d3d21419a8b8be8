#include "common/elf_arch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace mculab {
namespace {

using ::testing::HasSubstr;

std::vector<std::uint8_t> Header(std::uint8_t cls, std::uint8_t data, std::uint16_t machine) {
  std::vector<std::uint8_t> h(64, 0);
  h[0] = 0x7f;
  h[1] = 'E';
  h[2] = 'L';
  h[3] = 'F';
  h[4] = cls;
  h[5] = data;
  h[6] = 1;
  const bool le = data == 1;
  h[16] = le ? 2 : 0;  // ET_EXEC
  h[17] = le ? 0 : 2;
  h[18] = le ? static_cast<std::uint8_t>(machine & 0xff) : static_cast<std::uint8_t>(machine >> 8);
  h[19] = le ? static_cast<std::uint8_t>(machine >> 8) : static_cast<std::uint8_t>(machine & 0xff);
  return h;
}

TEST(ElfArchTest, RecognisesTheLabsArchitectures) {
  auto arm = ReadElfHeader(Header(1, 1, 40));
  ASSERT_TRUE(arm.ok());
  EXPECT_EQ(arm->bits, 32);
  EXPECT_EQ(arm->type, 2);
  EXPECT_EQ(ElfArch(*arm), "arm32");
  EXPECT_EQ(DescribeElf(*arm), "ARM 32-bit");
  EXPECT_EQ(ElfArch(*ReadElfHeader(Header(2, 1, 62))), "x86_64");
  EXPECT_EQ(ElfArch(*ReadElfHeader(Header(2, 1, 183))), "aarch64");
  EXPECT_EQ(ElfArch(*ReadElfHeader(Header(1, 1, 243))), std::nullopt);  // RISC-V: no board yet
  EXPECT_EQ(ElfArch(*ReadElfHeader(Header(1, 2, 40))), std::nullopt);   // big-endian ARM
}

TEST(ElfArchTest, NotAnElfSaysWhatItLooksLike) {
  const std::string script = "#!/bin/sh\necho not a runner, but long enough\n";
  auto s = ReadElfHeader(std::span<const std::uint8_t>(
      reinterpret_cast<const std::uint8_t*>(script.data()), script.size()));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message, HasSubstr("not an ELF file (it is a script"));
  std::vector<std::uint8_t> tiny = {0x7f, 'E', 'L'};
  EXPECT_THAT(ReadElfHeader(tiny).error().message, HasSubstr("only 3 bytes"));
  auto bad_class = Header(3, 1, 40);
  EXPECT_THAT(ReadElfHeader(bad_class).error().message, HasSubstr("neither 32- nor 64-bit"));
}

TEST(ElfArchTest, BoardsArchitectureFromTheCpuTag) {
  EXPECT_EQ(ArchOfCpu("cortex-m55"), "arm32");
  EXPECT_EQ(ArchOfCpu("cortex-m7"), "arm32");
  EXPECT_EQ(ArchOfCpu("x86_64"), "x86_64");
  EXPECT_EQ(ArchOfCpu("arm64"), "aarch64");
  EXPECT_EQ(ArchOfCpu("z80"), std::nullopt);
}

TEST(ElfArchTest, AMismatchNamesBothSidesAndWhatIsNeeded) {
  auto x86 = *ReadElfHeader(Header(2, 1, 62));
  EXPECT_TRUE(CheckElfRunsOn(x86, "x86_64", "board host-0").ok());
  Status s = CheckElfRunsOn(x86, "arm32", "board an547-0");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(s.error().message,
            "the firmware is an ELF for x86-64, but board an547-0 is ARM 32-bit (Cortex-M) (an ARM "
            "32-bit ELF needed)");
}

}  // namespace
}  // namespace mculab
