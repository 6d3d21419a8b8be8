// The agent's libusb ProbeLister, ProbePresence and `mculab-agent probes` against USB devices
// played by umockdev from hand-written recordings (tests/data/usb, written from the probes' public
// descriptor values: no real probe is attached). libusb enumerates them for real (sysfs, the
// device nodes, libusb_open); the serial numbers come from the sysfs attributes, or, with those
// removed, from string descriptors answered over USBDEVFS_CONTROL by an ioctl handler.
// UsbProbes.*: run under umockdev-wrapper, each test builds its testbed with libumockdev and adds
// and removes devices. UmockdevRun.*: run under `umockdev-run --device ...` with all three.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/usbdevice_fs.h>
#include <sys/ioctl.h>
#include <umockdev.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/config.h"
#include "agent/io/probe_lister.h"
#include "agent/io/probe_listing.h"
#include "agent/io/probe_presence.h"
#include "agent/io/probe_watcher.h"

namespace mculab::agent {
namespace {

namespace fs = std::filesystem;

const std::string kData = MCULAB_USB_DATA;
constexpr const char* kV21Serial = "0669FF383333524E43123456";
constexpr const char* kV3Serial = "002F00283438510B34313939";
constexpr const char* kDapSerial = "0240000032044e4500257009997b00386781000097969900";
constexpr const char* kV21Sys = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2";
constexpr const char* kV3Sys = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-3.1";

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a command line, returns its stdout; `status` gets the exit status.
std::string Capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  int st = pclose(f);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

const ProbeInfo* BySerial(const std::vector<ProbeInfo>& probes, const std::string& serial) {
  for (const auto& p : probes) {
    if (p.serial == serial) return &p;
  }
  return nullptr;
}

void ExpectTheThreeProbes(const std::vector<ProbeInfo>& probes) {
  ASSERT_EQ(probes.size(), 3u);
  const ProbeInfo* v21 = BySerial(probes, kV21Serial);
  ASSERT_NE(v21, nullptr);
  EXPECT_EQ(v21->vendor_id, 0x0483);
  EXPECT_EQ(v21->product_id, 0x374b);
  EXPECT_EQ(v21->Kind(), "ST-LINK");
  EXPECT_EQ(v21->product, "STM32 STLink");
  EXPECT_EQ(v21->manufacturer, "STMicroelectronics");
  EXPECT_EQ(v21->bus, 1);
  EXPECT_EQ(v21->address, 5);
  EXPECT_EQ(v21->sysfs_name, "1-2");
  const ProbeInfo* v3 = BySerial(probes, kV3Serial);
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(v3->vendor_id, 0x0483);
  EXPECT_EQ(v3->product_id, 0x374e);
  EXPECT_EQ(v3->Kind(), "ST-LINK");
  EXPECT_EQ(v3->product, "STLINK-V3");
  EXPECT_EQ(v3->bus, 1);
  EXPECT_EQ(v3->address, 7);
  const ProbeInfo* dap = BySerial(probes, kDapSerial);
  ASSERT_NE(dap, nullptr);
  EXPECT_EQ(dap->vendor_id, 0x0d28);
  EXPECT_EQ(dap->product_id, 0x0204);
  EXPECT_EQ(dap->Kind(), "CMSIS-DAP");
  EXPECT_EQ(dap->product, "DAPLink CMSIS-DAP");
  EXPECT_EQ(dap->manufacturer, "ARM");
  EXPECT_EQ(dap->bus, 2);
  EXPECT_EQ(dap->address, 3);
  // Sorted by bus, then address.
  EXPECT_EQ(probes[0].serial, kV21Serial);
  EXPECT_EQ(probes[1].serial, kV3Serial);
  EXPECT_EQ(probes[2].serial, kDapSerial);
}

// A [agent] header and the snippets `mculab-agent probes` printed, parsed as the agent would.
Result<AgentConfig> ParseSnippets(const std::string& listing) {
  std::string toml = "[agent]\nname = \"t\"\n";
  auto at = listing.find("[[board]]");
  if (at != std::string::npos) toml += listing.substr(at);
  return ParseAgentConfig(toml, "probes-output.toml", "/");
}

// Whether umockdev's LD_PRELOAD library is loaded (umockdev-wrapper, umockdev-run). Started by
// ctest (run_umockdev.sh sets MCULAB_UNDER_UMOCKDEV) it must be; by hand, the tests skip.
bool UnderUmockdev() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "umockdev-preload") != nullptr;
}

