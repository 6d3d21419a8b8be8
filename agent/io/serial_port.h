// Serial consoles of real boards (the debug probe's virtual COM port).
// Thread-safety: free functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "agent/io/fd.h"
#include "common/result.h"

namespace mculab::agent {

// Opens a tty in raw 8N1 mode at `baud`, non-blocking, with pending input discarded.
Result<UniqueFd> OpenSerialPort(const std::filesystem::path& path, std::uint32_t baud);

// Finds the serial port of the probe with USB serial number `serial` among the links in `by_id_dir`
// (normally /dev/serial/by-id, whose names embed the serial). Fails, naming what it saw, when none
// or more than one port matches.
Result<std::filesystem::path> FindSerialPortBySerial(const std::filesystem::path& by_id_dir,
                                                     const std::string& serial);

}  // namespace mculab::agent
