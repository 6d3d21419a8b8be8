#include "db/migrations.h"

namespace mculab::db {

Status CheckMigrationOrder(const std::vector<Migration>& migrations) {
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    const int least = i == 0 ? 1 : migrations[i - 1].version + 1;
    if (migrations[i].version < least) {
      return MakeError(ErrorCode::kInternal, "migration " + migrations[i].name + " has number " +
                                                 std::to_string(migrations[i].version) +
                                                 ", expected at least " + std::to_string(least));
    }
  }
  return {};
}

Status CheckNotNewer(const std::vector<Migration>& migrations, int have,
                     const std::string& database) {
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  if (have <= latest) return {};
  return MakeError(ErrorCode::kFailedPrecondition,
                   database + " is at schema version " + std::to_string(have) +
                       ", newer than this mculab-server knows (" + std::to_string(latest) +
                       "): use a newer mculab-server");
}

}  // namespace mculab::db