#define SKIP_OUTSIDE_UMOCKDEV(how)                                                   \
  do {                                                                               \
    if (!UnderUmockdev()) {                                                          \
      ASSERT_EQ(std::getenv("MCULAB_UNDER_UMOCKDEV"), nullptr)                       \
          << "run_umockdev.sh started this test without umockdev's preload library"; \
      GTEST_SKIP() << "not under " how;                                              \
    }                                                                                \
  } while (false)

// The recording without the serial, product and manufacturer sysfs attributes: libusb must then
// open the device and ask for its string descriptors.
std::string WithoutSysfsStrings(const std::string& file) {
  std::istringstream in(ReadAll(kData + "/" + file));
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind("A: serial=", 0) == 0 || line.rfind("A: product=", 0) == 0 ||
        line.rfind("A: manufacturer=", 0) == 0) {
      continue;
    }
    out += line + "\n";
  }
  return out;
}

// Answers GET_DESCRIPTOR(STRING) control transfers on an emulated usbfs node, as the probe's
// firmware would: index 0 the language list (en-US), 1 manufacturer, 2 product, 3 serial. libusb
// sends control transfers as URBs (USBDEVFS_SUBMITURB) and reaps them (USBDEVFS_REAPURBNDELAY)
// when the node polls writable; the handler completes each URB at once.
struct StringDescriptors {
  std::vector<std::string> strings;  // by index, [0] unused
  std::atomic<int> answered{0};
  std::mutex mu;
  std::vector<UMockdevIoctlData*> completed;  // URBs waiting to be reaped (one reference each)

  ~StringDescriptors() {
    for (auto* d : completed) g_object_unref(d);
  }

  // The descriptor for a setup packet, or false for a request a probe would stall.
  bool Reply(const guint8* setup, std::vector<guint8>* reply) const {
    unsigned value = setup[2] | (setup[3] << 8);
    unsigned index = value & 0xff;
    if (setup[0] != 0x80 || setup[1] != 6 || (value >> 8) != 3 || index >= strings.size()) {
      return false;
    }
    if (index == 0) {
      *reply = {4, 3, 0x09, 0x04};
      return true;
    }
    *reply = {0, 3};
    for (char c : strings[index]) {
      reply->push_back(static_cast<guint8>(c));
      reply->push_back(0);
    }
    (*reply)[0] = static_cast<guint8>(reply->size());
    return true;
  }

