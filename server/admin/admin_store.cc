// admin migrate-store: the lab copied to another store (db/store_copy.h), e.g. from its SQLite file
// to PostgreSQL. The counts per table go to stdout, progress and errors to stderr.
#include <memory>
#include <ostream>
#include <string>

#include "db/lab_store.h"
#include "db/store_copy.h"
#include "server/admin/admin.h"

namespace mculab::server::admin {
namespace {

std::string Column(std::string s, std::size_t width, bool right) {
  if (s.size() < width) s.insert(right ? 0 : s.size(), width - s.size(), ' ');
  return s;
}

int MigrateStore(StoreCommandContext& ctx, const std::string& from, const std::string& to,
                 std::size_t batch_rows) {
  const std::string source = from.empty() ? ctx.store_url : from;
  const std::string shown = source.empty() ? "sqlite:mculab.db" : db::RedactStoreUrl(source);
  ctx.err << "copying the lab from " << shown << " to " << db::RedactStoreUrl(to)
          << " (the servers on both should be stopped)\n";
  db::StoreCopyOptions options;
  options.home = ctx.home;
  options.batch_rows = batch_rows;
  // A line per percent of a long table, not one per batch.
  auto last = std::make_shared<std::pair<std::string, std::uint64_t>>();
  options.progress = [&ctx, last](const db::CopyProgress& p) {
    const std::uint64_t percent = p.total == 0 ? 100 : p.copied * 100 / p.total;
    if (last->first == p.table && last->second == percent) return;
    *last = {p.table, percent};
    ctx.err << "  " << p.table << ": " << p.copied << " / " << p.total << " rows\n";
  };
  auto report = db::CopyStore(source, to, options);
  if (!report.ok()) {
    ctx.err << "mculab-server admin: error: " << report.error().message
            << (report.error().code == ErrorCode::kFailedPrecondition ||
                        report.error().code == ErrorCode::kInvalidArgument ||
                        report.error().code == ErrorCode::kNotFound
                    ? "\n"
                    : "\n(what was committed stays: run the same command again to go on)\n");
    return 1;
  }
  ctx.out << Column("TABLE", 22, false) << Column("SOURCE", 12, true)
          << Column("DESTINATION", 14, true) << Column("COPIED NOW", 14, true) << "\n";
  for (const db::TableCount& c : report->tables) {
    ctx.out << Column(c.table, 22, false) << Column(std::to_string(c.source), 12, true)
            << Column(std::to_string(c.destination), 14, true)
            << Column(std::to_string(c.copied), 14, true) << "\n";
  }
  if (!report->status.ok()) {
    ctx.err << "mculab-server admin: error: the counts differ: " << report->status.error().message
            << "\n";
    return 1;
  }
  ctx.err << "done: every table has as many rows in " << db::RedactStoreUrl(to)
          << " as in the source; run the server with --store pointing there\n";
  return 0;
}

}  // namespace

void AddStoreCommands(CLI::App& admin, StoreAction& chosen) {
  auto* migrate = admin.add_subcommand(
      "migrate-store",
      "Copy the whole lab (accounts, boards, jobs, runs, samples, artifacts' records, audit "
      "trail) to another store, e.g. from SQLite to PostgreSQL, and check the counts; stop the "
      "server first. An interrupted copy goes on when run again");
  auto from = std::make_shared<std::string>();
  auto to = std::make_shared<std::string>();
  auto batch_rows = std::make_shared<std::size_t>(20'000);
  migrate->add_option("--from", *from,
                      "the store to copy: sqlite:PATH or postgresql://... (default: the lab's, "
                      "--store or the config's)");
  migrate
      ->add_option("--to", *to,
                   "the store to fill: postgresql://[user@]host[:port]/database (a password "
                   "goes in PGPASSFILE or ~/.pgpass) or sqlite:PATH; empty or holding an "
                   "interrupted copy of the same lab")
      ->required();
  migrate->add_option("--batch-rows", *batch_rows, "rows per transaction (default 20000)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10'000'000}));
  migrate->fallthrough();
  migrate->callback([&chosen, from, to, batch_rows] {
    chosen = [from, to, batch_rows](StoreCommandContext& ctx) {
      return MigrateStore(ctx, *from, *to, *batch_rows);
    };
  });
}

}  // namespace mculab::server::admin
