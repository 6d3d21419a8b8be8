// Accounts and the Lab's role checks: a real SQLite store in a temporary folder, a fake clock and
// a fake agent channel. No network.
#include "server/service/accounts.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>

#include "common/sha256.h"
#include "db/sqlite_store.h"
#include "fakes.h"
#include "server/service/lab.h"
#include "server/service/queries.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::server {
namespace {

using testing::FakeAgentChannel;
using testing::FakeClock;
namespace v1 = mculab::v1;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-accounts-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

class AccountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
    accounts_ = std::make_unique<Accounts>(*store_, clock_);
  }

  std::string AddUser(const std::string& name, const std::string& role) {
    auto t = accounts_->AddUser(name, role);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
    return t.ok() ? t->token : "";
  }

  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<Accounts> accounts_;
};

TEST_F(AccountsTest, TokensAreRandomPrefixedAndStoredOnlyAsHashes) {
  const std::string a = AddUser("alice", "admin");
  const std::string b = AddUser("bob", "member");
  EXPECT_TRUE(std::regex_match(a, std::regex("mcl_u_[0-9a-f]{40}"))) << a;
  EXPECT_NE(a, b);
  auto agent = accounts_->AddAgent("lab-host-1");
  ASSERT_TRUE(agent.ok());
  EXPECT_TRUE(std::regex_match(agent->token, std::regex("mcl_a_[0-9a-f]{40}"))) << agent->token;
  auto tokens = store_->ListTokens();
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 3u);
  for (const TokenRecord& t : *tokens) {
    EXPECT_NE(t.hash, a);
    EXPECT_EQ(t.hash.size(), 64u);
    EXPECT_EQ(t.id.size(), 14u);
  }
  auto found = store_->FindToken(Sha256Hex(a));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->owner, "alice");
  EXPECT_EQ((*found)->kind, "user");
  EXPECT_EQ((*found)->id, a.substr(0, 14));
  // Nothing in the database file holds a token's text.
  store_->Flush();
  std::ifstream db(dir_.path() / "mculab.db", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(db)), std::istreambuf_iterator<char>());
  std::ifstream wal(dir_.path() / "mculab.db-wal", std::ios::binary);
  bytes.append((std::istreambuf_iterator<char>(wal)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.find(a.substr(14)), std::string::npos);
}

TEST_F(AccountsTest, AuthenticateFillsUserAndRole) {
  for (const char* role : {"viewer", "member", "admin"}) {
    const std::string t = AddUser(std::string("u-") + role, role);
    Caller c = accounts_->Authenticate(t, "peer-1");
    EXPECT_EQ(c.user, std::string("u-") + role);
    EXPECT_EQ(RoleName(c.role), role);
    EXPECT_EQ(c.peer, "peer-1");
    EXPECT_EQ(c.token, t);
  }
  auto agent = accounts_->AddAgent("lab-host-1");
  ASSERT_TRUE(agent.ok());
  Caller c = accounts_->Authenticate(agent->token, "p");
  EXPECT_EQ(c.role, Role::kAgent);
  EXPECT_EQ(c.user, "lab-host-1");
}

TEST_F(AccountsTest, MissingMalformedAndUnknownTokensAreRefusedWithAReason) {
  struct Case {
    std::string token;
    std::string reason;
  };
  for (const Case& k : {Case{"", "no token"}, Case{"hunter2", "not an mculab token"},
                        Case{"mcl_u_" + std::string(40, 'g'), "not an mculab token"},
                        Case{"mcl_u_" + std::string(40, 'a'), "not known"},
                        Case{"mcl_a_" + std::string(40, 'a'), "not known"}}) {
    Caller c = accounts_->Authenticate(k.token, "p");
    EXPECT_EQ(c.role, Role::kNone) << k.token;
    EXPECT_NE(c.problem.find(k.reason), std::string::npos) << k.token << ": " << c.problem;
    Status s = RequireRole(c, Role::kViewer, "listing boards");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::kUnauthenticated);
  }
}

