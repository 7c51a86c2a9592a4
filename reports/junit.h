// JUnit XML, the test-result format CI systems read (Jenkins, GitLab, GitHub's test reporters): `parity fuzz
// --junit` writes one test case per group of findings, `parity replay --all --junit` one per replayed finding.
#pragma once
#include <string>
#include <vector>

namespace parity::reports {

struct JUnitCase {
  enum class Outcome { Passed, Failed, Skipped };
  std::string classname;  // what the case belongs to: "parity.fuzz", a findings file
  std::string name;
  Outcome outcome = Outcome::Passed;
  std::string message;  // one line: the failure's or the skip's reason
  std::string details;  // the failure's body: the first difference, how to replay it
  double seconds = 0;
};

struct JUnitSuite {
  std::string name;
  double seconds = 0;
  std::vector<JUnitCase> cases;
};

// The document: one <testsuites> holding the suite, its counts, and each case; text escaped for XML (characters
// XML 1.0 cannot hold at all become U+FFFD).
std::string junit_xml(const JUnitSuite&);

}  // namespace parity::reports
