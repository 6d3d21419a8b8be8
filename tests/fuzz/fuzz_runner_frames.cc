// libFuzzer target: the runner link's frame decoder (common/frame_stream.h) and every message
// decoder (common/runner_messages.h), fed arbitrary bytes in arbitrary chunks, from either side.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/frame_stream.h"
#include "common/runner_messages.h"

using namespace mculab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the sender and the chunk size: frames split anywhere must decode alike.
  const FrameSender sender = (data[0] & 1) ? FrameSender::kRunner : FrameSender::kAgent;
  const std::size_t chunk = 1 + (data[0] >> 1);
  FrameStream stream(sender);
  std::span<const std::uint8_t> rest(data + 1, size - 1);
  while (!rest.empty()) {
    const std::size_t n = rest.size() < chunk ? rest.size() : chunk;
    stream.Feed(rest.first(n));
    rest = rest.subspan(n);
    while (auto ev = stream.Next()) {
      (void)ev->Describe();
      if (!ev->ok()) continue;
      const auto& p = ev->payload;
      (void)DecodeHello(p);
      (void)DecodeCaseStart(p);
      (void)DecodeSample(p);
      (void)DecodeOpSample(p);
      (void)DecodeMemory(p);
      (void)DecodeCaseEnd(p);
      (void)DecodeLog(p);
      (void)DecodeError(p);
      (void)DecodeDone(p);
      (void)DecodeConfigure(p);
      (void)DecodeRun(p);
      (void)DecodeAbort(p);
    }
  }
  return 0;
}
