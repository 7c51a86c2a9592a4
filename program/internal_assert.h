// The harness's internal-assert channel (program/, generators/, reports/, cli/, the backend adapters): for
// branches that cannot be reached unless parity itself is wrong. It throws InternalError, which the run loop
// records as a step outcome of category `internal_assert` and the CLI reports as a bug in parity (exit 70),
// never a silent default. impl has its own channel (PARITY_INTERNAL_ASSERT in impl/error.h): impl does not
// include program/.
#pragma once
#include <stdexcept>
#include <string>

namespace parity::program {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void harness_assert_failed(const char* condition, const char* file, int line,
                                               const std::string& message) {
  throw InternalError(std::string(condition) + " INTERNAL ASSERT FAILED at \"" + file + "\":" +
                      std::to_string(line) + ", please report a bug to parity. " + message);
}

}  // namespace parity::program

#define PARITY_HARNESS_ASSERT(cond, message)                                                       \
  do {                                                                                            \
    if (!(cond)) ::parity::program::harness_assert_failed(#cond, __FILE__, __LINE__, (message));   \
  } while (0)
#define PARITY_HARNESS_UNREACHABLE(message) \
  ::parity::program::harness_assert_failed("unreachable", __FILE__, __LINE__, (message))