  static gboolean OnIoctl(UMockdevIoctlBase*, UMockdevIoctlClient* client, gpointer self_ptr) {
    auto* self = static_cast<StringDescriptors*>(self_ptr);
    gulong request = umockdev_ioctl_client_get_request(client);
    UMockdevIoctlData* arg = umockdev_ioctl_client_get_arg(client);
    if (request == USBDEVFS_SUBMITURB) {
      // The argument is the URB's address in the client: fetch the URB, then its buffer.
      GError* error = nullptr;
      UMockdevIoctlData* urb_data =
          umockdev_ioctl_data_resolve(arg, 0, sizeof(usbdevfs_urb), &error);
      auto* urb = urb_data != nullptr ? reinterpret_cast<usbdevfs_urb*>(urb_data->data) : nullptr;
      UMockdevIoctlData* buf =
          urb != nullptr && urb->type == USBDEVFS_URB_TYPE_CONTROL && urb->buffer_length >= 8
              ? umockdev_ioctl_data_resolve(urb_data, offsetof(usbdevfs_urb, buffer),
                                            static_cast<gsize>(urb->buffer_length), &error)
              : nullptr;
      if (buf == nullptr) {
        if (error != nullptr) g_error_free(error);
        umockdev_ioctl_client_complete(client, -1, EINVAL);
        return TRUE;
      }
      std::vector<guint8> reply;
      if (self->Reply(buf->data, &reply)) {
        std::size_t wlength = buf->data[6] | (buf->data[7] << 8);
        std::size_t len =
            std::min({reply.size(), wlength, static_cast<std::size_t>(urb->buffer_length - 8)});
        std::memcpy(buf->data + 8, reply.data(), len);
        urb->actual_length = static_cast<int>(len);
        urb->status = 0;
        ++self->answered;
      } else {
        urb->actual_length = 0;
        urb->status = -EPIPE;  // a stall
      }
      {
        std::lock_guard lock(self->mu);
        self->completed.push_back(static_cast<UMockdevIoctlData*>(g_object_ref(urb_data)));
      }
      umockdev_ioctl_client_complete(client, 0, 0);
      return TRUE;
    }
    if (request == USBDEVFS_REAPURB || request == USBDEVFS_REAPURBNDELAY) {
      UMockdevIoctlData* urb = nullptr;
      {
        std::lock_guard lock(self->mu);
        if (!self->completed.empty()) {
          urb = self->completed.front();
          self->completed.erase(self->completed.begin());
        }
      }
      if (urb == nullptr) {
        umockdev_ioctl_client_complete(client, -1, EAGAIN);
        return TRUE;
      }
      // The argument is the address of the client's URB pointer: point it at the reaped URB.
      UMockdevIoctlData* slot = umockdev_ioctl_data_resolve(arg, 0, sizeof(void*), nullptr);
      if (slot != nullptr) umockdev_ioctl_data_set_ptr(slot, 0, urb);
      g_object_unref(urb);
      umockdev_ioctl_client_complete(client, 0, 0);
      return TRUE;
    }
    return FALSE;  // ENOTTY: libusb does without the capabilities query
  }
};

class UsbProbes : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_OUTSIDE_UMOCKDEV("umockdev-wrapper (ctest runs it so: usb_probes_umockdev)");
    testbed_ = umockdev_testbed_new();
    ASSERT_TRUE(umockdev_in_mock_environment());
  }
  void TearDown() override {
    if (testbed_ != nullptr) g_object_unref(testbed_);
  }
  void Add(const std::string& file) {
    GError* error = nullptr;
    ASSERT_TRUE(umockdev_testbed_add_from_file(testbed_, (kData + "/" + file).c_str(), &error))
        << file << ": " << (error != nullptr ? error->message : "?");
  }
  void AddAll() {
    Add("stlink-v2-1.umockdev");
    Add("stlink-v3.umockdev");
    Add("daplink.umockdev");
  }
  UMockdevTestbed* testbed_ = nullptr;
};

TEST_F(UsbProbes, EnumeratesEachRecordedProbeWithItsKindAndSerial) {
  AddAll();
  auto probes = MakeLibusbProbeLister()->List();
  ASSERT_TRUE(probes) << probes.error().message;
  ExpectTheThreeProbes(*probes);
}

TEST_F(UsbProbes, EachRecordingAloneGivesOnlyItsProbe) {
  struct Case {
    const char* file;
    const char* serial;
    std::uint16_t pid;
  };
  for (const Case& c : {Case{"stlink-v2-1.umockdev", kV21Serial, 0x374b},
                        Case{"stlink-v3.umockdev", kV3Serial, 0x374e},
                        Case{"daplink.umockdev", kDapSerial, 0x0204}}) {
    UMockdevTestbed* fresh = umockdev_testbed_new();
    GError* error = nullptr;
    ASSERT_TRUE(umockdev_testbed_add_from_file(fresh, (kData + "/" + c.file).c_str(), &error));
    auto probes = MakeLibusbProbeLister()->List();
    ASSERT_TRUE(probes) << probes.error().message;
    ASSERT_EQ(probes->size(), 1u) << c.file;
    EXPECT_EQ((*probes)[0].serial, c.serial);
    EXPECT_EQ((*probes)[0].product_id, c.pid);
    g_object_unref(fresh);
  }
}

