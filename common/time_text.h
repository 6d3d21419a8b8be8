// Times for people: the one format every program prints a point in time in (CLI tables and
// details, `mculab-server admin` output, the service's messages), "2026-12-01 20:33:21 UTC": UTC
// whatever the machine's zone, to the second, labelled, so two people in different zones read the
// same text and a log line and a table agree. Machine-readable output (JSON, CSV) carries the
// milliseconds since the epoch instead.
//
// Thread-safety: a pure function (gmtime_r).
#pragma once

#include <cstdint>
#include <string>

namespace mculab {

// `unix_ms`: milliseconds since 1970-01-01 00:00:00 UTC, truncated to the second. 0 or less means
// "no time recorded" and prints "-".
std::string UtcTimeText(std::int64_t unix_ms);

}  // namespace mculab
