#include "impl/torch_version.h"

#include <charconv>

#include "impl/error.h"

namespace parity::impl {

namespace {
thread_local std::optional<TorchVersion> target;

// A decimal number at the front of `text`, consumed; nullopt when there is none.
std::optional<int> take_number(std::string_view& text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}
}  // namespace

std::optional<TorchVersion> TorchVersion::parse(std::string_view text) {
  const auto major = take_number(text);
  if (!major || text.empty() || text.front() != '.') return std::nullopt;
  text.remove_prefix(1);
  const auto minor = take_number(text);
  if (!minor) return std::nullopt;
  // What may follow: ".patch", then a local or pre-release tag ("+cu132", "a0").
  if (!text.empty() && text.front() != '.' && text.front() != '+' && (text.front() < 'a' || text.front() > 'z'))
    return std::nullopt;
  return TorchVersion{*major, *minor};
}

std::string TorchVersion::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::optional<TorchVersion> target_torch_version() { return target; }
void set_target_torch_version(std::optional<TorchVersion> version) { target = version; }

TorchVersion followed_release() {
  PARITY_INTERNAL_ASSERT(target.has_value(),
                         "impl was asked to follow a PyTorch release where none is chosen: hold an "
                         "impl::TargetTorchVersionGuard for the release whose behaviour is expected (impl_backend's "
                         "sessions hold one for their oracle's release)");
  return *target;
}

}  // namespace parity::impl
