// Debug probes on USB (CMSIS-DAP, ST-Link, J-Link, ...): the pyOCD backend finds its board's probe
// by USB serial number through this interface. LibusbProbeLister asks libusb; FakeProbeLister
// (fake_probe_lister.h) returns a fixed list for tests and labs without hardware.
// Thread-safety: List() may be called from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace mculab::agent {

struct ProbeInfo {
  std::uint16_t vendor_id = 0;
  std::uint16_t product_id = 0;
  std::string serial;   // iSerialNumber; empty when the device could not be opened
  std::string product;  // iProduct
  std::string manufacturer;
  int bus = 0;
  int address = 0;
  // "0483:374e STLINK-V3 (serial 002F00...)" for messages.
  std::string Describe() const;
};

class ProbeLister {
 public:
  virtual ~ProbeLister() = default;
  virtual Result<std::vector<ProbeInfo>> List() = 0;
};

// True for the vendor/product ids of known debug probes, or a product string naming CMSIS-DAP.
bool IsDebugProbe(std::uint16_t vendor_id, std::uint16_t product_id, const std::string& product);

std::unique_ptr<ProbeLister> MakeLibusbProbeLister();

// The probe with `serial`, or kNotFound "probe not found: serial X; probes present: ...".
Result<ProbeInfo> FindProbeBySerial(ProbeLister& lister, const std::string& serial);

}  // namespace mculab::agent
