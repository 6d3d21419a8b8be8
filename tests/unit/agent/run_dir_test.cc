// RunDir: the agent reads and removes a run's folder without following what a runner made there.
#include "agent/io/run_dir.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class RunDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = RunDir::Create("mculab-run-dir-test-");
    ASSERT_TRUE(d.ok()) << d.error().message;
    dir_ = std::move(*d);
    auto o = TempDir::Create("mculab-run-dir-outside-");
    ASSERT_TRUE(o.ok());
    outside_ = std::move(*o);
    secret_ = outside_->path() / "secret";
    ASSERT_TRUE(WriteFile(secret_, "agent's secret").ok());
  }
  std::unique_ptr<RunDir> dir_;
  std::unique_ptr<TempDir> outside_;
  fs::path secret_;
};

TEST_F(RunDirTest, ReadsAPlainFileTheRunWrote) {
  ASSERT_TRUE(WriteFile(dir_->path() / "counts.txt", "insn 1 2 3\n").ok());
  auto text = dir_->ReadFile("counts.txt", 1024);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, "insn 1 2 3\n");
}

TEST_F(RunDirTest, AMissingFileIsNotFound) {
  auto text = dir_->ReadFile("counts.txt", 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ErrorCode::kNotFound);
}

TEST_F(RunDirTest, ASymbolicLinkIsNeverFollowed) {
  fs::create_symlink(secret_, dir_->path() / "counts.txt");
  auto text = dir_->ReadFile("counts.txt", 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(text.error().message, HasSubstr("symbolic link"));
}

TEST_F(RunDirTest, AHardLinkToAnotherFileIsRefused) {
  ASSERT_EQ(::link(secret_.c_str(), (dir_->path() / "counts.txt").c_str()), 0);
  auto text = dir_->ReadFile("counts.txt", 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(text.error().message, Not(HasSubstr("agent's secret")));
}

TEST_F(RunDirTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_->path() / "counts.txt").c_str(), 0644), 0);
  auto text = dir_->ReadFile("counts.txt", 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(RunDirTest, AFileOverTheLimitIsRefused) {
  ASSERT_TRUE(WriteFile(dir_->path() / "counts.txt", std::string(2048, 'x')).ok());
  auto text = dir_->ReadFile("counts.txt", 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ErrorCode::kResourceExhausted);
}

TEST_F(RunDirTest, NamesThatLeaveTheFolderAreRefused) {
  for (const char* name : {"../secret", "", ".", "..", "a/b"}) {
    EXPECT_FALSE(dir_->ReadFile(name, 1024).ok()) << name;
    EXPECT_FALSE(dir_->CreateFile(name, "x").ok()) << name;
  }
}

TEST_F(RunDirTest, CreateFileRefusesANameThatExistsAndRewritesThroughItsDescriptor) {
  fs::create_symlink(secret_, dir_->path() / "workload.bin");
  EXPECT_FALSE(dir_->CreateFile("workload.bin", "x").ok());
  fs::remove(dir_->path() / "workload.bin");
  auto fd = dir_->CreateFile("workload.bin", "first, longer");
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  // The runner swaps the name for a link: the rewrite still goes to the file the agent made.
  fs::rename(dir_->path() / "workload.bin", dir_->path() / "moved.bin");
  fs::create_symlink(secret_, dir_->path() / "workload.bin");
  ASSERT_TRUE(Rewrite(fd->get(), "second").ok());
  EXPECT_EQ(*ReadFile(secret_), "agent's secret");
  EXPECT_EQ(*ReadFile(dir_->path() / "moved.bin"), "second");
}

TEST_F(RunDirTest, TheCaptureHasNoNameAndReadsBackItsTail) {
  auto fd = dir_->CreateCapture();
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  const std::string text = std::string(3000, 'a') + "the end\n\n";
  ASSERT_EQ(::write(fd->get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  const std::string tail = ReadTail(fd->get(), 100);
  EXPECT_EQ(tail.size(), 98u);
  EXPECT_THAT(tail, ::testing::EndsWith("the end"));
  EXPECT_TRUE(fs::is_empty(dir_->path()));
}

TEST_F(RunDirTest, RemovalFollowsNoLink) {
  const fs::path work = dir_->path();
  fs::create_directory(work / "sub");
  fs::create_symlink(outside_->path(), work / "sub" / "link-to-outside");
  fs::create_symlink(secret_, work / "link-to-secret");
  const fs::path root = work.parent_path();
  dir_.reset();
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fs::exists(secret_));
  EXPECT_EQ(*ReadFile(secret_), "agent's secret");
}

TEST_F(RunDirTest, TheAgentsFolderAboveTheRunsIsNotListable) {
  struct stat st {};
  ASSERT_EQ(::stat(dir_->path().parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0711u);
}

}  // namespace
}  // namespace mculab::agent
