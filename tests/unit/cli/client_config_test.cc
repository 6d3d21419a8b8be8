#include "cli/client_config.h"

#include <gtest/gtest.h>

#include <fstream>

namespace mculab::cli {
namespace {

class ClientConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mculab-cfg-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path Write(const std::string& text) {
    auto p = dir_ / "config.toml";
    std::ofstream(p) << text;
    return p;
  }
  std::filesystem::path dir_;
};

TEST_F(ClientConfigTest, FlagBeatsEnvironmentBeatsFile) {
  ConfigInputs in;
  in.config_file = Write("server = \"file:1\"\ntoken = \"tf\"\n");
  auto c = ResolveClientConfig(in);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->server, "file:1");
  EXPECT_EQ(c->token, "tf");
  in.env["MCULAB_SERVER"] = "env:2";
  in.env["MCULAB_TOKEN"] = "te";
  EXPECT_EQ(ResolveClientConfig(in)->server, "env:2");
  EXPECT_EQ(ResolveClientConfig(in)->token, "te");
  in.server_flag = "flag:3";
  EXPECT_EQ(ResolveClientConfig(in)->server, "flag:3");
  EXPECT_EQ(ResolveClientConfig(in)->source, "--server");
}

TEST_F(ClientConfigTest, DefaultIsLocalhostOnTheGrpcPort) {
  ConfigInputs in;
  in.config_file = dir_ / "missing.toml";
  EXPECT_EQ(ResolveClientConfig(in)->server, "localhost:7420");
  in.env["MCULAB_GRPC_PORT"] = "9999";
  EXPECT_EQ(ResolveClientConfig(in)->server, "localhost:9999");
}

TEST_F(ClientConfigTest, BrokenConfigFileIsAnErrorNamingTheFile) {
  ConfigInputs in;
  in.config_file = Write("server = \n");
  auto c = ResolveClientConfig(in);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("config.toml"), std::string::npos) << c.error().message;
}

TEST_F(ClientConfigTest, DefaultPathFollowsXdg) {
  EXPECT_EQ(DefaultConfigPath({{"HOME", "/h"}}), "/h/.config/mculab/config.toml");
  EXPECT_EQ(DefaultConfigPath({{"HOME", "/h"}, {"XDG_CONFIG_HOME", "/x"}}),
            "/x/mculab/config.toml");
}

// "Is it running?" only when no server answered; a server's own reason is not a lost connection.
TEST(UnavailableStatus, TransportFailuresAreToldApartFromTheServersReasons) {
  EXPECT_TRUE(IsTransportFailure(""));
  EXPECT_TRUE(IsTransportFailure(
      "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:7420: Failed to "
      "connect to remote host: Connection refused"));
  EXPECT_TRUE(IsTransportFailure("Socket closed"));
  EXPECT_TRUE(IsTransportFailure("DNS resolution failed for nowhere.invalid:7420"));
  EXPECT_TRUE(IsTransportFailure("Ssl handshake failed: SSL_ERROR_SSL"));
  EXPECT_FALSE(IsTransportFailure(
      "mculab-server stopped accepting work after a failed commit: database or disk is full"));
  EXPECT_FALSE(IsTransportFailure("cannot write /srv/mculab/artifacts/tmp/2-66aad0aa.part"));
}

}  // namespace
}  // namespace mculab::cli
