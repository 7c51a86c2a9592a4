// The PyTorch release whose behaviour impl follows where releases differ (impl/version_gates.def), as a value,
// and the process-wide choice of it. impl is one library judged against one oracle per parity build: the build's
// LibTorch version is the default (impl_backend sets it), and tests choose another with TargetTorchVersionGuard.
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

// The oldest release impl models; its behaviour is also what a fresh process follows.
inline constexpr TorchVersion kOldestTorchVersion{1, 13};

// Thread-local like grad mode, so a test that switches it cannot disturb another thread.
TorchVersion target_torch_version();
void set_target_torch_version(TorchVersion version);

class TargetTorchVersionGuard {
 public:
  explicit TargetTorchVersionGuard(TorchVersion version) : previous_(target_torch_version()) {
    set_target_torch_version(version);
  }
  ~TargetTorchVersionGuard() { set_target_torch_version(previous_); }
  TargetTorchVersionGuard(const TargetTorchVersionGuard&) = delete;
  TargetTorchVersionGuard& operator=(const TargetTorchVersionGuard&) = delete;

 private:
  TorchVersion previous_;
};

}  // namespace parity::impl
