#include "server/domain/admission.h"

#include <algorithm>
#include <limits>

#include "server/domain/pass_planner.h"
#include "server/domain/scheduler.h"

namespace mculab::server {

namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

// Checked arithmetic: a result that does not fit saturates, so an absurd case reads as "needs
// more than any board has" instead of wrapping around to a small number.
struct Bytes {
  std::uint64_t v;
  friend Bytes operator*(Bytes a, Bytes b) {
    std::uint64_t r;
    return {__builtin_mul_overflow(a.v, b.v, &r) ? kSaturated : r};
  }
  friend Bytes operator+(Bytes a, Bytes b) {
    std::uint64_t r;
    return {__builtin_add_overflow(a.v, b.v, &r) ? kSaturated : r};
  }
};

// "{cpu=cortex-m55, npu=ethos-u55-128}" ("{}" for none).
std::string FormatTags(const std::map<std::string, std::string>& tags) {
  std::string out;
  for (const auto& [k, v] : tags) out += (out.empty() ? "" : ", ") + k + "=" + v;
  return "{" + out + "}";
}

Error Refused(std::string message) {
  return MakeError(ErrorCode::kFailedPrecondition, std::move(message));
}

// Every candidate board can count the events.
Status CheckEvents(const AdmissionRequest& r, const std::map<std::string, Board>& boards,
                   const std::map<std::string, BoardUnits>& units) {
  if (r.events.empty()) return {};
  bool any = false;
  const std::vector<CounterUnit> none;
  for (const auto& [name, board] : boards) {
    if (!IsCandidate(r, board)) continue;
    any = true;
    auto it = units.find(name);
    if (auto plan = PlanPasses(r.events, it != units.end() ? it->second.units : none); !plan.ok()) {
      return MakeError(ErrorCode::kInvalidArgument, "board " + name + ": " + plan.error().message);
    }
  }
  if (!any) {
    return Refused("no board to count events on for '" + (r.board.empty() ? r.kind : r.board) +
                   "'");
  }
  return {};
}

// Some candidate board has every tag asked for. The error names the tags no such board has (or,
// when each is on some board but none has them all, every tag) and lists the boards' tags.
Status CheckTags(const AdmissionRequest& r, const std::map<std::string, Board>& boards) {
  if (r.tags.empty()) return {};
  std::vector<std::string> have;
  std::map<std::string, std::string> missing = r.tags;
  for (const auto& [name, board] : boards) {
    if (!IsCandidate(r, board)) continue;
    if (HasTags(r.tags, board.tags)) return {};
    have.push_back(name + " " + FormatTags(board.tags));
    const auto& tags = board.tags;  // named: clang 14 cannot capture a structured binding
    std::erase_if(missing, [&](const auto& kv) {
      auto it = tags.find(kv.first);
      return it != tags.end() && it->second == kv.second;
    });
  }
  if (missing.empty()) missing = r.tags;  // each tag is somewhere, but not all on one board
  std::vector<std::string> wanted;
  for (const auto& [k, v] : missing) wanted.push_back(k + "=" + v);
  const std::string what = (missing.size() == 1 ? "tag " : "tags ") + JoinNames(wanted);
  if (!r.board.empty()) {
    return Refused("board " + r.board + " does not have " + what + "; its tags are " +
                   FormatTags(boards.at(r.board).tags));
  }
  return Refused("no board of kind " + r.kind + " has " + what + "; its boards have: " +
                 JoinNames(have) + "; drop the --tag or ask for tags a board has");
}

}  // namespace

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out.empty() ? "none" : out;
}

std::string NoBoardNamed(const std::string& name, const std::map<std::string, Board>& boards) {
  std::vector<std::string> names;
  for (const auto& [n, board] : boards) names.push_back(n);
  return "no board named '" + name + "'; the lab has: " + JoinNames(names);
}

bool IsCandidate(const AdmissionRequest& request, const Board& board) {
  return !request.board.empty() ? board.name == request.board : board.kind == request.kind;
}

Result<std::string> AdmitToBoards(const AdmissionRequest& request,
                                  const std::map<std::string, Board>& boards,
                                  const std::map<std::string, BoardUnits>& units) {
  AdmissionRequest r = request;
  if (!r.board.empty()) {
    auto b = boards.find(r.board);
    if (b == boards.end()) return Refused(NoBoardNamed(r.board, boards));
    if (!r.kind.empty() && b->second.kind != r.kind) {
      return Refused("board " + r.board + " is of kind '" + b->second.kind + "', not '" + r.kind +
                     "'");
    }
    r.kind = b->second.kind;
  } else {
    std::map<std::string, int> kinds;
    for (const auto& [name, board] : boards) ++kinds[board.kind];
    if (!kinds.contains(r.kind)) {
      std::vector<std::string> have;
      for (const auto& [kind, n] : kinds) {
        have.push_back(kind + " (" + std::to_string(n) + " board" + (n == 1 ? "" : "s") + ")");
      }
      return Refused("no board of kind '" + r.kind + "'; the lab has: " + JoinNames(have));
    }
  }
  if (Status s = CheckEvents(r, boards, units); !s.ok()) return s.error();
  if (Status s = CheckTags(r, boards); !s.ok()) return s.error();
  return r.kind;
}

