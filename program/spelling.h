// "Did you mean": the known name closest to a mistyped one (an op, a flag, a command), for error messages.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parity::program {

// The known name fewest single-character edits (insert, delete, replace, swap two neighbours) from `typed`, when
// close enough to be a likely typo: at most a third of its length, and 2, edits. Of names as close, the one
// sharing the longest prefix with it, then the earlier.
std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& known);

// " (did you mean \"NAME\"?)" for closest_name's answer, or "" when nothing is close.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known);

}  // namespace parity::program
