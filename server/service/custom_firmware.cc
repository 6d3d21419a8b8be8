#include "server/service/custom_firmware.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <fstream>

#include "common/elf_arch.h"
#include "server/service/artifacts.h"
#include "server/service/job_desk.h"
#include "server/service/store.h"

namespace mculab::server {

std::uint64_t CustomWorkloadSize(std::uint64_t blob_size, std::size_t num_cases) {
  // docs/runner-protocol.md section 6: 24-byte header, 8-byte body head, 8 bytes per case id,
  // padded to 16, then the blob.
  const std::uint64_t head = 24 + 8 + 8 * static_cast<std::uint64_t>(num_cases);
  return ((head + 15) / 16) * 16 + blob_size;
}

std::string BoardArch(const Board& board) {
  if (auto cpu = board.tags.find("cpu"); cpu != board.tags.end()) {
    if (auto arch = ArchOfCpu(cpu->second)) return *arch;
    return {};
  }
  if (board.kind == "host") return HostArch();
  return {};
}

Status AdmitCustomFirmware(const CustomFirmwareFiles& files,
                           const std::vector<const Board*>& boards, std::size_t num_cases,
                           const std::string& where) {
  std::array<std::uint8_t, 64> head{};
  std::ifstream in(files.firmware_path, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "firmware artifact " + files.firmware.sha256 +
                         " is recorded but its file is missing on the server; upload it again");
  }
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  const auto got = static_cast<std::size_t>(in.gcount());
  auto elf = ReadElfHeader(std::span<const std::uint8_t>(head.data(), got));
  if (!elf.ok()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "firmware " + files.firmware.name + ": " + elf.error().message);
  }
  std::vector<std::string> unknown;
  bool checked = false;
  for (const Board* b : boards) {
    const std::string arch = BoardArch(*b);
    if (arch.empty()) {
      unknown.push_back(b->name);
      continue;
    }
    if (Status s = CheckElfRunsOn(*elf, arch, "board " + b->name); !s.ok()) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "firmware " + files.firmware.name + ": " + s.error().message);
    }
    checked = true;
  }
  if (!checked) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        "cannot check the firmware's architecture for " + where + ": board(s) " +
            fmt::format("{}", fmt::join(unknown, ", ")) +
            " have no cpu tag the lab knows (cortex-m*, x86_64, aarch64); set tags = {cpu = ...} "
            "for them in the agent's configuration");
  }
  if (files.blob) {
    const std::uint64_t need = CustomWorkloadSize(files.blob->size, num_cases);
    for (const Board* b : boards) {
      if (b->ram_bytes != 0 && need > b->ram_bytes) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         fmt::format("blob {} ({}) does not fit board {}: its workload takes {}, "
                                     "the board has {} of RAM for it",
                                     files.blob->name, HumanBytes(files.blob->size), b->name,
                                     HumanBytes(need), HumanBytes(b->ram_bytes)));
      }
    }
  }
  return {};
}

Status AdmitCustomRunners(const std::vector<const Board*>& boards, const std::string& where) {
  std::vector<const Board*> off;
  for (const Board* b : boards) {
    // A board that takes custom runners, or whose agent did not say: the job may run.
    if (b->custom_runners || b->custom_runners_off.empty()) return {};
    off.push_back(b);
  }
  if (off.empty()) return {};
  if (off.size() == 1) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("a custom runner cannot run on {}: {}", where,
                                 off.front()->custom_runners_off));
  }
  std::vector<std::string> names;
  for (const Board* b : off) names.push_back(b->name);
  return MakeError(
      ErrorCode::kFailedPrecondition,
      fmt::format("no board of {} takes custom runners ({} all say no): set "
                  "allow_custom_runners = true for one of them in its agent's configuration "
                  "(docs/writing-a-runner.md), or submit to a kind that takes them",
                  where, fmt::join(names, ", ")));
}

Status ValidateCustomRequest(const SubmitRequest& r) {
  auto invalid = [](std::string m) { return MakeError(ErrorCode::kInvalidArgument, std::move(m)); };
  if (r.firmware_artifact.empty()) {
    if (!r.blob_artifact.empty()) {
      return invalid("a blob needs a custom runner: give --firmware runner.elf with --blob");
    }
    return invalid("op \"custom\" needs a custom runner: give --firmware runner.elf");
  }
  if (!r.op.empty() && r.op != kCustomOp) {
    return invalid(
        "a job with a custom runner (--firmware) runs that runner's own workload; drop "
        "--op " +
        r.op + " (the built-in ops run on the generic runner)");
  }
  if (!IsArtifactHash(r.firmware_artifact)) {
    return invalid("firmware_artifact must be a SHA-256 in lowercase hex, got '" +
                   r.firmware_artifact + "'");
  }
  if (!r.blob_artifact.empty() && !IsArtifactHash(r.blob_artifact)) {
    return invalid("blob_artifact must be a SHA-256 in lowercase hex, got '" + r.blob_artifact +
                   "'");
  }
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    if (!r.cases[i].params.empty()) {
      return invalid(fmt::format(
          "case {} (id {}) has {} parameters; a custom runner's cases are ids only (a CSV's first "
          "column), its blob says what to run",
          i, r.cases[i].id, r.cases[i].params.size()));
    }
  }
  return {};
}

Result<CustomFirmwareFiles> FindCustomFiles(JobStore& store, const ArtifactStore& artifacts,
                                            const SubmitRequest& r, const std::string& user) {
  CustomFirmwareFiles files;
  auto fw = FindUsableArtifact(store, r.firmware_artifact, user, "firmware",
                               "mculab submit --firmware uploads it");
  if (!fw.ok()) return fw.error();
  files.firmware = *fw;
  files.firmware_path = artifacts.PathOf(r.firmware_artifact);
  if (!r.blob_artifact.empty()) {
    auto blob =
        FindUsableArtifact(store, r.blob_artifact, user, "blob", "mculab submit --blob uploads it");
    if (!blob.ok()) return blob.error();
    files.blob = *blob;
  }
  return files;
}

Status JobDesk::AdmitCustomLocked(const SubmitRequest& r, const CustomFirmwareFiles& files) const {
  std::vector<const Board*> candidates;
  for (const auto& [name, b] : st_.boards.all()) {
    if (!r.board.empty() ? name == r.board : b.kind == r.kind) candidates.push_back(&b);
  }
  const std::string where = r.board.empty() ? "kind " + r.kind : "board " + r.board;
  if (Status s = AdmitCustomRunners(candidates, where); !s.ok()) return s;
  return AdmitCustomFirmware(files, candidates, r.cases.size(), where);
}

}  // namespace mculab::server
