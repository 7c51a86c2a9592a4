// The progress of a long campaign: on a terminal one line redrawn in place (a bar, cases/s, findings, ETA),
// elsewhere (CI logs) a plain line every few seconds.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace parity::cli {

// What a campaign has done and what it was asked to do (either budget may be absent).
struct ProgressState {
  double elapsed = 0;                    // seconds
  std::uint64_t cases = 0;
  std::uint64_t findings = 0;
  std::size_t groups = 0;
  std::optional<double> seconds_budget;  // --seconds
  std::optional<std::uint64_t> cases_budget;  // cases this process will run under --cases
};

// Fraction of the budget done (0..1), and the seconds left at the current rate; nullopt when unknown.
std::optional<double> done_fraction(const ProgressState&);
std::optional<double> eta_seconds(const ProgressState&);

// "[####------] 40%  120 cases (24.0/s)  findings 3 (2 groups)  ETA 1m30s" on a terminal (`bar`), the same
// without the bar and with the elapsed time first elsewhere.
std::string progress_text(const ProgressState&, bool bar);

// "45s", "1m30s", "2h05m".
std::string format_duration(double seconds);

class ProgressLine {
 public:
  ProgressLine();
  void tick(const ProgressState& s, bool force = false);
  // Prints a message on a line of its own, keeping the progress line intact on a terminal.
  void message(const std::string& text);
  void finish();

 private:
  bool tty_;
  bool shown_ = false;
  double last_ = -1e9;
  std::size_t width_ = 0;  // of the line last drawn, to blank it
};

}  // namespace parity::cli
