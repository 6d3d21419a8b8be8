// The real Lab over a SQLite store in a fresh temporary folder, for the fuzz targets that drive
// one. It lives as long as the process, like a server's, and is kept across inputs.
#pragma once

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "db/sqlite_store.h"
#include "server/service/clock.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::fuzz {

struct FuzzLab {
  std::filesystem::path dir;
  std::unique_ptr<db::SqliteStore> store;
  server::SystemClock clock;
  std::unique_ptr<server::testing::OwnedLab> lab;

  // In /tmp/mculab-fuzz-<name>-XXXXXX, started, with no health checks and no logging (a log
  // line per input would drown the fuzzer). Aborts when the store or the Lab cannot start.
  explicit FuzzLab(const std::string& name) {
    spdlog::set_level(spdlog::level::off);
    std::string tmpl = "/tmp/mculab-fuzz-" + name + "-XXXXXX";
    dir = ::mkdtemp(tmpl.data());
    auto s = db::SqliteStore::Open(dir / "mculab.db");
    if (!s.ok()) std::abort();
    store = std::move(*s);
    server::LabConfig config;
    config.health_checks = false;
    lab = std::make_unique<server::testing::OwnedLab>(*store, clock, config, dir);
    if (!lab->Start().ok()) std::abort();
  }
};

// The process's one World (a FuzzLab, or a struct built on one), made on first use. Its Lab is
// stopped and its store closed at exit, before the statics their threads use are destroyed:
// libFuzzer's exit() at the end of a timed run otherwise races the store's writer thread (a use
// after free).
template <class World>
World& ProcessWorld() {
  static World* w = [] {
    auto* world = new World();  // never destroyed, like a server's
    std::atexit([] {
      ProcessWorld<World>().lab->Stop();
      ProcessWorld<World>().store->Close();
    });
    return world;
  }();
  return *w;
}

}  // namespace mculab::fuzz