TEST_F(UsbProbes, ADeviceThatIsNoProbeIsNotListed) {
  // The ST-LINK/V2-1's recording turned into a Logitech receiver (046d:c52b): same shape, other
  // ids in the sysfs attributes and in the descriptors libusb parses.
  std::string rec = ReadAll(kData + "/stlink-v2-1.umockdev");
  auto replace_all = [&rec](const std::string& from, const std::string& to) {
    for (auto at = rec.find(from); at != std::string::npos; at = rec.find(from, at + to.size())) {
      rec.replace(at, from.size(), to);
    }
  };
  replace_all("83044B37", "6D042BC5");  // idVendor, idProduct in the device descriptor
  replace_all("idVendor=0483", "idVendor=046d");
  replace_all("idProduct=374b", "idProduct=c52b");
  replace_all("product=STM32 STLink", "product=USB Receiver");
  GError* error = nullptr;
  ASSERT_TRUE(umockdev_testbed_add_from_string(testbed_, rec.c_str(), &error))
      << (error != nullptr ? error->message : "?");
  Add("daplink.umockdev");
  auto probes = MakeLibusbProbeLister()->List();
  ASSERT_TRUE(probes) << probes.error().message;
  ASSERT_EQ(probes->size(), 1u);
  EXPECT_EQ((*probes)[0].serial, kDapSerial);
}

TEST_F(UsbProbes, SerialsMatchTheConfigsBoards) {
  AddAll();
  // Three gdb boards: two probes plugged in (the DAPLink's serial written upper-case), one not.
  std::string upper_dap = kDapSerial;
  for (char& c : upper_dap) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string toml =
      std::string("[agent]\nname = \"t\"\n") +
      "[[board]]\nname = \"h743\"\nkind = \"nucleo-h743\"\nbackend = \"gdb\"\n"
      "firmware = \"/fw.elf\"\nworkload_addr = 0x24040000\nserial = \"" +
      kV21Serial +
      "\"\ngdb_server = \"openocd\"\n"
      "[[board]]\nname = \"mps3\"\nkind = \"cs300\"\nbackend = \"gdb\"\n"
      "firmware = \"/fw.elf\"\nworkload_addr = 0x24040000\nserial = \"" +
      upper_dap +
      "\"\ngdb_server = \"pyocd\"\n"
      "[[board]]\nname = \"f767\"\nkind = \"nucleo-f767\"\nbackend = \"gdb\"\n"
      "firmware = \"/fw.elf\"\nworkload_addr = 0x20060000\nserial = \"066EFF555051897267181234\"\n"
      "gdb_server = \"openocd\"\n";
  auto cfg = ParseAgentConfig(toml, "agent.toml", "/");
  ASSERT_TRUE(cfg) << cfg.error().message;
  std::vector<BoardProbe> boards;
  for (const auto& b : cfg->boards) boards.push_back({b.name, b.serial});
  auto lister = MakeLibusbProbeLister();
  auto probes = lister->List();
  ASSERT_TRUE(probes) << probes.error().message;
  auto states = MatchBoardsToProbes(boards, *probes);
  ASSERT_EQ(states.size(), 3u);
  EXPECT_TRUE(states[0].online);
  EXPECT_EQ(states[0].probe.product_id, 0x374b);
  EXPECT_TRUE(states[1].online);
  EXPECT_EQ(states[1].probe.vendor_id, 0x0d28);
  EXPECT_FALSE(states[2].online);

  auto found = FindProbeBySerial(*lister, kV3Serial);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->product_id, 0x374e);
  auto missing = FindProbeBySerial(*lister, "066EFF555051897267181234");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("probe not found: serial 066EFF555051897267181234"),
            std::string::npos);
  EXPECT_NE(missing.error().message.find(kV3Serial), std::string::npos);
}

