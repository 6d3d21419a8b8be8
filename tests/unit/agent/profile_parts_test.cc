// The agent's counter and profile parts without a board: the ELF section reader (one test per way
// the bytes can be wrong) and the QEMU plugin's output parser.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "agent/boards/plugin_counts.h"
#include "agent/runner/elf_memory.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A little-endian ELF32 image with the given sections (name, type, flags, size); section 0 is the
// null section and the last is .shstrtab.
struct Sec {
  std::string name;
  std::uint32_t type, flags, size;
};

void Put(std::vector<std::uint8_t>& b, std::size_t off, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[off + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::vector<std::uint8_t> Elf32(const std::vector<Sec>& secs) {
  std::string strtab(1, '\0');
  std::vector<std::uint32_t> names;
  for (const auto& s : secs) {
    names.push_back(static_cast<std::uint32_t>(strtab.size()));
    strtab += s.name + '\0';
  }
  const std::uint32_t shstr_name = static_cast<std::uint32_t>(strtab.size());
  strtab += std::string(".shstrtab") + '\0';
  const std::size_t strtab_off = 52;
  const std::size_t shoff = (strtab_off + strtab.size() + 3) & ~std::size_t{3};
  const std::size_t shnum = secs.size() + 2;
  std::vector<std::uint8_t> b(shoff + shnum * 40, 0);
  std::memcpy(b.data(),
              "\x7f"
              "ELF",
              4);
  b[4] = 1;  // ELFCLASS32
  b[5] = 1;  // little-endian
  b[6] = 1;
  Put(b, 16, 2, 2);   // ET_EXEC
  Put(b, 18, 40, 2);  // EM_ARM
  Put(b, 32, shoff, 4);
  Put(b, 46, 40, 2);
  Put(b, 48, shnum, 2);
  Put(b, 50, shnum - 1, 2);
  std::memcpy(b.data() + strtab_off, strtab.data(), strtab.size());
  for (std::size_t i = 0; i < secs.size(); ++i) {
    const std::size_t h = shoff + (i + 1) * 40;
    Put(b, h, names[i], 4);
    Put(b, h + 4, secs[i].type, 4);
    Put(b, h + 8, secs[i].flags, 4);
    Put(b, h + 16, secs[i].type == 8 ? 0 : 52, 4);  // PROGBITS point at the start (in bounds)
    Put(b, h + 20, secs[i].size, 4);
  }
  const std::size_t h = shoff + (shnum - 1) * 40;
  Put(b, h, shstr_name, 4);
  Put(b, h + 4, 3, 4);  // SHT_STRTAB
  Put(b, h + 16, strtab_off, 4);
  Put(b, h + 20, strtab.size(), 4);
  return b;
}

// The an547 runner's shape: code, rodata, an exidx table, data, bss, a stack reservation, and a
// non-allocated comment.
std::vector<Sec> RunnerSections() {
  return {{".vectors", 1, 6, 8},   {".text", 1, 6, 20},
          {".rodata", 1, 2, 12},   {".ARM.exidx", 0x70000001u, 0x82, 4},
          {".data", 1, 3, 16},     {".bss", 8, 3, 1000},
          {".stack", 8, 3, 32768}, {".comment", 1, 0x30, 10}};
}

std::uint64_t Get(const std::vector<MemoryItem>& items, const std::string& category) {
  for (const auto& i : items)
    if (i.category == category) return i.bytes;
  ADD_FAILURE() << "no " << category;
  return 0;
}

TEST(ElfMemory, SplitsSectionsIntoFlashAndRam) {
  auto elf = ReadElfSections(Elf32(RunnerSections()));
  ASSERT_TRUE(elf.ok()) << elf.error().message;
  EXPECT_FALSE(elf->is64);
  EXPECT_EQ(elf->machine, 40);
  const auto m = MemoryFootprint(*elf);
  EXPECT_EQ(Get(m, "flash.text"), 28u);
  EXPECT_EQ(Get(m, "flash.rodata"), 16u);  // .rodata + .ARM.exidx
  EXPECT_EQ(Get(m, "flash.data"), 16u);
  EXPECT_EQ(Get(m, "flash.total"), 60u);
  EXPECT_EQ(Get(m, "ram.data"), 16u);
  EXPECT_EQ(Get(m, "ram.bss"), 1000u);
  EXPECT_EQ(Get(m, "ram.stack"), 32768u);
  EXPECT_EQ(Get(m, "ram.heap"), 0u);
  EXPECT_EQ(Get(m, "ram.total"), 16u + 1000u + 32768u);
}

TEST(ElfMemory, BadMagic) {
  auto b = Elf32(RunnerSections());
  b[1] = 'X';
  auto r = ReadElfSections(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("magic"));
}

TEST(ElfMemory, TruncatedHeader) {
  auto b = Elf32(RunnerSections());
  b.resize(30);
  EXPECT_FALSE(ReadElfSections(b).ok());
}

TEST(ElfMemory, BigEndianIsRefused) {
  auto b = Elf32(RunnerSections());
  b[5] = 2;
  auto r = ReadElfSections(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("big-endian"));
}

// Found by fuzzing: a name table of type NOBITS has no bytes in the file, whatever its offset says.
TEST(ElfMemory, NameTableWithoutBytesInTheFile) {
  auto b = Elf32(RunnerSections());
  const std::size_t shoff = b[32] | (b[33] << 8) | (b[34] << 16) | (b[35] << 24);
  const std::size_t shnum = b[48] | (b[49] << 8);
  const std::size_t strtab_header = shoff + (shnum - 1) * 40;
  Put(b, strtab_header + 4, 8, 4);            // SHT_NOBITS
  Put(b, strtab_header + 16, 0x7fff0000, 4);  // an offset far past the end
  auto r = ReadElfSections(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("section name table"));
}

TEST(ElfMemory, SectionTableBeyondTheFile) {
  auto b = Elf32(RunnerSections());
  Put(b, 32, b.size() + 100, 4);
  auto r = ReadElfSections(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("beyond"));
}

TEST(ElfMemory, TooManySectionHeaders) {
  auto b = Elf32(RunnerSections());
  Put(b, 48, 0xFFF0, 2);
  auto r = ReadElfSections(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("do not fit"));
}

TEST(ElfMemory, TruncatedFileCutsASection) {
  auto b = Elf32(RunnerSections());
  // Make .text claim more bytes than the file has.
  const std::size_t shoff = b[32] | (b[33] << 8);
  Put(b, shoff + 2 * 40 + 20, 1u << 30, 4);
  auto r = ReadElfSections(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("runs past"));
}

TEST(ElfMemory, NameTableIndexOutOfRange) {
  auto b = Elf32(RunnerSections());
  Put(b, 50, 200, 2);
  auto r = ReadElfSections(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("name table index"));
}

TEST(ElfMemory, SectionNameOutsideTheNameTable) {
  auto b = Elf32(RunnerSections());
  const std::size_t shoff = b[32] | (b[33] << 8);
  Put(b, shoff + 1 * 40, 5000, 4);
  auto r = ReadElfSections(b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("name"));
}

TEST(ElfMemory, EmptyAndGarbageFiles) {
  EXPECT_FALSE(ReadElfSections({}).ok());
  std::vector<std::uint8_t> junk(100, 0xAB);
  EXPECT_FALSE(ReadElfSections(junk).ok());
}

TEST(ElfMemory, MissingFileNamesIt) {
  auto r = ReadElfMemory("/nonexistent/runner.elf");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/runner.elf"));
}

// ---- the QEMU plugin's output ----

TEST(PluginCounts, ParsesSelectedColumnsAndRegions) {
  auto c = ParsePluginCounts(
      "# mculab-qemu-counters 1 mem=inline markers=0x60ff0000\n"
      "# kind case index instructions stores\n"
      "op 0 0 90 3\n"
      "iter 0 0 100 5\n"
      "op 0 0 80 1\n"
      "iter 0 1 100 5\n"
      "empty 0 0 66 7\n"
      "# end regions=5 unclosed=0 unmatched=0\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_THAT(c->columns, ElementsAre("instructions", "stores"));
  ASSERT_EQ(c->iterations.size(), 2u);
  ASSERT_NE(c->Iteration(0, 1), nullptr);
  EXPECT_THAT(*c->Iteration(0, 1), ElementsAre(100u, 5u));
  EXPECT_EQ(c->Iteration(1, 0), nullptr);
  EXPECT_EQ(c->empties.size(), 1u);
  EXPECT_TRUE(c->ended);
  const auto ops = AggregateOps(*c);
  ASSERT_EQ(ops.size(), 1u);
  const OpAggregate& a = ops.at({0, 0});
  EXPECT_EQ(a.count, 2u);
  EXPECT_THAT(a.sum, ElementsAre(170u, 4u));
  EXPECT_THAT(a.min, ElementsAre(80u, 1u));
  EXPECT_THAT(a.max, ElementsAre(90u, 3u));
}

TEST(PluginCounts, AllFiveColumnsByDefault) {
  auto c = ParsePluginCounts(
      "# kind case index instructions loads stores branches mve_instructions\n"
      "iter 2 0 1296389 428185 60817 254782 0\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->columns.size(), 5u);
  EXPECT_FALSE(c->ended);  // QEMU did not exit normally
}

TEST(PluginCounts, LineWithTooFewFieldsIsAnError) {
  auto c = ParsePluginCounts("# kind case index instructions loads\niter 0 0 5\n");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("line 2"));
}

TEST(PluginCounts, NonNumericCountIsAnError) {
  EXPECT_FALSE(ParsePluginCounts("# kind case index instructions\niter 0 0 12x\n").ok());
}

TEST(PluginCounts, RegionBeforeHeaderIsAnError) {
  EXPECT_FALSE(ParsePluginCounts("iter 0 0 5\n").ok());
}

TEST(PluginCounts, EmptyOutputIsAnError) { EXPECT_FALSE(ParsePluginCounts("").ok()); }

TEST(PluginCounts, UnknownRegionKindIsAnError) {
  EXPECT_FALSE(ParsePluginCounts("# kind case index instructions\nloop 0 0 5\n").ok());
}

TEST(QemuPlugin, ArgumentNamesOutputAndEventsEscapingCommas) {
  EXPECT_EQ(QemuPluginArg("/lib/p.so", "/tmp/a,b/c.txt", {"instructions", "loads"}),
            "/lib/p.so,out=/tmp/a,,b/c.txt,events=instructions+loads");
  EXPECT_EQ(QemuPluginArg("/lib/p.so", "/o", {}), "/lib/p.so,out=/o");
}

// The runner's marker region goes to the plugin; one the plugin cannot watch (not 64 KiB aligned:
// a port that folds its markers) leaves the plugin's default.
TEST(QemuPlugin, ArgumentNamesTheRunnersMarkerRegion) {
  EXPECT_EQ(QemuPluginArg("/lib/p.so", "/o", {"instructions"}, 0x60100000u),
            "/lib/p.so,out=/o,markers=0x60100000,events=instructions");
  EXPECT_EQ(QemuPluginArg("/lib/p.so", "/o", {}, 0x2000ffc0u), "/lib/p.so,out=/o");
}

}  // namespace
}  // namespace mculab::agent
