#include "agent/io/probe_listing.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <system_error>

namespace mculab::agent {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Ids(const ProbeInfo& p) {
  char ids[16];
  std::snprintf(ids, sizeof(ids), "%04x:%04x", p.vendor_id, p.product_id);
  return ids;
}

// "stlink-43123456": the kind and the serial's last 8 characters.
std::string BoardName(const ProbeInfo& p) {
  std::string kind;
  for (char c : Lower(p.Kind())) {
    if (std::isalnum(static_cast<unsigned char>(c))) kind += c;
  }
  std::string tail = p.serial.size() > 8 ? p.serial.substr(p.serial.size() - 8) : p.serial;
  return kind + "-" + Lower(tail);
}

// A TOML basic string (the serial comes from the device: escape what TOML requires).
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

std::vector<std::filesystem::path> SerialPortsOf(const ProbeInfo& probe,
                                                 const std::filesystem::path& by_id_dir) {
  std::vector<std::filesystem::path> out;
  if (probe.serial.empty()) return out;
  std::string serial = Lower(probe.serial);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(by_id_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (Lower(it->path().filename().string()).find(serial) != std::string::npos) {
      out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string BoardSnippet(const ProbeInfo& probe, const std::string& port) {
  std::string kind = probe.Kind();
  std::string s = "[[board]]\n";
  s += "name = " + Quoted(BoardName(probe)) + "\n";
  if (kind == "ST-LINK") {
    s += "kind = \"nucleo-h743\"    # the board kind jobs ask for: yours\n";
    s += "backend = \"gdb\"\n";
    s += "tags = { cpu = \"cortex-m7\" }\n";
    s += "firmware = \"/opt/mculab/firmware/mculab-runner-stm32h7.elf\"    # the runner built for "
         "this board\n";
    s += "serial = " + Quoted(probe.serial) + "\n";
    s += "gdb_server = 'openocd -f interface/stlink.cfg -c \"adapter serial {serial}\" -f "
         "target/stm32h7x.cfg -c \"gdb_port {port}\" -c \"tcl_port disabled\" -c \"telnet_port "
         "disabled\"'    # target/: your MCU family's script\n";
    s += "# pyOCD instead: gdb_server = \"pyocd gdbserver -t {target} --uid {serial} --port "
         "{port}\" and target = \"stm32h743zitx\"\n";
    s += "reset_command = \"reset halt\"\n";
  } else if (kind == "J-Link") {
    s += "kind = \"cortex-m7\"    # the board kind jobs ask for: yours\n";
    s += "backend = \"gdb\"\n";
    s += "tags = { cpu = \"cortex-m7\" }\n";
    s += "firmware = \"/opt/mculab/firmware/mculab-runner-stm32h7.elf\"    # the runner built for "
         "this board\n";
    s += "serial = " + Quoted(probe.serial) + "\n";
    s += "gdb_server = \"JLinkGDBServerCLExe -device STM32H743ZI -if SWD -speed 4000 -select "
         "USB={serial} -port {port} -nogui -singlerun -silent\"    # -device: your MCU\n";
    s += "reset_command = \"reset\"\n";
  } else {
    s += "kind = \"cortex-m\"    # the board kind jobs ask for: yours\n";
    s += "backend = \"gdb\"\n";
    s += "tags = { cpu = \"cortex-m\" }\n";
    s += "firmware = \"/opt/mculab/firmware/mculab-runner.elf\"    # the runner built for this "
         "board\n";
    s += "serial = " + Quoted(probe.serial) + "\n";
    s += "target = \"cortex_m\"    # pyOCD's name for your MCU (pyocd list --targets)\n";
    s += "gdb_server = \"pyocd gdbserver -t {target} --uid {serial} --port {port}\"\n";
    s += "# OpenOCD instead: gdb_server = 'openocd -f interface/cmsis-dap.cfg -c \"adapter serial "
         "{serial}\" -f target/<family>.cfg -c \"gdb_port {port}\"'\n";
    s += "reset_command = \"reset halt\"\n";
  }
  std::string ram = kind == "CMSIS-DAP" ? "0x20010000" : "0x24040000";
  if (port.empty()) {
    s += "link = \"rtt\"    # no serial port found: RTT over GDB (a runner built with "
         "-DMCULAB_LINK=rtt)\n";
  } else {
    s += "link = " + Quoted(port) + "\n";
    s += "baud = 115200\n";
  }
  s += "workload_addr = " + ram + "    # a free RAM area of your MCU\n";
  return s;
}

std::string FormatProbeListing(const std::vector<ProbeInfo>& probes,
                               const std::filesystem::path& by_id_dir) {
  if (probes.empty()) return "no debug probe is plugged in\n";
  std::string out = std::to_string(probes.size()) + " debug probe(s):\n";
  std::vector<std::string> ports;
  for (const auto& p : probes) {
    auto found = SerialPortsOf(p, by_id_dir);
    // An ST-LINK's virtual COM port is one interface; a CMSIS-DAP probe's too: take the first.
    ports.push_back(found.empty() ? "" : found.front().string());
    out += p.Kind() + "  " + Ids(p);
    out += "  serial " + (p.serial.empty() ? std::string("(unreadable)") : p.serial);
    out += "  bus " + std::to_string(p.bus) + " address " + std::to_string(p.address);
    std::string name = p.manufacturer;
    if (!p.product.empty()) name += (name.empty() ? "" : " ") + p.product;
    if (!name.empty()) out += "  \"" + name + "\"";
    out += "  port " + (ports.back().empty() ? std::string("none") : ports.back());
    out += "\n";
  }
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const auto& p = probes[i];
    out += "\n# " + p.Kind() + " " + Ids(p) + " serial " +
           (p.serial.empty() ? std::string("(unreadable)") : p.serial) + "\n";
    if (p.serial.empty()) {
      out +=
          "# no snippet: its serial number cannot be read; install "
          "deploy/udev/60-mculab-probes.rules and plug it in again\n";
      continue;
    }
    out += BoardSnippet(p, ports[i]);
  }
  return out;
}

}  // namespace mculab::agent
