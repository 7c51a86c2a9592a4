#include "reports/junit.h"

#include <cstdio>

#include "reports/html_report.h"

namespace parity::reports {

namespace {

// XML 1.0 holds tab, newline, carriage return and everything from U+0020 on; the other control characters cannot
// be written even as references, so they become the replacement character. The markup characters are escaped as
// for HTML, whose entities XML shares.
std::string escaped(const std::string& text) {
  std::string holdable;
  holdable.reserve(text.size());
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') holdable += "\xEF\xBF\xBD";
    else holdable += c;
  return html_escape(holdable);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

}  // namespace

std::string junit_xml(const JUnitSuite& suite) {
  int failures = 0, skipped = 0;
  for (const JUnitCase& c : suite.cases) {
    failures += c.outcome == JUnitCase::Outcome::Failed;
    skipped += c.outcome == JUnitCase::Outcome::Skipped;
  }
  const std::string counts = " tests=\"" + std::to_string(suite.cases.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"0\" skipped=\"" + std::to_string(skipped) +
                             "\" time=\"" + seconds_text(suite.seconds) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" + escaped(suite.name) + "\"" +
                    counts + ">\n  <testsuite name=\"" + escaped(suite.name) + "\"" + counts + ">\n";
  for (const JUnitCase& c : suite.cases) {
    out += "    <testcase classname=\"" + escaped(c.classname) + "\" name=\"" + escaped(c.name) + "\" time=\"" +
           seconds_text(c.seconds) + "\"";
    switch (c.outcome) {
      case JUnitCase::Outcome::Passed: out += "/>\n"; continue;
      case JUnitCase::Outcome::Failed:
        out += ">\n      <failure message=\"" + escaped(c.message) + "\">" + escaped(c.details) + "</failure>\n";
        break;
      case JUnitCase::Outcome::Skipped: out += ">\n      <skipped message=\"" + escaped(c.message) + "\"/>\n"; break;
    }
    out += "    </testcase>\n";
  }
  return out + "  </testsuite>\n</testsuites>\n";
}

}  // namespace parity::reports