TEST_F(AccountsTest, ARevokedTokenStopsWorkingWithinTheCacheLifetime) {
  const std::string t = AddUser("alice", "member");
  ASSERT_EQ(accounts_->Authenticate(t, "p").role, Role::kMember);  // now cached
  // Revoked by another process (mculab-server admin): this Accounts only sees the database.
  Accounts admin_cli(*store_, clock_);
  auto revoked = admin_cli.Revoke(t.substr(0, 14));
  ASSERT_TRUE(revoked.ok()) << revoked.error().message;
  EXPECT_EQ(revoked->owner, "alice");
  EXPECT_NE(revoked->revoked_ms, 0);
  EXPECT_EQ(accounts_->Authenticate(t, "p").role, Role::kMember) << "cached for a moment";
  clock_.Advance(std::chrono::milliseconds(Accounts::kDefaultCacheTtlMs));
  Caller c = accounts_->Authenticate(t, "p");
  EXPECT_EQ(c.role, Role::kNone);
  EXPECT_NE(c.problem.find("revoked"), std::string::npos) << c.problem;
  // Revoking here takes effect at once.
  const std::string u = AddUser("bob", "member");
  ASSERT_EQ(accounts_->Authenticate(u, "p").role, Role::kMember);
  ASSERT_TRUE(accounts_->Revoke(u).ok());
  EXPECT_EQ(accounts_->Authenticate(u, "p").role, Role::kNone);
}

TEST_F(AccountsTest, AdministrationErrorsSayWhatWasWrong) {
  AddUser("alice", "admin");
  auto dup = accounts_->AddUser("alice", "member");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(dup.error().message.find("already exists"), std::string::npos);
  auto role = accounts_->AddUser("carol", "root");
  ASSERT_FALSE(role.ok());
  EXPECT_EQ(role.error().message, "unknown role 'root' (roles: admin, member, viewer)");
  auto name = accounts_->AddUser("bad name;", "member");
  ASSERT_FALSE(name.ok());
  EXPECT_NE(name.error().message.find("not valid"), std::string::npos);
  auto nobody = accounts_->AddUserToken("nobody");
  ASSERT_FALSE(nobody.ok());
  EXPECT_EQ(nobody.error().code, ErrorCode::kNotFound);
  auto unknown = accounts_->Revoke("mcl_u_deadbeef");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  auto short_id = accounts_->Revoke("mcl_");
  ASSERT_FALSE(short_id.ok());
}

TEST_F(AccountsTest, ReservedNamesAreRefusedWhateverTheirCase) {
  // "Lab" would show in the history like the health-check jobs' user "lab".
  for (const char* name : {"lab", "Lab", "LAB", "lAb", "server", "Server"}) {
    auto added = accounts_->AddUser(name, "member");
    ASSERT_FALSE(added.ok()) << name;
    EXPECT_EQ(added.error().code, ErrorCode::kInvalidArgument) << name;
    EXPECT_NE(added.error().message.find("is reserved"), std::string::npos)
        << added.error().message;
    EXPECT_NE(added.error().message.find("ignoring case"), std::string::npos)
        << added.error().message;
  }
  EXPECT_TRUE(accounts_->AddUser("lab-tech", "member").ok());
}

