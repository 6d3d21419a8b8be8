#include "agent/io/probe_lister.h"

#include <libusb.h>

#include <cstdio>

namespace mculab::agent {
namespace {

struct KnownProbe {
  std::uint16_t vid;
  std::uint16_t pid;  // 0: any product of this vendor
};

// ST-Link V2/V2-1/V3, SEGGER J-Link, Arm DAPLink, NXP LPC-Link2/MCU-Link, Raspberry Pi
// debugprobe, Cypress KitProg3. Other CMSIS-DAP probes are recognised by their product string.
constexpr KnownProbe kKnownProbes[] = {
    {0x0483, 0x3748}, {0x0483, 0x374a}, {0x0483, 0x374b}, {0x0483, 0x374d}, {0x0483, 0x374e},
    {0x0483, 0x374f}, {0x0483, 0x3752}, {0x0483, 0x3753}, {0x0483, 0x3754}, {0x0483, 0x3757},
    {0x1366, 0x0000}, {0x0d28, 0x0204}, {0x1fc9, 0x0090}, {0x1fc9, 0x0143}, {0x2e8a, 0x000c},
    {0x04b4, 0xf155}, {0x04b4, 0xf151},
};

std::string ReadString(libusb_device_handle* h, std::uint8_t index) {
  if (h == nullptr || index == 0) return {};
  unsigned char buf[256];
  int n = libusb_get_string_descriptor_ascii(h, index, buf, sizeof(buf));
  if (n <= 0) return {};
  return std::string(reinterpret_cast<char*>(buf), static_cast<std::size_t>(n));
}

class LibusbProbeLister final : public ProbeLister {
 public:
  Result<std::vector<ProbeInfo>> List() override {
    libusb_context* ctx = nullptr;
    if (int r = libusb_init(&ctx); r != 0) {
      return MakeError(ErrorCode::kUnavailable,
                       std::string("libusb_init: ") + libusb_error_name(r));
    }
    libusb_device** devs = nullptr;
    ssize_t count = libusb_get_device_list(ctx, &devs);
    if (count < 0) {
      libusb_exit(ctx);
      return MakeError(ErrorCode::kUnavailable, std::string("libusb_get_device_list: ") +
                                                    libusb_error_name(static_cast<int>(count)));
    }
    std::vector<ProbeInfo> out;
    for (ssize_t i = 0; i < count; ++i) {
      libusb_device_descriptor d{};
      if (libusb_get_device_descriptor(devs[i], &d) != 0) continue;
      if (d.bDeviceClass == LIBUSB_CLASS_HUB) continue;
      libusb_device_handle* h = nullptr;
      if (libusb_open(devs[i], &h) != 0) h = nullptr;  // no permission: ids only
      ProbeInfo p;
      p.vendor_id = d.idVendor;
      p.product_id = d.idProduct;
      p.product = ReadString(h, d.iProduct);
      p.manufacturer = ReadString(h, d.iManufacturer);
      p.serial = ReadString(h, d.iSerialNumber);
      p.bus = libusb_get_bus_number(devs[i]);
      p.address = libusb_get_device_address(devs[i]);
      if (h != nullptr) libusb_close(h);
      if (IsDebugProbe(p.vendor_id, p.product_id, p.product)) out.push_back(std::move(p));
    }
    libusb_free_device_list(devs, 1);
    libusb_exit(ctx);
    return out;
  }
};

}  // namespace

std::string ProbeInfo::Describe() const {
  char ids[16];
  std::snprintf(ids, sizeof(ids), "%04x:%04x", vendor_id, product_id);
  std::string s = ids;
  if (!product.empty()) s += " " + product;
  s += serial.empty() ? " (serial unreadable: check udev permissions)" : " (serial " + serial + ")";
  return s;
}

bool IsDebugProbe(std::uint16_t vendor_id, std::uint16_t product_id, const std::string& product) {
  for (const auto& k : kKnownProbes) {
    if (k.vid == vendor_id && (k.pid == 0 || k.pid == product_id)) return true;
  }
  return product.find("CMSIS-DAP") != std::string::npos;
}

std::unique_ptr<ProbeLister> MakeLibusbProbeLister() {
  return std::make_unique<LibusbProbeLister>();
}

Result<ProbeInfo> FindProbeBySerial(ProbeLister& lister, const std::string& serial) {
  auto probes = lister.List();
  if (!probes) return probes.error();
  std::string present;
  for (const auto& p : *probes) {
    if (p.serial == serial) return p;
    present += (present.empty() ? "" : "; ") + p.Describe();
  }
  return MakeError(ErrorCode::kUnavailable,
                   "probe not found: serial " + serial +
                       "; probes present: " + (present.empty() ? "none" : present));
}

}  // namespace mculab::agent
