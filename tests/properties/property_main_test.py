#!/usr/bin/env python3
"""parity_property_tests refuses an RC_PARAMS that would make a green run test other than what was asked, and
both test binaries fail a run that selects no test.

usage: property_main_test.py PROPERTY_TESTS_BINARY UNIT_TESTS_BINARY

RapidCheck ignores keys it does not know (a typo such as max_sucess=5) and passes every property with max_success=0,
which runs no case. The binary's own main (properties/property_tests_main.cpp) must fail on both before any test
runs: exit 2 naming the unknown key and listing the known ones, exit 6 for no case, exit 2 for a malformed value
or a key given twice (RapidCheck keeps one of them silently). A
valid RC_PARAMS must still run the properties, and listing the tests (ctest's discovery) must not be refused. A
--gtest_filter that matches nothing (a typo) must exit 1 in both binaries, as a failed test does.
"""
import os
import subprocess
import sys

# One quick property, so that a binary that does not check RC_PARAMS finishes at once and fails this test.
ONE_PROPERTY = "--gtest_filter=CloneProperties.CloneDoesNotAlias"
failures = []


def fail(message):
    failures.append(message)
    print(f"property_main: FAIL: {message}", file=sys.stderr)


def run(binary, params, *args):
    env = dict(os.environ, RC_PARAMS=params)
    p = subprocess.run([binary, ONE_PROPERTY, *args], env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def expect(binary, params, code, fragments, *args):
    got, out = run(binary, params, *args)
    if got != code:
        fail(f"RC_PARAMS=\"{params}\" {' '.join(args)}: exit {got}, expected {code}; output:\n{out[-1500:]}")
        return
    for fragment in fragments:
        if fragment not in out:
            fail(f"RC_PARAMS=\"{params}\": the output does not say \"{fragment}\":\n{out[-1500:]}")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(argv[1])
    expect(binary, "max_sucess=5", 2, ['"max_sucess", which RapidCheck does not know',
                                       "max_discard_ratio, max_size, max_success, noshrink"])
    expect(binary, "max_success=5 seed=1 verbose_shrinking=1 bogus='a b'", 2, ['"bogus"'])
    expect(binary, "max_success=0", 6, ["runs no case of any property (max_success=0)"])
    expect(binary, "max_success=3 max_size=5 max_success=0", 2, ['gives "max_success" 2 times'])
    expect(binary, "max_success = 3 seed=2 max_success=4", 2, ['gives "max_success" 2 times'])
    expect(binary, "max_success=x", 2, ["is not a RapidCheck configuration", "max_success"])
    expect(binary, "max_success=3 seed=7", 0, ["[  PASSED  ] 1 test"])
    expect(binary, "max_success=0", 0, ["CloneDoesNotAlias"], "--gtest_list_tests")
    nothing = "--gtest_filter=NoSuch.Test"
    expect(binary, "max_success=3", 1, ["no test matches --gtest_filter=NoSuch.Test"], nothing)
    p = subprocess.run([os.path.abspath(argv[2]), nothing], capture_output=True, text=True, timeout=120)
    if p.returncode != 1 or "no test matches" not in p.stdout + p.stderr:
        fail(f"{argv[2]} {nothing}: exit {p.returncode}, expected 1 saying no test matches:\n"
             f"{(p.stdout + p.stderr)[-1500:]}")
    if failures:
        print(f"property_main: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("property_main: ok: unknown and repeated keys and max_success=0 refused (2, 6), valid RC_PARAMS runs, an empty "
          "selection fails (1)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
