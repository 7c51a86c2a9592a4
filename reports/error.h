// Errors in report files (findings, known divergences): what is wrong and in which file, in one line.
#pragma once
#include <stdexcept>
#include <string>

namespace parity::reports {

struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace parity::reports
