// ProbeWatcher: keeps ProbePresence current while the agent runs. A thread rescans every
// `interval`, and at once when Poke() is called (by the libusb hotplug notifier, where libusb has
// hotplug support, or by a test); each board whose probe went away or came back is handed to
// `on_change`. Scans that fail (libusb cannot enumerate) change nothing and are logged by the
// caller through `on_error`.
// LibusbHotplug: a libusb hotplug callback (arrivals and departures of any USB device) on its own
// libusb context and event thread; MakeLibusbHotplug returns null where libusb has no hotplug
// support (the rescan interval then does the work alone).
// Thread-safety: Start/Stop from one thread; Poke() from any.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/io/probe_presence.h"

namespace mculab::agent {

class ProbeWatcher {
 public:
  using OnChange = std::function<void(const BoardProbeState&)>;
  using OnError = std::function<void(const Error&)>;
  ProbeWatcher(ProbePresence& presence, std::chrono::milliseconds interval, OnChange on_change,
               OnError on_error = {});
  ~ProbeWatcher();
  ProbeWatcher(const ProbeWatcher&) = delete;
  ProbeWatcher& operator=(const ProbeWatcher&) = delete;

  // Starts the thread; its first scan is at once.
  void Start();
  // Ends the thread (waits for a scan in progress).
  void Stop();
  // Asks for a scan now.
  void Poke();
  // Scans completed so far (tests wait on it).
  std::uint64_t scans() const;

 private:
  void Loop();

  ProbePresence& presence_;
  const std::chrono::milliseconds interval_;
  OnChange on_change_;
  OnError on_error_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool poked_ = false;
  bool stop_ = false;
  std::uint64_t scans_ = 0;
  std::thread thread_;
};

class LibusbHotplug {
 public:
  virtual ~LibusbHotplug() = default;
};

// Calls `on_event` (on libusb's event thread) whenever a USB device arrives or leaves; null when
// libusb has no hotplug support here.
std::unique_ptr<LibusbHotplug> MakeLibusbHotplug(std::function<void()> on_event);

}  // namespace mculab::agent
