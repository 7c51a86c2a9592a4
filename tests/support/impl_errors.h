// What an impl call raised, for tests that check error kinds and LibTorch's wording.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>

#include "impl/error.h"

namespace parity::impl::testing {

// The kind and message of the impl::Error `f` raises; a test failure (and Argument, "") when it raises none.
inline std::pair<ErrorKind, std::string> error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "expected an impl::Error";
  return {ErrorKind::Argument, ""};
}

}  // namespace parity::impl::testing
