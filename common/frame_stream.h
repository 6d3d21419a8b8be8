// FrameStream: turns a byte stream from the runner link (serial port, socket, pipe) into runner
// protocol frames (docs/runner-protocol.md). Bytes go in with Feed() in any chunking; Next()
// yields, in order, one event per delimiter-terminated frame: either a decoded frame or the reason
// it was dropped. Garbage or a lost byte costs the frame it lands in, never the stream: decoding
// restarts after every 0x00 delimiter. Bytes that belong to no good frame are counted.
//
// Thread-safety: none; one owner feeds and drains it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mculab {

// Who sends the bytes being decoded: decides which frame types are known.
enum class FrameSender {
  kRunner,  // runner -> agent types (HELLO, SAMPLE, ...): what the agent decodes
  kAgent,   // agent -> runner types (CONFIGURE, RUN, ABORT): what a runner/fake decodes
};

enum class FrameEventKind {
  kFrame,        // a good frame: type + payload
  kBadCrc,       // CRC-32 mismatch (a corrupted or lost byte)
  kBadCobs,      // a COBS code byte points past the end of the frame
  kTooShort,     // fewer bytes than version + type + CRC (truncated frame)
  kOversized,    // more than MCULAB_MAX_ENCODED_FRAME bytes without a delimiter; discarded
                 // up to the next 0x00
  kBadVersion,   // CRC ok, protocol version is not ours
  kUnknownType,  // CRC ok, type not defined for this direction (type is set)
};

const char* FrameEventKindName(FrameEventKind kind);

struct FrameEvent {
  FrameEventKind kind = FrameEventKind::kFrame;
  std::uint8_t type = 0;              // kFrame, kUnknownType, kBadVersion(0)
  std::vector<std::uint8_t> payload;  // kFrame only
  std::size_t wire_bytes = 0;         // encoded bytes this event covers, delimiter included

  bool ok() const { return kind == FrameEventKind::kFrame; }
  // "bad CRC (37 bytes)", "frame SAMPLE (20-byte payload)", ...
  std::string Describe() const;
};

class FrameStream {
 public:
  explicit FrameStream(FrameSender sender);

  void Feed(std::span<const std::uint8_t> bytes);
  // The next event, or nullopt until more bytes arrive.
  std::optional<FrameEvent> Next();

  // Bytes that were not part of a good frame (dropped frames, discarded oversized runs, empty
  // frames' extra delimiters), counted as they are decided.
  std::uint64_t skipped_bytes() const { return skipped_bytes_; }
  std::uint64_t good_frames() const { return good_frames_; }
  std::uint64_t bad_frames() const { return bad_frames_; }
  // Bytes received since the last delimiter (a frame still in flight).
  std::size_t pending_bytes() const { return current_.size() + discarding_bytes_; }
  // Bytes held in memory for the frame in flight: never more than MCULAB_MAX_ENCODED_FRAME,
  // however long a run without a delimiter is.
  std::size_t buffered_bytes() const { return current_.size(); }

 private:
  void EndFrame();

  FrameSender sender_;
  std::vector<std::uint8_t> current_;
  bool discarding_ = false;
  std::size_t discarding_bytes_ = 0;
  std::deque<FrameEvent> events_;
  std::uint64_t skipped_bytes_ = 0;
  std::uint64_t good_frames_ = 0;
  std::uint64_t bad_frames_ = 0;
};

}  // namespace mculab