TEST_F(UsbProbes, AProbeThatDisappearsTakesItsBoardOfflineUntilItReturns) {
  AddAll();
  auto lister = MakeLibusbProbeLister();
  ProbePresence presence(*lister, {{"h743", kV21Serial}, {"h7-v3", kV3Serial}});
  EXPECT_FALSE(presence.Online("h743"));  // nothing scanned yet

  auto changed = presence.Rescan();
  ASSERT_TRUE(changed) << changed.error().message;
  EXPECT_EQ(changed->size(), 2u);
  EXPECT_TRUE(presence.Online("h743"));
  EXPECT_TRUE(presence.Online("h7-v3"));

  umockdev_testbed_remove_device(testbed_, kV3Sys);  // unplugged
  changed = presence.Rescan();
  ASSERT_TRUE(changed) << changed.error().message;
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_EQ((*changed)[0].board, "h7-v3");
  EXPECT_FALSE((*changed)[0].online);
  EXPECT_FALSE(presence.Online("h7-v3"));
  EXPECT_TRUE(presence.Online("h743"));
  auto gone = FindProbeBySerial(*lister, kV3Serial);
  EXPECT_FALSE(gone);

  changed = presence.Rescan();  // nothing changed since
  ASSERT_TRUE(changed);
  EXPECT_TRUE(changed->empty());

  Add("stlink-v3.umockdev");  // plugged in again
  changed = presence.Rescan();
  ASSERT_TRUE(changed) << changed.error().message;
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_EQ((*changed)[0].board, "h7-v3");
  EXPECT_TRUE((*changed)[0].online);
  EXPECT_EQ((*changed)[0].probe.address, 7);

  umockdev_testbed_remove_device(testbed_, kV21Sys);
  umockdev_testbed_remove_device(testbed_, kV3Sys);
  ASSERT_TRUE(presence.Rescan());
  EXPECT_FALSE(presence.Online("h743"));
  EXPECT_FALSE(presence.Online("h7-v3"));
}

