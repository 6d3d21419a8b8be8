// Result<T>: a value or an error, across module boundaries instead of exceptions.
// Error carries a code (for mapping to gRPC/HTTP statuses in one place) and a message a person can
// act on. Thread-safety: a plain value type.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace mculab {

enum class ErrorCode {
  kInvalidArgument,    // the caller's input is wrong (bad CSV, unknown op, bad parameter)
  kNotFound,           // no such job, board, artifact
  kAlreadyExists,
  kFailedPrecondition, // the request is valid but the state does not allow it
  kResourceExhausted,  // over a size limit
  kUnauthenticated,
  kPermissionDenied,
  kUnavailable,        // a peer or device is not there; try again
  kDataLoss,           // corrupt bytes (bad CRC, truncated file)
  kInternal,
  kCancelled,
  kDeadlineExceeded,
};

const char* ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Error MakeError(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

}  // namespace mculab
