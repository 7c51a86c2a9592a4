// What built this parity: the commit and where its reviewed files live. Every report carries it so that a
// finding can be traced to the code that produced it.
#pragma once
#include <filesystem>
#include <string_view>

namespace parity::reports {

std::string_view parity_commit();  // short git hash, "unknown" outside a checkout
// The reviewed known-divergences file of the source tree this binary was built from.
std::filesystem::path default_known_divergences_path();

}  // namespace parity::reports
