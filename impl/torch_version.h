// The PyTorch release whose behaviour impl follows where releases differ (impl/version_gates.def), as a value,
// and the choice of it for a scope. Nothing is followed by default: impl_backend chooses the release its oracle
// is for each session's life, and a test of impl chooses the one whose behaviour it expects, both with a
// TargetTorchVersionGuard. Where none is chosen, asking which behaviour to follow is an internal assertion, so
// that no caller silently gets one release's behaviour because it forgot to choose.
#pragma once
#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace parity::impl {

struct TorchVersion {
  int major = 1;
  int minor = 13;
  auto operator<=>(const TorchVersion&) const = default;
  // "2.15", "2.15.0", "2.15.0+cu132", "1.13.1": major and minor; nullopt for anything else.
  static std::optional<TorchVersion> parse(std::string_view text);
  std::string str() const;  // "2.15"
};

// The oldest release impl models.
inline constexpr TorchVersion kOldestTorchVersion{1, 13};

// Thread-local like grad mode, so a test that switches it cannot disturb another thread; nullopt: none chosen.
std::optional<TorchVersion> target_torch_version();
void set_target_torch_version(std::optional<TorchVersion> version);
// The release chosen on this thread; an internal assertion (impl/error.h) when none is.
TorchVersion followed_release();

class TargetTorchVersionGuard {
 public:
  explicit TargetTorchVersionGuard(TorchVersion version) : previous_(target_torch_version()) {
    set_target_torch_version(version);
  }
  ~TargetTorchVersionGuard() { set_target_torch_version(previous_); }
  TargetTorchVersionGuard(const TargetTorchVersionGuard&) = delete;
  TargetTorchVersionGuard& operator=(const TargetTorchVersionGuard&) = delete;

 private:
  std::optional<TorchVersion> previous_;
};

}  // namespace parity::impl
