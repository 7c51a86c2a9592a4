// reports/junit: the JUnit XML that fuzz --junit and replay --all --junit write for CI systems.
#include "reports/junit.h"

#include <gtest/gtest.h>

namespace parity::reports {
namespace {

using Outcome = JUnitCase::Outcome;

TEST(JUnit, CountsEachOutcomeAndEscapesText) {
  JUnitSuite suite{"parity fuzz", 1.5, {}};
  suite.cases.push_back({"parity.fuzz", "campaign", Outcome::Passed, "", "", 1.5});
  suite.cases.push_back({"groups", "mul:values", Outcome::Failed, "3 cases <diverge> & \"more\"", "a\nb", 0});
  suite.cases.push_back({"groups", "add:values", Outcome::Skipped, "expected: 1.13's 'quirk'", "", 0});
  const std::string xml = junit_xml(suite);
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"parity fuzz\" tests=\"3\" "
                      "failures=\"1\" errors=\"0\" skipped=\"1\" time=\"1.500\">",
                      0),
            0u)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"parity.fuzz\" name=\"campaign\" time=\"1.500\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"3 cases &lt;diverge&gt; &amp; &quot;more&quot;\">a\nb</failure>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"expected: 1.13&#39;s &#39;quirk&#39;\"/>"), std::string::npos) << xml;
  EXPECT_EQ(xml.substr(xml.size() - 29), "  </testsuite>\n</testsuites>\n");
}

TEST(JUnit, ACharacterXmlCannotHoldBecomesTheReplacementCharacter) {
  JUnitSuite suite{"s", 0, {{"c", std::string("bell\x07") + "\x1b[31m", Outcome::Passed, "", "", 0}}};
  const std::string xml = junit_xml(suite);
  EXPECT_NE(xml.find("name=\"bell\xEF\xBF\xBD\xEF\xBF\xBD[31m\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find('\x07'), std::string::npos);
}

}  // namespace
}  // namespace parity::reports