TEST_F(UsbProbes, TheWatcherReportsAProbeGoneAndBack) {
  AddAll();
  auto lister = MakeLibusbProbeLister();
  ProbePresence presence(*lister, {{"h743", kV21Serial}, {"h7-v3", kV3Serial}});
  std::mutex mu;
  std::vector<std::string> changes;
  // Scans only when poked, so the testbed never changes during one.
  ProbeWatcher watcher(presence, std::chrono::hours(1), [&](const BoardProbeState& s) {
    std::lock_guard lock(mu);
    changes.push_back(s.board + (s.online ? " online" : " offline"));
  });
  auto scan = [&] {
    const auto before = watcher.scans();
    watcher.Poke();
    for (int i = 0; i < 2000 && watcher.scans() == before; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_GT(watcher.scans(), before) << "the watcher did not scan";
  };
  watcher.Start();  // the first scan is at once
  for (int i = 0; i < 2000 && watcher.scans() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(watcher.scans(), 1u);
  umockdev_testbed_remove_device(testbed_, kV3Sys);
  scan();
  scan();  // nothing changed: nothing reported
  Add("stlink-v3.umockdev");
  scan();
  watcher.Stop();
  std::lock_guard lock(mu);
  EXPECT_THAT(changes, ::testing::ElementsAre("h743 online", "h7-v3 online", "h7-v3 offline",
                                              "h7-v3 online"));
}

TEST_F(UsbProbes, AgentProbesListsThemWithSnippetsThatParse) {
  AddAll();
  fs::path by_id = fs::temp_directory_path() / ("mculab-by-id-" + std::to_string(getpid()));
  fs::remove_all(by_id);
  fs::create_directories(by_id);
  std::string port =
      (by_id / (std::string("usb-STMicroelectronics_STM32_STLink_") + kV21Serial + "-if02"))
          .string();
  fs::create_symlink("../../ttyACM0", port);
  int status = -1;
  std::string out =
      Capture(std::string(MCULAB_AGENT) + " probes --by-id-dir " + by_id.string(), &status);
  fs::remove_all(by_id);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("3 debug probe(s):"), std::string::npos) << out;
  EXPECT_NE(out.find(std::string("ST-LINK  0483:374b  serial ") + kV21Serial +
                     "  bus 1 address 5  \"STMicroelectronics STM32 STLink\"  port " + port),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(std::string("ST-LINK  0483:374e  serial ") + kV3Serial +
                     "  bus 1 address 7  \"STMicroelectronics STLINK-V3\"  port none"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(std::string("CMSIS-DAP  0d28:0204  serial ") + kDapSerial +
                     "  bus 2 address 3  \"ARM DAPLink CMSIS-DAP\"  port none"),
            std::string::npos)
      << out;

  auto cfg = ParseSnippets(out);
  ASSERT_TRUE(cfg) << cfg.error().message << "\n" << out;
  ASSERT_EQ(cfg->boards.size(), 3u);
  const auto& v21 = cfg->boards[0];
  EXPECT_EQ(v21.backend, "gdb");
  EXPECT_EQ(v21.serial, kV21Serial);
  EXPECT_EQ(v21.link, port);
  EXPECT_NE(v21.gdb_server.find("interface/stlink.cfg"), std::string::npos);
  EXPECT_NE(v21.gdb_server.find("{serial}"), std::string::npos);
  EXPECT_EQ(cfg->boards[1].serial, kV3Serial);
  EXPECT_EQ(cfg->boards[1].link, "rtt");
  const auto& dap = cfg->boards[2];
  EXPECT_EQ(dap.serial, kDapSerial);
  EXPECT_NE(dap.gdb_server.find("pyocd gdbserver"), std::string::npos);
  EXPECT_NE(dap.name, v21.name);
}

TEST_F(UsbProbes, AgentProbesSaysWhenNoneIsPluggedIn) {
  int status = -1;
  std::string out = Capture(std::string(MCULAB_AGENT) + " probes", &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "no debug probe is plugged in\n");
}

TEST_F(UsbProbes, StringsComeFromTheDeviceWhenSysfsHasNone) {
  GError* error = nullptr;
  ASSERT_TRUE(umockdev_testbed_add_from_string(
      testbed_, WithoutSysfsStrings("stlink-v2-1.umockdev").c_str(), &error))
      << (error != nullptr ? error->message : "?");
  StringDescriptors device;
  device.strings = {"", "STMicroelectronics", "STM32 STLink", kV21Serial};
  UMockdevIoctlBase* handler = UMOCKDEV_IOCTL_BASE(g_object_new(UMOCKDEV_TYPE_IOCTL_BASE, nullptr));
  g_signal_connect(handler, "handle-ioctl", G_CALLBACK(&StringDescriptors::OnIoctl), &device);
  ASSERT_TRUE(umockdev_testbed_attach_ioctl(testbed_, "/dev/bus/usb/001/005", handler, &error))
      << (error != nullptr ? error->message : "?");
  auto probes = MakeLibusbProbeLister()->List();
  umockdev_testbed_detach_ioctl(testbed_, "/dev/bus/usb/001/005", nullptr);
  g_object_unref(handler);
  ASSERT_TRUE(probes) << probes.error().message;
  ASSERT_EQ(probes->size(), 1u);
  EXPECT_EQ((*probes)[0].serial, kV21Serial);
  EXPECT_EQ((*probes)[0].product, "STM32 STLink");
  EXPECT_EQ((*probes)[0].manufacturer, "STMicroelectronics");
  EXPECT_GE(device.answered.load(), 3);
}

TEST_F(UsbProbes, AProbeWhoseSerialCannotBeReadGetsNoSnippet) {
  // No sysfs strings and a device node that answers no control transfer.
  GError* error = nullptr;
  ASSERT_TRUE(umockdev_testbed_add_from_string(
      testbed_, WithoutSysfsStrings("daplink.umockdev").c_str(), &error));
  auto probes = MakeLibusbProbeLister()->List();
  ASSERT_TRUE(probes) << probes.error().message;
  ASSERT_EQ(probes->size(), 1u);  // known by its ids
  EXPECT_EQ((*probes)[0].serial, "");
  int status = -1;
  std::string out = Capture(std::string(MCULAB_AGENT) + " probes", &status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("CMSIS-DAP  0d28:0204  serial (unreadable)  bus 2 address 3"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("# no snippet: its serial number cannot be read"), std::string::npos) << out;
  EXPECT_EQ(out.find("[[board]]"), std::string::npos) << out;
}

// Under `umockdev-run --device stlink-v2-1.umockdev --device stlink-v3.umockdev --device
// daplink.umockdev`: the devices come from umockdev-run's command line, not from this process.
TEST(UmockdevRun, TheLibusbListerAndAgentProbesSeeThePlayedRecordings) {
  SKIP_OUTSIDE_UMOCKDEV("umockdev-run (ctest runs it so: usb_probes_umockdev_run)");
  auto probes = MakeLibusbProbeLister()->List();
  ASSERT_TRUE(probes) << probes.error().message;
  ExpectTheThreeProbes(*probes);
  int status = -1;
  std::string out =
      Capture(std::string(MCULAB_AGENT) + " probes --by-id-dir /nonexistent", &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(out, FormatProbeListing(*probes, "/nonexistent"));
  auto cfg = ParseSnippets(out);
  ASSERT_TRUE(cfg) << cfg.error().message;
  ASSERT_EQ(cfg->boards.size(), 3u);
  EXPECT_EQ(cfg->boards[2].serial, kDapSerial);
}

// `mculab-agent doctor` finds a board's probe by its serial (written lower-case in the config)
// through the same libusb lister, and one that is not plugged in.
TEST(UmockdevRun, AgentDoctorFindsTheBoardsProbeBySerial) {
  SKIP_OUTSIDE_UMOCKDEV("umockdev-run (ctest runs it so: usb_probes_umockdev_run)");
  std::string lower = kV21Serial;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  fs::path dir = fs::temp_directory_path() / ("mculab-doctor-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "fw.elf") << "x";
  std::ofstream(dir / "agent.toml")
      << "[agent]\nname = \"t\"\n"
      << "[[board]]\nname = \"h743\"\nkind = \"nucleo-h743\"\nbackend = \"gdb\"\n"
      << "firmware = \"fw.elf\"\nworkload_addr = 0x24040000\nserial = \"" << lower << "\"\n"
      << "gdb_server = \"openocd -c \\\"adapter serial {serial}\\\" -c \\\"gdb_port {port}\\\"\"\n"
      << "[[board]]\nname = \"f767\"\nkind = \"nucleo-f767\"\nbackend = \"gdb\"\n"
      << "firmware = \"fw.elf\"\nworkload_addr = 0x20060000\n"
      << "serial = \"066EFF555051897267181234\"\n"
      << "gdb_server = \"openocd -c \\\"adapter serial {serial}\\\" -c \\\"gdb_port {port}\\\"\"\n";
  int status = -1;
  std::string out = Capture(
      std::string(MCULAB_AGENT) + " doctor --config " + (dir / "agent.toml").string(), &status);
  fs::remove_all(dir);
  EXPECT_NE(out.find(std::string("h743: probe 0483:374b STM32 STLink (serial ") + kV21Serial +
                     ") at /dev/bus/usb/001/005"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("f767: probe with serial 066EFF555051897267181234 is not plugged in"),
            std::string::npos)
      << out;
  EXPECT_EQ(status, 1) << out;  // the missing probe is a problem
}

}  // namespace
}  // namespace mculab::agent
