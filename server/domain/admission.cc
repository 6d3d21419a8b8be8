#include "server/domain/admission.h"

#include <limits>

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

}  // namespace

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
  if (op == "fully_connected_s8" && params.size() >= 3) {
    const std::uint64_t n = p(0), in = p(1), out = p(2);
    return (Bytes{n} * Bytes{in} + Bytes{in} * Bytes{out} + Bytes{4} * Bytes{out} +
            Bytes{n} * Bytes{out})
        .v;
  }
  return 0;
}

}  // namespace mculab::server
