#include "agent/link/spool_import.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agent.pb.h"
#include "agent/io/temp_dir.h"
#include "agent/link/run_wire.h"

namespace mculab::agent {
namespace {

// Writes `message` as the spool's record; false for a message the spool does not keep.
Status PutRecord(Spool& spool, const RunMessage& message) {
  return std::visit(
      [&](const auto& r) -> Status {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, RunStartedRecord>) return spool.PutStarted(r);
        if constexpr (std::is_same_v<T, CaseDoneRecord>) return spool.PutCaseDone(r);
        if constexpr (std::is_same_v<T, SampleBatchRecord>) return spool.PutBatch(r);
        if constexpr (std::is_same_v<T, RunFinishedRecord>) return spool.PutFinished(r);
        return MakeError(ErrorCode::kDataLoss, "a message the spool does not keep");
      },
      message);
}

}  // namespace

SpoolImport ImportProtobufSpool(Spool& spool) {
  SpoolImport result;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& run : std::filesystem::directory_iterator(spool.dir() / "runs", ec)) {
    std::error_code run_ec;
    for (const auto& e : std::filesystem::directory_iterator(run.path(), run_ec)) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() == ".pb" && name.rfind("damaged-", 0) != 0) {
        files.push_back(e.path());
      }
    }
  }
  for (const auto& path : files) {
    auto bytes = ReadFile(path);
    v1::AgentMessage m;
    std::optional<RunMessage> message;
    if (bytes && m.ParseFromString(*bytes)) message = RunMessageFromWire(m);
    Status put = message ? PutRecord(spool, *message)
                         : Status(MakeError(ErrorCode::kDataLoss, "not an AgentMessage"));
    if (!put) {
      const auto aside = path.parent_path() / ("damaged-" + path.filename().string());
      std::filesystem::rename(path, aside, ec);
      spdlog::error("spool file {} from an earlier agent cannot be imported ({}), set aside as {}",
                    path.string(), put.error().message, aside.filename().string());
      ++result.damaged;
      continue;
    }
    std::filesystem::remove(path, ec);
    ++result.imported;
  }
  if (result.imported > 0) {
    spdlog::info("imported {} spool files written by an earlier agent (protobuf) into {}",
                 result.imported, spool.dir().string());
  }
  return result;
}

}  // namespace mculab::agent
