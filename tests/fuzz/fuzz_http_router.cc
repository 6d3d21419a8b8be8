// The HTTP request router (server/http/router.h) behind Beast's request parser, as a client's
// bytes reach it: the real Lab over a SQLite store in a temporary folder (kept across inputs),
// with an admin, a member and a viewer, a queued job and a web root. The input's first byte picks
// the caller (0: as the request says, 1: admin, 2: member, 3: viewer, 4: a revoked token), the rest
// is the request (head and body, with Beast's limits as the server sets them).

#include <boost/beast/http.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "db/sqlite_store.h"
#include "server/http/router.h"
#include "server/service/clock.h"
#include "server/service/lab.h"
#include "tests/fuzz/fuzz_lab.h"

namespace {

namespace beast = boost::beast;
using mculab::server::http::Request;

struct World : mculab::fuzz::FuzzLab {
  std::unique_ptr<mculab::server::http::Router> router;
  std::string tokens[5];

  World() : FuzzLab("http") {
    const char* roles[] = {"admin", "member", "viewer", "member"};
    const char* names[] = {"fz-admin", "fz-member", "fz-viewer", "fz-revoked"};
    for (int i = 0; i < 4; ++i) {
      auto t = lab->accounts().AddUser(names[i], roles[i]);
      if (!t.ok()) std::abort();
      tokens[i + 1] = t->token;
    }
    (void)lab->accounts().Revoke(tokens[4]);
    mculab::server::SubmitRequest r;
    r.kind = "host";
    r.op = "fully_connected_s8";
    r.cases.push_back({100, {1, 16, 8}});
    r.iterations = 3;
    (void)lab->jobs().Submit(mculab::server::Caller{}, std::move(r));
    std::filesystem::create_directories(dir / "web" / "js");
    std::ofstream(dir / "web" / "index.html") << "<!doctype html><title>lab</title>";
    std::ofstream(dir / "web" / "js" / "app.js") << "export {};";
    router = std::make_unique<mculab::server::http::Router>(
        *lab, *store, clock, mculab::server::http::RouterOptions{dir / "web"});
  }
};

World& TheWorld() { return mculab::fuzz::ProcessWorld<World>(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  World& w = TheWorld();
  const unsigned who = data[0] % 5;
  beast::http::request_parser<beast::http::string_body> parser;
  parser.header_limit(16 * 1024);  // as HttpServer
  parser.body_limit(64 * 1024);
  parser.eager(true);
  beast::error_code ec;
  parser.put(boost::asio::buffer(data + 1, size - 1), ec);
  if (ec || !parser.is_done()) return 0;
  Request request = parser.release();
  if (who != 0) request.set(beast::http::field::authorization, "Bearer " + w.tokens[who]);
  auto reply = w.router->Handle(request, "127.0.0.1:1");
  if (reply.feed) reply.feed->Close();
  // Every response must be one the transport can write.
  reply.response.prepare_payload();
  return 0;
}
