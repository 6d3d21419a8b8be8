// What `mculab-agent probes` prints: every debug probe plugged in (kind, vendor:product, serial,
// bus/address, its /dev/serial/by-id port) and, per probe, a [[board]] config snippet for the
// `gdb` backend ready to paste into the agent's config (docs/boards.md). The MCU behind a probe
// cannot be told from USB, so the snippet's kind, firmware, target and workload_addr are an
// example for the probe's usual board, each marked by a comment to adjust.
// Thread-safety: functions over their arguments (SerialPortsOf reads a folder).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "agent/io/probe_lister.h"

namespace mculab::agent {

// The entries of `by_id_dir` (/dev/serial/by-id) whose name holds the probe's serial number
// (udev names them usb-<vendor>_<product>_<serial>-if<NN>), sorted; none without a serial.
std::vector<std::filesystem::path> SerialPortsOf(const ProbeInfo& probe,
                                                 const std::filesystem::path& by_id_dir);

// A [[board]] table for the probe (`port`: its serial port, "" for an RTT link).
std::string BoardSnippet(const ProbeInfo& probe, const std::string& port);

// The whole listing: one line per probe, then a snippet per probe whose serial is readable.
std::string FormatProbeListing(const std::vector<ProbeInfo>& probes,
                               const std::filesystem::path& by_id_dir);

}  // namespace mculab::agent
