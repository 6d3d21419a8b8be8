// The text of GET /api/v1/events (Server-Sent Events, WHATWG HTML §9.2): what a stream starts
// with, its keep-alive comment, and Lab events as `event: job` / `event: board` records.
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>

#include "server/service/lab_feed.h"

namespace mculab::server::http {

// Tells the page to wait 1 s before reconnecting, and opens the stream with a comment.
inline constexpr std::string_view kEventStreamStart = "retry: 1000\n: connected\n\n";
inline constexpr std::string_view kEventStreamKeepAlive = ": keep-alive\n\n";
// A comment at least this often keeps proxies from closing the stream (the page gives up on a
// stream silent for three of them).
inline constexpr std::chrono::seconds kKeepAliveInterval{15};

// Records: `event: job` (JobEventJson), `event: board` (a board as GET /api/v1/boards lists it,
// without kind_queue_length) and, on a stream opened with ?job=ID, `event: samples` ({"id", "case",
// "iterations", "values"}: the timer values a committed batch brought, at most
// kLiveSamplesPerEvent). One record per event, in order. JSON has no raw newlines, so each record
// has one data line.
std::string FormatEvents(std::span<const LabEvent> events);

}  // namespace mculab::server::http
