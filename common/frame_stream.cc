#include "common/frame_stream.h"

#include "mculab/runner_protocol.h"

namespace mculab {

const char* FrameEventKindName(FrameEventKind kind) {
  switch (kind) {
    case FrameEventKind::kFrame:
      return "frame";
    case FrameEventKind::kBadCrc:
      return "bad CRC";
    case FrameEventKind::kBadCobs:
      return "bad COBS";
    case FrameEventKind::kTooShort:
      return "truncated frame";
    case FrameEventKind::kOversized:
      return "oversized frame";
    case FrameEventKind::kBadVersion:
      return "bad protocol version";
    case FrameEventKind::kUnknownType:
      return "unknown frame type";
  }
  return "unknown event";
}

std::string FrameEvent::Describe() const {
  std::string out;
  if (kind == FrameEventKind::kFrame) {
    const char* name = mculab_msg_type_name(type);
    out = std::string("frame ") + (name ? name : "?") + " (" + std::to_string(payload.size()) +
          "-byte payload)";
  } else {
    // Appends one piece at a time: g++ 12 -O2 warns falsely (-Wrestrict) on "lit" + string&&.
    out = FrameEventKindName(kind);
    if (kind == FrameEventKind::kUnknownType) {
      out += ' ';
      out += std::to_string(type);
    }
    out += " (";
    out += std::to_string(wire_bytes);
    out += " bytes dropped)";
  }
  return out;
}

FrameStream::FrameStream(FrameSender sender) : sender_(sender) {
  current_.reserve(MCULAB_MAX_ENCODED_FRAME);
}

void FrameStream::Feed(std::span<const std::uint8_t> bytes) {
  // A frame's COBS bytes, without the delimiter, are at most this long.
  constexpr std::size_t kMaxCobs = MCULAB_MAX_ENCODED_FRAME - 1;
  for (std::uint8_t b : bytes) {
    if (b == 0) {
      EndFrame();
      continue;
    }
    if (discarding_) {
      ++discarding_bytes_;
      continue;
    }
    current_.push_back(b);
    if (current_.size() > kMaxCobs) {
      discarding_ = true;
      discarding_bytes_ = current_.size();
      current_.clear();
    }
  }
}

void FrameStream::EndFrame() {
  FrameEvent ev;
  if (discarding_) {
    ev.kind = FrameEventKind::kOversized;
    ev.wire_bytes = discarding_bytes_ + 1;
    discarding_ = false;
    discarding_bytes_ = 0;
  } else if (current_.empty()) {
    // A lone delimiter: senders may start with one to flush the line; not an error.
    ++skipped_bytes_;
    return;
  } else {
    ev.wire_bytes = current_.size() + 1;
    std::uint8_t payload[MCULAB_MAX_PAYLOAD];
    std::size_t payload_len = 0;
    std::uint8_t type = 0;
    const mculab_frame_status st =
        mculab_frame_decode(current_.data(), current_.size(), &type, payload, &payload_len);
    current_.clear();
    switch (st) {
      case MCULAB_FRAME_OK:
        if (mculab_msg_type_known(type, sender_ == FrameSender::kRunner ? 1 : 0)) {
          ev.kind = FrameEventKind::kFrame;
          ev.type = type;
          ev.payload.assign(payload, payload + payload_len);
        } else {
          ev.kind = FrameEventKind::kUnknownType;
          ev.type = type;
        }
        break;
      case MCULAB_FRAME_EMPTY:  // not reachable: current_ was not empty
      case MCULAB_FRAME_TOO_SHORT:
        ev.kind = FrameEventKind::kTooShort;
        break;
      case MCULAB_FRAME_BAD_COBS:
        ev.kind = FrameEventKind::kBadCobs;
        break;
      case MCULAB_FRAME_TOO_LONG:
        ev.kind = FrameEventKind::kOversized;
        break;
      case MCULAB_FRAME_BAD_CRC:
        ev.kind = FrameEventKind::kBadCrc;
        break;
      case MCULAB_FRAME_BAD_VERSION:
        ev.kind = FrameEventKind::kBadVersion;
        break;
    }
  }
  if (ev.ok()) {
    ++good_frames_;
  } else {
    ++bad_frames_;
    skipped_bytes_ += ev.wire_bytes;
  }
  events_.push_back(std::move(ev));
}

std::optional<FrameEvent> FrameStream::Next() {
  if (events_.empty()) return std::nullopt;
  FrameEvent ev = std::move(events_.front());
  events_.pop_front();
  return ev;
}

}  // namespace mculab
