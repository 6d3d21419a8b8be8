// Connecting to a unix-domain stream socket that another process is about to create (QEMU's
// `-chardev socket,server=on` listens only once it has started).
// Thread-safety: a free function; safe from any thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>

#include "agent/io/clock.h"
#include "agent/io/fd.h"
#include "common/result.h"

namespace mculab::agent {

// Retries every few milliseconds while the socket is missing or refuses, for at most `timeout`
// (measured on `clock`), and gives up early when `keep_trying` returns false (e.g. the process
// that should listen has died). The returned descriptor is non-blocking and close-on-exec.
Result<UniqueFd> ConnectUnixSocket(const std::filesystem::path& path,
                                   std::chrono::milliseconds timeout, Clock& clock,
                                   const std::function<bool()>& keep_trying = {});

}  // namespace mculab::agent
