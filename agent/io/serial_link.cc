#include "agent/io/serial_link.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/serial_port.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>
#include <optional>
#include <utility>

#include "agent/io/serial_port.h"

namespace mculab::agent {

namespace asio = boost::asio;

Result<std::filesystem::path> ResolveSerialPort(const SerialLinkOptions& o) {
  if (!o.path.empty()) return o.path;
  return FindSerialPortBySerial(o.by_id_dir, o.serial);
}

class SerialLink::Impl {
 public:
  Impl(SerialLinkOptions options, Clock& clock)
      : options_(std::move(options)), clock_(clock), port_(io_) {}

  Status OpenPort() {
    auto path = ResolveSerialPort(options_);
    if (!path) return path.error();
    boost::system::error_code ec;
    port_.open(path->string(), ec);
    if (ec) {
      return MakeError(ErrorCode::kUnavailable,
                       "cannot open serial port " + path->string() + ": " + ec.message());
    }
    using P = asio::serial_port_base;
    auto set = [&](const auto& option, const char* what) -> Status {
      port_.set_option(option, ec);
      if (ec) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "serial port " + path->string() + ": " + what + ": " + ec.message());
      }
      return {};
    };
    if (auto s = set(P::baud_rate(options_.baud), "baud rate"); !s) return s;
    if (auto s = set(P::character_size(8), "8 data bits"); !s) return s;
    if (auto s = set(P::parity(P::parity::none), "no parity"); !s) return s;
    if (auto s = set(P::stop_bits(P::stop_bits::one), "one stop bit"); !s) return s;
    if (auto s = set(P::flow_control(P::flow_control::none), "no flow control"); !s) return s;
    path_ = *path;
    return {};
  }

  Result<std::size_t> Read(std::span<std::uint8_t> buf, std::chrono::milliseconds timeout) {
    if (down_since_) {
      if (auto s = Reopen(); !s) return s.error();
      if (down_since_) {
        clock_.SleepFor(std::min(timeout, std::chrono::milliseconds(20)));
        return std::size_t{0};
      }
    }
    std::optional<std::pair<boost::system::error_code, std::size_t>> done;
    port_.async_read_some(
        asio::buffer(buf.data(), buf.size()),
        [&](const boost::system::error_code& ec, std::size_t n) { done.emplace(ec, n); });
    io_.restart();
    io_.run_for(timeout);
    if (!done) {
      boost::system::error_code ignored;
      port_.cancel(ignored);
      io_.restart();
      io_.run();  // the cancelled read's handler; it may have completed meanwhile
    }
    if (done && !done->first) return done->second;
    if (done && done->first != asio::error::operation_aborted) {
      // The tty hung up (EIO) or ended: the probe went away. Reopen it from now on.
      last_error_ = done->first.message();
      boost::system::error_code ignored;
      port_.close(ignored);
      down_since_ = clock_.Now();
      return std::size_t{0};
    }
    return std::size_t{0};
  }

  Status Write(std::span<const std::uint8_t> bytes, std::chrono::milliseconds timeout) {
    if (down_since_) {
      return MakeError(ErrorCode::kUnavailable,
                       "serial port " + path_.string() + " is gone: " + last_error_);
    }
    std::optional<boost::system::error_code> done;
    asio::async_write(port_, asio::buffer(bytes.data(), bytes.size()),
                      [&](const boost::system::error_code& ec, std::size_t) { done = ec; });
    io_.restart();
    io_.run_for(timeout);
    if (!done) {
      boost::system::error_code ignored;
      port_.cancel(ignored);
      io_.restart();
      io_.run();
      return MakeError(ErrorCode::kDeadlineExceeded,
                       "serial port " + path_.string() + ": the runner does not read");
    }
    if (*done) {
      return MakeError(ErrorCode::kUnavailable,
                       "writing serial port " + path_.string() + ": " + done->message());
    }
    return {};
  }

  std::filesystem::path port() const { return path_; }
  int reopens() const { return reopens_; }

 private:
  // Tries once to open the port again; gives up (kUnavailable) after the grace.
  Status Reopen() {
    if (OpenPort().ok()) {
      down_since_.reset();
      ++reopens_;
      return {};
    }
    if (clock_.Now() - *down_since_ >= options_.reopen_grace) {
      return MakeError(ErrorCode::kUnavailable, "serial port " + path_.string() + " went away (" +
                                                    last_error_ +
                                                    ") and did not come back within " +
                                                    std::to_string(options_.reopen_grace.count()) +
                                                    " ms (probe unplugged?)");
    }
    return {};
  }

  SerialLinkOptions options_;
  Clock& clock_;
  asio::io_context io_;
  asio::serial_port port_;
  std::filesystem::path path_;
  std::optional<Clock::TimePoint> down_since_;
  std::string last_error_;
  int reopens_ = 0;
};

SerialLink::SerialLink(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SerialLink::~SerialLink() = default;

Result<std::unique_ptr<SerialLink>> SerialLink::Open(SerialLinkOptions options, Clock& clock) {
  auto impl = std::make_unique<Impl>(std::move(options), clock);
  if (auto s = impl->OpenPort(); !s) return s.error();
  return std::unique_ptr<SerialLink>(new SerialLink(std::move(impl)));
}

Result<std::size_t> SerialLink::Read(std::span<std::uint8_t> buf,
                                     std::chrono::milliseconds timeout) {
  return impl_->Read(buf, timeout);
}
Status SerialLink::Write(std::span<const std::uint8_t> bytes, std::chrono::milliseconds timeout) {
  return impl_->Write(bytes, timeout);
}
std::filesystem::path SerialLink::port() const { return impl_->port(); }
int SerialLink::reopens() const { return impl_->reopens(); }

}  // namespace mculab::agent
