#include "agent/io/probe_lister.h"

#include <libusb.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <system_error>
#include <tuple>

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

// The first line of a sysfs attribute file, "" when absent.
std::string ReadAttribute(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) {
    line.pop_back();
  }
  return line;
}

// The device's folder under `root` (/sys/bus/usb/devices/1-2), found by bus number and address.
std::filesystem::path FindSysfsDevice(const std::filesystem::path& root, int bus, int address) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& dir = it->path();
    std::string name = dir.filename().string();
    if (name.find(':') != std::string::npos) continue;  // an interface, not a device
    if (ReadAttribute(dir / "busnum") == std::to_string(bus) &&
        ReadAttribute(dir / "devnum") == std::to_string(address)) {
      return dir;
    }
  }
  return {};
}

class LibusbProbeLister final : public ProbeLister {
 public:
  explicit LibusbProbeLister(std::filesystem::path sysfs) : sysfs_(std::move(sysfs)) {}

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
      ProbeInfo p;
      p.vendor_id = d.idVendor;
      p.product_id = d.idProduct;
      p.bus = libusb_get_bus_number(devs[i]);
      p.address = libusb_get_device_address(devs[i]);
      if (auto dir = FindSysfsDevice(sysfs_, p.bus, p.address); !dir.empty()) {
        p.sysfs_name = dir.filename().string();
        p.product = ReadAttribute(dir / "product");
        p.manufacturer = ReadAttribute(dir / "manufacturer");
        p.serial = ReadAttribute(dir / "serial");
      }
      bool need_strings = (d.iProduct != 0 && p.product.empty()) ||
                          (d.iManufacturer != 0 && p.manufacturer.empty()) ||
                          (d.iSerialNumber != 0 && p.serial.empty());
      if (need_strings) {
        libusb_device_handle* h = nullptr;
        if (libusb_open(devs[i], &h) != 0) h = nullptr;  // no permission: what sysfs gave
        if (h != nullptr) {
          if (p.product.empty()) p.product = ReadString(h, d.iProduct);
          if (p.manufacturer.empty()) p.manufacturer = ReadString(h, d.iManufacturer);
          if (p.serial.empty()) p.serial = ReadString(h, d.iSerialNumber);
          libusb_close(h);
        }
      }
      if (IsDebugProbe(p.vendor_id, p.product_id, p.product)) out.push_back(std::move(p));
    }
    libusb_free_device_list(devs, 1);
    libusb_exit(ctx);
    std::sort(out.begin(), out.end(), [](const ProbeInfo& a, const ProbeInfo& b) {
      return std::tie(a.bus, a.address) < std::tie(b.bus, b.address);
    });
    return out;
  }

 private:
  std::filesystem::path sysfs_;
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

std::string ProbeInfo::Kind() const {
  if (vendor_id == 0x0483) return "ST-LINK";
  if (vendor_id == 0x1366) return "J-Link";
  return "CMSIS-DAP";
}

bool IsDebugProbe(std::uint16_t vendor_id, std::uint16_t product_id, const std::string& product) {
  for (const auto& k : kKnownProbes) {
    if (k.vid == vendor_id && (k.pid == 0 || k.pid == product_id)) return true;
  }
  return product.find("CMSIS-DAP") != std::string::npos;
}

std::unique_ptr<ProbeLister> MakeLibusbProbeLister(std::filesystem::path sysfs_usb_devices) {
  return std::make_unique<LibusbProbeLister>(std::move(sysfs_usb_devices));
}

bool SerialsMatch(const std::string& a, const std::string& b) {
  if (a.empty() || a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

Result<ProbeInfo> FindProbeBySerial(ProbeLister& lister, const std::string& serial) {
  auto probes = lister.List();
  if (!probes) return probes.error();
  std::string present;
  for (const auto& p : *probes) {
    if (SerialsMatch(p.serial, serial)) return p;
    present += (present.empty() ? "" : "; ") + p.Describe();
  }
  return MakeError(ErrorCode::kUnavailable,
                   "probe not found: serial " + serial +
                       "; probes present: " + (present.empty() ? "none" : present));
}

}  // namespace mculab::agent
