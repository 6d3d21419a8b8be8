#include "agent/io/probe_watcher.h"

#include <libusb.h>

#include <atomic>
#include <utility>

namespace mculab::agent {

ProbeWatcher::ProbeWatcher(ProbePresence& presence, std::chrono::milliseconds interval,
                           OnChange on_change, OnError on_error)
    : presence_(presence),
      interval_(interval),
      on_change_(std::move(on_change)),
      on_error_(std::move(on_error)) {}

ProbeWatcher::~ProbeWatcher() { Stop(); }

void ProbeWatcher::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  poked_ = true;  // the first scan at once
  thread_ = std::thread([this] { Loop(); });
}

void ProbeWatcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProbeWatcher::Poke() {
  {
    std::lock_guard lock(mu_);
    poked_ = true;
  }
  cv_.notify_all();
}

std::uint64_t ProbeWatcher::scans() const {
  std::lock_guard lock(mu_);
  return scans_;
}

void ProbeWatcher::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, interval_, [&] { return stop_ || poked_; });
    if (stop_) break;
    poked_ = false;
    lock.unlock();
    auto changed = presence_.Rescan();
    if (!changed) {
      if (on_error_) on_error_(changed.error());
    } else {
      for (const auto& c : *changed) on_change_(c);
    }
    lock.lock();
    ++scans_;
  }
}

namespace {

class LibusbHotplugImpl final : public LibusbHotplug {
 public:
  LibusbHotplugImpl(libusb_context* ctx, std::function<void()> on_event)
      : ctx_(ctx), on_event_(std::move(on_event)) {}
  ~LibusbHotplugImpl() override {
    stop_ = true;
    if (registered_) libusb_hotplug_deregister_callback(ctx_, handle_);  // wakes the event loop
    if (thread_.joinable()) thread_.join();
    libusb_exit(ctx_);
  }
  bool Register() {
    const int rc = libusb_hotplug_register_callback(
        ctx_,
        static_cast<libusb_hotplug_event>(LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED |
                                          LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT),
        LIBUSB_HOTPLUG_NO_FLAGS, LIBUSB_HOTPLUG_MATCH_ANY, LIBUSB_HOTPLUG_MATCH_ANY,
        LIBUSB_HOTPLUG_MATCH_ANY, &LibusbHotplugImpl::Callback, this, &handle_);
    if (rc != LIBUSB_SUCCESS) return false;
    registered_ = true;
    thread_ = std::thread([this] {
      while (!stop_) {
        timeval tv{0, 200'000};
        libusb_handle_events_timeout_completed(ctx_, &tv, nullptr);
      }
    });
    return true;
  }

 private:
  static int LIBUSB_CALL Callback(libusb_context*, libusb_device*, libusb_hotplug_event,
                                  void* self) {
    static_cast<LibusbHotplugImpl*>(self)->on_event_();
    return 0;  // stay registered
  }

  libusb_context* ctx_;
  std::function<void()> on_event_;
  libusb_hotplug_callback_handle handle_ = 0;
  bool registered_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

std::unique_ptr<LibusbHotplug> MakeLibusbHotplug(std::function<void()> on_event) {
  if (!libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG)) return nullptr;
  libusb_context* ctx = nullptr;
  if (libusb_init(&ctx) != LIBUSB_SUCCESS) return nullptr;
  auto h = std::make_unique<LibusbHotplugImpl>(ctx, std::move(on_event));
  if (!h->Register()) return nullptr;  // the destructor releases the context
  return h;
}

}  // namespace mculab::agent
