#!/usr/bin/env python3
"""Sums meson test logs into one line: N passed, N failed, N skipped.

Usage: tools/test-summary.py TESTLOG.json...

Each file is a log meson test writes (build/meson-logs/testlog.json, or
testlog-SETUP.json under --setup SETUP): one JSON object per test, whose
"result" counts as passed (OK, EXPECTEDFAIL), skipped (SKIP) or failed
(anything else: FAIL, TIMEOUT, UNEXPECTEDPASS, ERROR, ...; also a line that
is not such an object, as a log cut short when meson was killed). A file
that is missing counts no tests. Used by tools/test.sh and .ci/run, so that
both count alike.

Exit status: 1 if a test failed or none ran (nothing passed or failed), else 0.
"""
import json
import sys


def main(paths):
    passed = failed = skipped = 0
    for path in paths:
        try:
            f = open(path, encoding="utf-8", errors="replace")
        except FileNotFoundError:
            continue
        with f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    result = json.loads(line).get("result", "")
                except (ValueError, AttributeError):
                    print(f"{path}:{n}: not a test result, counted as failed",
                          file=sys.stderr)
                    result = ""
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    if passed + failed == 0:
        print("no tests ran")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or passed + failed == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