Status AdmitWorkloadMemory(const AdmissionRequest& request, std::span<const CaseSpec> cases,
                           const std::map<std::string, Board>& boards) {
  std::uint64_t need = 0;
  std::int64_t case_id = 0;
  for (const CaseSpec& c : cases) {
    const std::uint64_t n = WorkloadTensorBytes(request.op, c.params);
    if (n > need) {
      need = n;
      case_id = c.id;
    }
  }
  // Whatever the boards report: no runner addresses more than 4 GiB (the Cortex-M address
  // space; the host runner's arena is smaller still).
  constexpr std::uint64_t kMostAddressable = std::uint64_t{1} << 32;
  if (need > kMostAddressable) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "case " + std::to_string(case_id) + " needs " +
                         (need == kSaturated ? std::string("more than 2^64 bytes")
                                             : "about " + std::to_string(need) + " bytes") +
                         " of RAM for its tensors, more than a runner can address (4 GiB); use "
                         "smaller cases");
  }
  std::uint64_t most = 0;
  bool unknown_ram = false;
  std::vector<std::string> names;
  for (const auto& [name, board] : boards) {
    if (!IsCandidate(request, board)) continue;
    if (board.ram_bytes == 0) unknown_ram = true;
    most = std::max<std::uint64_t>(most, board.ram_bytes);
    names.push_back(name + " (" + std::to_string(board.ram_bytes) + " bytes)");
  }
  if (need > 0 && !unknown_ram && need > most) {
    return Refused("case " + std::to_string(case_id) + " needs about " + std::to_string(need) +
                   " bytes of RAM for its tensors, more than any board it could run on has: " +
                   JoinNames(names) + "; use smaller cases or a board with more RAM");
  }
  return {};
}

std::uint64_t WorkloadTensorBytes(std::string_view op, const std::vector<std::int32_t>& params) {
  auto p = [&](std::size_t i) -> std::uint64_t {
    return i < params.size() && params[i] > 0 ? static_cast<std::uint64_t>(params[i]) : 0;
  };
  if (op == "conv2d_s8" && params.size() >= 11) {
    // N, C, H, W, K, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w
    const std::uint64_t n = p(0), c = p(1), h = p(2), w = p(3), k = p(4), kh = p(5), kw = p(6);
    const std::uint64_t ph = p(7), pw = p(8), sh = p(9) ? p(9) : 1, sw = p(10) ? p(10) : 1;
    const std::uint64_t ho = h + 2 * ph >= kh ? (h + 2 * ph - kh) / sh + 1 : 0;
    const std::uint64_t wo = w + 2 * pw >= kw ? (w + 2 * pw - kw) / sw + 1 : 0;
    const Bytes B{1};
    return (B * Bytes{n} * Bytes{h} * Bytes{w} * Bytes{c} +
            B * Bytes{k} * Bytes{kh} * Bytes{kw} * Bytes{c} + Bytes{4} * Bytes{k} +
            B * Bytes{n} * Bytes{ho} * Bytes{wo} * Bytes{k})
        .v;
  }
  if (op == "depthwise_conv2d_s8" && params.size() >= 13) {
    // N, C, H, W, depth_multiplier, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w,
    // dilation_h, dilation_w
    const std::uint64_t n = p(0), c = p(1), h = p(2), w = p(3), m = p(4), kh = p(5), kw = p(6);
    const std::uint64_t ph = p(7), pw = p(8), sh = p(9) ? p(9) : 1, sw = p(10) ? p(10) : 1;
    const std::uint64_t dh = p(11) ? p(11) : 1, dw = p(12) ? p(12) : 1;
    const std::uint64_t eh = kh ? dh * (kh - 1) + 1 : 0, ew = kw ? dw * (kw - 1) + 1 : 0;
    const std::uint64_t ho = h + 2 * ph >= eh ? (h + 2 * ph - eh) / sh + 1 : 0;
    const std::uint64_t wo = w + 2 * pw >= ew ? (w + 2 * pw - ew) / sw + 1 : 0;
    const Bytes k = Bytes{c} * Bytes{m};
    return (Bytes{n} * Bytes{h} * Bytes{w} * Bytes{c} + Bytes{kh} * Bytes{kw} * k + Bytes{4} * k +
            Bytes{n} * Bytes{ho} * Bytes{wo} * k)
        .v;
  }
  if (op == "fully_connected_s8" && params.size() >= 3) {
    const std::uint64_t n = p(0), in = p(1), out = p(2);
    return (Bytes{n} * Bytes{in} + Bytes{in} * Bytes{out} + Bytes{4} * Bytes{out} +
            Bytes{n} * Bytes{out})
        .v;
  }
  return 0;
}

Status ValidateCodeRefs(std::string_view commit, std::string_view branch, std::string_view url) {
  auto invalid = [](std::string m) { return MakeError(ErrorCode::kInvalidArgument, std::move(m)); };
  const bool hex = std::all_of(commit.begin(), commit.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
  if (!commit.empty() && (commit.size() < 4 || commit.size() > 64 || !hex)) {
    return invalid("commit must be 4 to 64 hex digits (a git commit id), got '" +
                   std::string(commit.substr(0, 80)) + "'");
  }
  const auto control = [](std::string_view s) {
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  };
  if (branch.size() > 255 || control(branch)) {
    return invalid("branch must be at most 255 bytes without control characters");
  }
  if (!url.empty() && (url.size() > 2048 || control(url) ||
                       !(url.starts_with("https://") || url.starts_with("http://")))) {
    return invalid("url must be an http:// or https:// link of at most 2048 bytes, got '" +
                   std::string(url.substr(0, 80)) + "'");
  }
  return {};
}

}  // namespace mculab::server
