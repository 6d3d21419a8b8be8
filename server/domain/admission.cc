#include "server/domain/admission.h"

namespace mculab::server {

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
    return n * h * w * c + k * kh * kw * c + 4 * k + n * ho * wo * k;
  }
  if (op == "fully_connected_s8" && params.size() >= 3) {
    const std::uint64_t n = p(0), in = p(1), out = p(2);
    return n * in + in * out + 4 * out + n * out;
  }
  return 0;
}

}  // namespace mculab::server
