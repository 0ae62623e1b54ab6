// Result<T>: a value or an error message a user can act on.
//
// Expected failures (bad input, an operand that cannot be encoded, a program
// the JIT refuses) travel as values, never as exceptions, across module
// boundaries. The message says what was wrong and, where it can, where.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <fmt/core.h>

namespace bpfdiff {

struct Error {
  std::string message;
};

// Builds an Error with fmt formatting: Fail("line {}: bad register", n).
template <typename... Args>
Error Fail(fmt::format_string<Args...> format, Args&&... args) {
  return Error{fmt::format(format, std::forward<Args>(args)...)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T ok_value) : state_(std::move(ok_value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(state_);
  }
  const std::string& message() const { return error().message; }

 private:
  std::variant<T, Error> state_;
};

// Result of an operation that yields nothing but may fail.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(error_.has_value());
    return *error_;
  }
  const std::string& message() const { return error().message; }

 private:
  // Empty on success: a success costs no string (the JIT returns a Status
  // per instruction per pass).
  std::optional<Error> error_;
};

using Status = Result<void>;

// Prefixes the error of a failed result with context ("file.data: ").
template <typename T>
Result<T> WithContext(Result<T> result, std::string_view context) {
  if (result.ok()) return result;
  return Error{fmt::format("{}: {}", context, result.message())};
}

}  // namespace bpfdiff
