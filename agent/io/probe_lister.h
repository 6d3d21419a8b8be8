// Debug probes on USB (CMSIS-DAP, ST-Link, J-Link, ...): the agent's probe watcher, `doctor` and
// `probes` find boards' probes by USB serial number through this interface. LibusbProbeLister
// asks libusb; FakeProbeLister (fake_probe_lister.h) returns a fixed list for tests and labs
// without hardware.
// LibusbProbeLister enumerates with libusb and takes each device's strings (serial, product,
// manufacturer) from the kernel's sysfs copy (/sys/bus/usb/devices/*/serial, world-readable, so
// no udev rule is needed to read a serial number), falling back to the string descriptors over
// the device (which needs permission to open it) where sysfs has none. Every List() is a fresh
// scan, so a probe unplugged since the last call is absent.
// Thread-safety: List() may be called from several threads.
#pragma once

#include <cstdint>
#include <filesystem>
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
  std::string sysfs_name;  // "1-2.1" (the kernel's name for the device), "" when unknown
  // "0483:374e STLINK-V3 (serial 002F00...)" for messages.
  std::string Describe() const;
  // "ST-LINK" (ST's vendor id), "J-Link" (SEGGER's), otherwise "CMSIS-DAP" (DAPLink, LPC-Link2,
  // MCU-Link, Raspberry Pi debugprobe, KitProg3, any product string naming CMSIS-DAP).
  std::string Kind() const;
};

class ProbeLister {
 public:
  virtual ~ProbeLister() = default;
  virtual Result<std::vector<ProbeInfo>> List() = 0;
};

// True for the vendor/product ids of known debug probes, or a product string naming CMSIS-DAP.
bool IsDebugProbe(std::uint16_t vendor_id, std::uint16_t product_id, const std::string& product);

// `sysfs_usb_devices`: where the kernel lists USB devices (tests under umockdev keep the default:
// umockdev redirects /sys).
std::unique_ptr<ProbeLister> MakeLibusbProbeLister(
    std::filesystem::path sysfs_usb_devices = "/sys/bus/usb/devices");

// Serial numbers compare ignoring ASCII case (DAPLink prints lower-case hex, ST-LINK upper-case,
// configs hold either); an empty serial matches nothing.
bool SerialsMatch(const std::string& a, const std::string& b);

// The probe with `serial`, or kNotFound "probe not found: serial X; probes present: ...".
Result<ProbeInfo> FindProbeBySerial(ProbeLister& lister, const std::string& serial);

}  // namespace mculab::agent
