// Admission control against the registered boards (server/domain/admission.h): each way a submit
// can ask for what no board has is refused, naming what the lab has.
#include "server/domain/admission.h"

#include <gtest/gtest.h>

namespace mculab::server {
namespace {

Board MakeBoard(std::string name, std::string kind, std::map<std::string, std::string> tags = {},
                std::uint64_t ram = 0) {
  Board b;
  b.name = std::move(name);
  b.kind = std::move(kind);
  b.tags = std::move(tags);
  b.ram_bytes = ram;
  return b;
}

std::map<std::string, Board> Lab() {
  std::map<std::string, Board> boards;
  for (Board b : {MakeBoard("an547-0", "corstone300-qemu", {{"cpu", "cortex-m55"}}, 4 << 20),
                  MakeBoard("host-0", "host", {{"cpu", "x86"}}, 0),
                  MakeBoard("host-1", "host", {{"cpu", "x86"}, {"os", "linux"}}, 0)}) {
    boards[b.name] = b;
  }
  return boards;
}

std::map<std::string, BoardUnits> Units() {
  BoardUnits u;
  u.board = "an547-0";
  u.units.push_back(CounterUnit{"cortex-m55-pmu", 4, {"instructions", "loads"}, true});
  return {{u.board, u}};
}

AdmissionRequest Request(std::string kind, std::string board = {}) {
  AdmissionRequest r;
  r.kind = std::move(kind);
  r.board = std::move(board);
  r.op = "fully_connected_s8";
  return r;
}

TEST(Admission, AKindSomeBoardHasIsAdmittedAsThatKind) {
  auto kind = AdmitToBoards(Request("host"), Lab(), Units());
  ASSERT_TRUE(kind.ok()) << kind.error().message;
  EXPECT_EQ(*kind, "host");
}

TEST(Admission, ANamedBoardGivesTheJobItsKind) {
  auto kind = AdmitToBoards(Request("", "an547-0"), Lab(), Units());
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, "corstone300-qemu");
}

TEST(Admission, AnUnknownKindIsRefusedListingTheKindsAndTheirBoardCounts) {
  auto kind = AdmitToBoards(Request("nucleo-h743"), Lab(), Units());
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(kind.error().message,
            "no board of kind 'nucleo-h743'; the lab has: corstone300-qemu (1 board), host (2 "
            "boards)");
}

TEST(Admission, AnUnknownBoardIsRefusedListingTheBoards) {
  auto kind = AdmitToBoards(Request("", "host-9"), Lab(), Units());
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().message, "no board named 'host-9'; the lab has: an547-0, host-0, host-1");
}

TEST(Admission, ABoardOfAnotherKindThanAskedIsRefused) {
  auto kind = AdmitToBoards(Request("host", "an547-0"), Lab(), Units());
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().message, "board an547-0 is of kind 'corstone300-qemu', not 'host'");
}

TEST(Admission, EventsABoardCannotCountAreAnInvalidArgumentNamingTheBoard) {
  AdmissionRequest r = Request("corstone300-qemu");
  r.events = {"instructions"};
  EXPECT_TRUE(AdmitToBoards(r, Lab(), Units()).ok());
  r.events = {"npu_active"};
  auto kind = AdmitToBoards(r, Lab(), Units());
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(kind.error().message.rfind("board an547-0: ", 0), 0u) << kind.error().message;
}

TEST(Admission, TagsNoCandidateHasAreRefusedNamingTheMissingOnesAndTheBoardsTags) {
  AdmissionRequest r = Request("host");
  r.tags = {{"os", "linux"}};
  EXPECT_TRUE(AdmitToBoards(r, Lab(), Units()).ok());
  r.tags = {{"cpu", "x86"}, {"gpu", "none"}};
  auto kind = AdmitToBoards(r, Lab(), Units());
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().message,
            "no board of kind host has tag gpu=none; its boards have: host-0 {cpu=x86}, host-1 "
            "{cpu=x86, os=linux}; drop the --tag or ask for tags a board has");
  r = Request("", "host-0");
  r.tags = {{"os", "linux"}};
  kind = AdmitToBoards(r, Lab(), Units());
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().message,
            "board host-0 does not have tag os=linux; its tags are {cpu=x86}");
}

TEST(Admission, TagsEachOnSomeBoardButNotAllOnOneAreAllNamed) {
  std::map<std::string, Board> boards = {{"a", MakeBoard("a", "k", {{"x", "1"}})},
                                         {"b", MakeBoard("b", "k", {{"y", "2"}})}};
  AdmissionRequest r = Request("k");
  r.tags = {{"x", "1"}, {"y", "2"}};
  auto kind = AdmitToBoards(r, boards, {});
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().message.find("has tags x=1, y=2;"), std::string::npos)
      << kind.error().message;
}

TEST(Admission, ACaseLargerThanEveryCandidatesRamIsRefusedWithTheNumbers) {
  AdmissionRequest r = Request("corstone300-qemu");
  const std::vector<CaseSpec> small = {{0, {1, 64, 64}}};
  EXPECT_TRUE(AdmitWorkloadMemory(r, small, Lab()).ok());
  const std::vector<CaseSpec> big = {{0, {1, 8, 8}}, {7, {1, 4096, 4096}}};
  Status s = AdmitWorkloadMemory(r, big, Lab());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(s.error().message,
            "case 7 needs about " + std::to_string(WorkloadTensorBytes(r.op, big[1].params)) +
                " bytes of RAM for its tensors, more than any board it could run on has: an547-0 "
                "(4194304 bytes); use smaller cases or a board with more RAM");
}

TEST(Admission, BoardsThatDoNotReportTheirRamAreNotChecked) {
  const std::vector<CaseSpec> big = {{0, {1, 4096, 4096}}};
  EXPECT_TRUE(AdmitWorkloadMemory(Request("host"), big, Lab()).ok());
}

TEST(Admission, ACaseBeyondWhatARunnerCanAddressIsAnInvalidArgumentWhateverTheBoards) {
  const std::vector<CaseSpec> huge = {{3, {1, 1 << 30, 1 << 30}}};
  Status s = AdmitWorkloadMemory(Request("host"), huge, Lab());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message.find("case 3 needs about "), std::string::npos);
  EXPECT_NE(s.error().message.find("more than a runner can address (4 GiB)"), std::string::npos);
}

// The code a job measures: a commit of hex digits, a branch without control characters, a link
// the page may follow (http or https only: never javascript:).
TEST(ValidateCodeRefs, TakesHexCommitsPlainBranchesAndWebLinks) {
  EXPECT_TRUE(ValidateCodeRefs("", "", "").ok());
  EXPECT_TRUE(ValidateCodeRefs("1a2B", "feature/x-1", "https://ci.example/j/1").ok());
  EXPECT_TRUE(ValidateCodeRefs(std::string(64, 'f'), "main", "http://x").ok());
  for (const char* bad : {"abc", "xyz123", "1a2b 3c"}) {
    auto s = ValidateCodeRefs(bad, "", "");
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message.find("commit must be 4 to 64 hex digits"), std::string::npos);
  }
  EXPECT_FALSE(ValidateCodeRefs(std::string(65, 'a'), "", "").ok());
  EXPECT_FALSE(ValidateCodeRefs("", "a\nb", "").ok());
  EXPECT_FALSE(ValidateCodeRefs("", std::string(256, 'b'), "").ok());
  for (const char* bad : {"javascript:alert(1)", "ftp://x", "//x", "https://a\tb"}) {
    auto s = ValidateCodeRefs("", "", bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message.find("url must be an http:// or https:// link"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace mculab::server
