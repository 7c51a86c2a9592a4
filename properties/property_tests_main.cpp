// The main of parity_property_tests: GoogleTest's, after a check of RC_PARAMS. RapidCheck reads that variable on
// its own terms: a key it does not know (`max_sucess=5`, a typo) is ignored, and `max_success=0` runs no case of
// any property, which then passes. Either gives a green run that tested other than what was asked, so both fail
// here before any test runs, with statuses a script can tell from a failed test (1):
//   2  RC_PARAMS cannot be parsed, names a key RapidCheck does not know (the message lists the keys it knows), or
//      names a key twice (RapidCheck keeps one of them silently)
//   6  RC_PARAMS asks for no case (max_success=0), as `parity fuzz` exits 6 for a campaign given no case
// Listing the tests (--gtest_list_tests, which ctest's discovery runs) checks nothing: it runs no property. A run
// that selects no test fails (properties/run_selected_tests.h).
#include <gtest/gtest.h>
#include <rapidcheck/detail/Configuration.h>

#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <map>
#include <string_view>
#include <string>

#include "properties/run_selected_tests.h"

namespace rc::detail {
// RapidCheck's own parser of configuration strings (its src/detail/MapParser.h, which is not installed; the function
// is exported by librapidcheck). Reading the keys with it applies exactly RapidCheck's quoting rules.
std::map<std::string, std::string> parseMap(const std::string& str);
}  // namespace rc::detail

namespace {

constexpr int kExitBadParams = 2;
constexpr int kExitNoCases = 6;

// The keys RapidCheck knows: those it writes for a configuration of its own.
std::map<std::string, std::string> known_keys() {
  return rc::detail::parseMap(rc::detail::configToString(rc::detail::Configuration()));
}

std::string listed(const std::map<std::string, std::string>& keys) {
  std::string out;
  for (const auto& [key, value] : keys) out += (out.empty() ? "" : ", ") + key;
  return out;
}

// How many words of `params` start with `key=` (spaces around '=' allowed). A quoted value holding " key=" would
// count too; RapidCheck's values (numbers, a reproduce string) hold none.
int assignments(std::string_view params, const std::string& key) {
  int n = 0;
  for (std::size_t i = params.find(key); i != std::string_view::npos; i = params.find(key, i + 1)) {
    if (i > 0 && !std::isspace(static_cast<unsigned char>(params[i - 1]))) continue;
    std::size_t j = i + key.size();
    while (j < params.size() && std::isspace(static_cast<unsigned char>(params[j]))) ++j;
    if (j < params.size() && params[j] == '=') ++n;
  }
  return n;
}

// 0 when RC_PARAMS (absent, or `params`) asks for a run that tests something; otherwise says why on stderr and
// returns the exit status.
int check_rc_params(const char* params) {
  if (!params) return 0;
  rc::detail::Configuration config;
  try {
    // RapidCheck's parse first: it refuses malformed strings and bad values of the keys it knows.
    config = rc::detail::configFromString(params);
  } catch (const rc::detail::ConfigurationException& e) {
    std::fprintf(stderr, "parity_property_tests: RC_PARAMS=\"%s\" is not a RapidCheck configuration: %s\n", params,
                 e.what());
    return kExitBadParams;
  }
  const auto known = known_keys();
  for (const auto& [key, value] : rc::detail::parseMap(params)) {
    // parseMap keeps one value per key, silently: a key given twice (a CI setting and a local one concatenated)
    // would run with whichever it kept.
    if (const int times = assignments(params, key); times > 1) {
      std::fprintf(stderr,
                   "parity_property_tests: RC_PARAMS gives \"%s\" %d times; RapidCheck would keep one of them "
                   "silently: give it once\n",
                   key.c_str(), times);
      return kExitBadParams;
    }
    if (known.count(key)) continue;
    std::fprintf(stderr,
                 "parity_property_tests: RC_PARAMS names \"%s\", which RapidCheck does not know and would ignore; "
                 "its keys are: %s\n",
                 key.c_str(), listed(known).c_str());
    return kExitBadParams;
  }
  if (config.testParams.maxSuccess == 0) {
    std::fprintf(stderr,
                 "parity_property_tests: RC_PARAMS=\"%s\" runs no case of any property (max_success=0), so every "
                 "property would pass untested; give max_success a positive count\n",
                 params);
    return kExitNoCases;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!GTEST_FLAG_GET(list_tests)) {
    if (const int status = check_rc_params(std::getenv("RC_PARAMS")); status != 0) return status;
  }
  return parity::properties::run_selected_tests("parity_property_tests");
}