TEST_F(AccountsTest, UserNamesAreAsciiOnlySoNoneLooksLikeAnother) {
  // "lab" with a Cyrillic a (U+0430), which reads as "lab".
  auto cyrillic = accounts_->AddUser(
      "l\xd0\xb0"
      "b",
      "member");
  ASSERT_FALSE(cyrillic.ok());
  EXPECT_EQ(cyrillic.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(cyrillic.error().message.find("ASCII only"), std::string::npos)
      << cyrillic.error().message;
  auto accented = accounts_->AddUser(
      "b\xc3\xb6"
      "b",
      "member");
  ASSERT_FALSE(accented.ok());
  EXPECT_NE(accented.error().message.find("ASCII only"), std::string::npos);
}

TEST_F(AccountsTest, ANameDifferingFromAUserOnlyInCaseIsRefused) {
  AddUser("alice", "member");
  auto twin = accounts_->AddUser("Alice", "member");
  ASSERT_FALSE(twin.ok());
  EXPECT_EQ(twin.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(twin.error().message.find("only in case"), std::string::npos) << twin.error().message;
}

TEST_F(AccountsTest, AnotherTokenForAUserAndTheListShowsUsersAndAgents) {
  const std::string first = AddUser("alice", "member");
  auto second = accounts_->AddUserToken("alice");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(accounts_->Authenticate(second->token, "p").user, "alice");
  ASSERT_TRUE(accounts_->AddAgent("lab-host-1").ok());
  ASSERT_TRUE(accounts_->Revoke(first).ok());
  auto list = accounts_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].user.name, "alice");
  EXPECT_EQ((*list)[0].tokens.size(), 2u);
  EXPECT_EQ((*list)[1].user.name, "lab-host-1");
  EXPECT_EQ((*list)[1].user.role, "agent");
}

// ---- the Lab's role checks ----

class LabRolesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    lab_ = std::make_unique<mculab::server::testing::OwnedLab>(*store_, clock_, LabConfig{},
                                                               dir_.path());
    ASSERT_TRUE(lab_->Start().ok());
    v1::Register reg;
    reg.set_agent("lab-1");
    reg.add_boards()->set_name("host-0");
    reg.mutable_boards(0)->set_kind("host");
    ASSERT_TRUE(
        lab_->agents()
            .ConnectAgent(testing::AgentCaller("lab-1"), testing::RegistrationOf(reg), agent_)
            .ok());
  }
  void TearDown() override {
    lab_->Stop();
    lab_.reset();
    store_.reset();
  }

  static Caller As(std::string user, Role role) {
    Caller c;
    c.user = std::move(user);
    c.role = role;
    return c;
  }
  static SubmitRequest Job() {
    SubmitRequest r;
    r.kind = "host";
    r.op = "fully_connected_s8";
    r.cases = {{0, {1, 8, 4}}};
    r.iterations = 1;
    return r;
  }
  static ErrorCode CodeOf(const Status& s) {
    return s.ok() ? ErrorCode::kCancelled : s.error().code;
  }
  template <typename T>
  static std::optional<ErrorCode> Denied(const Result<T>& r) {
    if (r.ok()) return std::nullopt;
    if (r.error().code == ErrorCode::kUnauthenticated ||
        r.error().code == ErrorCode::kPermissionDenied) {
      return r.error().code;
    }
    return std::nullopt;  // allowed (it may fail for another reason)
  }

  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<mculab::server::testing::OwnedLab> lab_;
  std::shared_ptr<FakeAgentChannel> agent_ = std::make_shared<FakeAgentChannel>();
};

