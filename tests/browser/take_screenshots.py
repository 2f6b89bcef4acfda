#!/usr/bin/env python3
"""Writes docs/images/console-*.png: the browser test's walk through the console
(console_test.mjs with SCREENSHOT_DIR), against a server on the demo models. Run once by
hand after a visible change, not in `make test`:

    /usr/bin/python3 tests/browser/take_screenshots.py [build/infera] [demo-models dir]
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if len(sys.argv) > 1:
    os.environ["INFERA_BINARY"] = os.path.abspath(sys.argv[1])
if len(sys.argv) > 2:
    os.environ["INFERA_DEMO_REPO"] = os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

import test_console  # noqa: E402  (after the environment is set)


def main():
    out = os.path.join(ROOT, "docs", "images")
    os.makedirs(out, exist_ok=True)
    os.environ["SCREENSHOT_DIR"] = out
    fixtures = [test_console.server.__wrapped__(), test_console.plain_server.__wrapped__(),
                test_console.keyed_server.__wrapped__()]
    started = []
    try:
        for fixture in fixtures:
            started.append(next(fixture))
        test_console.test_console_in_chromium(*started)
    finally:
        for fixture in fixtures[:len(started)]:
            next(fixture, None)
    print("wrote", sorted(f for f in os.listdir(out) if f.startswith("console-")))


if __name__ == "__main__":
    main()
