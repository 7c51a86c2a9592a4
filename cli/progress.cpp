#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parity::cli {

namespace {
constexpr int kBarWidth = 24;
}

std::optional<double> done_fraction(const ProgressState& s) {
  std::optional<double> f;
  if (s.seconds_budget && *s.seconds_budget > 0) f = s.elapsed / *s.seconds_budget;
  if (s.cases_budget && *s.cases_budget > 0) {
    const double c = static_cast<double>(s.cases) / static_cast<double>(*s.cases_budget);
    f = f ? std::max(*f, c) : c;  // whichever budget runs out first ends the run
  }
  if (!f) return std::nullopt;
  return std::clamp(*f, 0.0, 1.0);
}

std::optional<double> eta_seconds(const ProgressState& s) {
  std::optional<double> eta;
  if (s.seconds_budget) eta = std::max(0.0, *s.seconds_budget - s.elapsed);
  if (s.cases_budget && s.cases > 0 && s.elapsed > 0) {
    const double rate = static_cast<double>(s.cases) / s.elapsed;
    const double left = static_cast<double>(*s.cases_budget > s.cases ? *s.cases_budget - s.cases : 0) / rate;
    eta = eta ? std::min(*eta, left) : left;
  }
  return eta;
}

std::string format_duration(double seconds) {
  const auto t = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (t < 60) std::snprintf(buf, sizeof buf, "%llds", t);
  else if (t < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm", t / 3600, (t % 3600) / 60);
  return buf;
}

std::string progress_text(const ProgressState& s, bool bar) {
  const double rate = s.elapsed > 0 ? static_cast<double>(s.cases) / s.elapsed : 0.0;
  char body[160];
  std::snprintf(body, sizeof body, "%llu cases (%.1f/s)  findings %llu (%zu groups)",
                static_cast<unsigned long long>(s.cases), rate, static_cast<unsigned long long>(s.findings), s.groups);
  std::string out;
  const auto fraction = done_fraction(s);
  if (bar && fraction) {
    const int filled = static_cast<int>(std::floor(*fraction * kBarWidth));
    out = "[" + std::string(static_cast<std::size_t>(filled), '#') +
          std::string(static_cast<std::size_t>(kBarWidth - filled), '-') + "] " +
          std::to_string(static_cast<int>(std::floor(*fraction * 100))) + "%  ";
  } else {
    out = "[" + format_duration(s.elapsed) + "] ";
  }
  out += body;
  if (auto eta = eta_seconds(s)) out += "  ETA " + format_duration(*eta);
  return out;
}

ProgressLine::ProgressLine() : tty_(::isatty(STDERR_FILENO) == 1) {}

void ProgressLine::tick(const ProgressState& s, bool force) {
  const double period = tty_ ? 0.5 : 5.0;
  if (!force && s.elapsed < last_ + period) return;
  last_ = s.elapsed;
  const std::string line = progress_text(s, tty_);
  if (tty_) {
    // Pad over what the previous, possibly longer, line left behind.
    std::fprintf(stderr, "\r%s%*s", line.c_str(), static_cast<int>(width_ > line.size() ? width_ - line.size() : 0), "");
    width_ = line.size();
    shown_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void ProgressLine::message(const std::string& text) {
  if (tty_ && shown_) std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
  last_ = -1e9;  // redraw the progress line at the next tick
}

void ProgressLine::finish() {
  if (tty_ && shown_) std::fprintf(stderr, "\n");
  shown_ = false;
}

}  // namespace parity::cli