TEST_F(LabRolesTest, ViewersReadMembersSubmitAndNobodyElseDoesEither) {
  const Caller none = [] {
    Caller c = As("", Role::kNone);
    c.problem = "token mcl_u_1234abcd was revoked";
    return c;
  }();
  const Caller viewer = As("vera", Role::kViewer);
  const Caller member = As("max", Role::kMember);
  const Caller admin = As("ada", Role::kAdmin);
  const Caller agent = As("lab-1", Role::kAgent);

  auto job = lab_->jobs().Submit(member, Job());
  ASSERT_TRUE(job.ok());
  const JobId id = job->id;
  struct Row {
    const char* what;
    std::function<std::optional<ErrorCode>(const Caller&)> call;
    Role least;
  };
  const std::vector<Row> rows = {
      {"ListBoards", [&](const Caller& c) { return Denied(lab_->boards().ListBoards(c)); },
       Role::kViewer},
      {"GetJob", [&](const Caller& c) { return Denied(lab_->jobs().GetJob(c, id)); },
       Role::kViewer},
      {"ListJobs",
       [&](const Caller& c) { return Denied(LabQueries(*lab_, *store_).ListJobs(c, {})); },
       Role::kViewer},
      {"Watch", [&](const Caller& c) { return Denied(lab_->jobs().Watch(c, id)); }, Role::kViewer},
      {"GetResults",
       [&](const Caller& c) {
         return Denied(LabQueries(*lab_, *store_).GetJobResults(c, id, false));
       },
       Role::kViewer},
      {"JobHistory", [&](const Caller& c) { return Denied(lab_->jobs().JobHistory(c, id)); },
       Role::kViewer},
      {"Submit", [&](const Caller& c) { return Denied(lab_->jobs().Submit(c, Job())); },
       Role::kMember},
      {"BeginUpload",
       [&](const Caller& c) { return Denied(lab_->uploads().BeginUpload(c, "x.csv", 3)); },
       Role::kMember},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    EXPECT_EQ(row.call(none), ErrorCode::kUnauthenticated);
    EXPECT_EQ(row.call(agent), ErrorCode::kPermissionDenied);
    for (const Caller* c : {&viewer, &member, &admin}) {
      const bool enough = static_cast<int>(c->role) >= static_cast<int>(row.least);
      EXPECT_EQ(row.call(*c), enough ? std::nullopt : std::optional(ErrorCode::kPermissionDenied))
          << c->user;
    }
  }
  auto refused = lab_->boards().ListBoards(none);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("was revoked"), std::string::npos);
  auto low = lab_->jobs().Submit(viewer, Job());
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.error().message, "submitting a job needs the member role; vera is viewer");
}

TEST_F(LabRolesTest, MembersCancelTheirOwnJobsAndAdminsAnyone) {
  const Caller max = As("max", Role::kMember);
  const Caller mia = As("mia", Role::kMember);
  const Caller ada = As("ada", Role::kAdmin);
  auto a = lab_->jobs().Submit(max, Job());
  auto b = lab_->jobs().Submit(max, Job());
  ASSERT_TRUE(a.ok() && b.ok());
  auto other = lab_->jobs().Cancel(mia, a->id);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(other.error().message.find("belongs to max"), std::string::npos);
  EXPECT_FALSE(lab_->jobs().Cancel(As("vera", Role::kViewer), a->id).ok());
  auto own = lab_->jobs().Cancel(max, a->id);
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_EQ(own->state, JobState::kCancelled);
  auto by_admin = lab_->jobs().Cancel(ada, b->id);
  ASSERT_TRUE(by_admin.ok()) << by_admin.error().message;
  // A finished job of someone else: still PERMISSION_DENIED, not "already cancelled".
  auto late = lab_->jobs().Cancel(mia, b->id);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kPermissionDenied);
  // The job records who submitted it.
  auto job = lab_->jobs().GetJob(ada, a->id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->user, "max");
}

TEST_F(LabRolesTest, TheAgentLinkNeedsTheAgentsOwnToken) {
  v1::Register reg;
  reg.set_agent("lab-2");
  reg.add_boards()->set_name("host-9");
  reg.mutable_boards(0)->set_kind("host");
  auto channel = std::make_shared<FakeAgentChannel>();
  Caller none = As("", Role::kNone);
  auto r = lab_->agents().ConnectAgent(none, testing::RegistrationOf(reg), channel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
  r = lab_->agents().ConnectAgent(As("ada", Role::kAdmin), testing::RegistrationOf(reg), channel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  r = lab_->agents().ConnectAgent(As("lab-1", Role::kAgent), testing::RegistrationOf(reg), channel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(r.error().message.find("belongs to agent lab-1, not lab-2"), std::string::npos);
  r = lab_->agents().ConnectAgent(As("lab-2", Role::kAgent), testing::RegistrationOf(reg), channel);
  EXPECT_TRUE(r.ok());
}

}  // namespace
}  // namespace mculab::server
