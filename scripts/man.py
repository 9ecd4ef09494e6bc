#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Builds one man page (meson runs it): the page's scdoc source, with its @COMMANDS@ line
replaced by what `unvme --man-scdoc GROUP` writes from the tool's command table, through
Debian's scdoc into roff.

  man.py SOURCE.scd OUTPUT [UNVME GROUP]
"""
import subprocess
import sys


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__.strip().splitlines()[-1])
    src, out = sys.argv[1], sys.argv[2]
    text = open(src).read()
    if len(sys.argv) == 5:
        tool, group = sys.argv[3], sys.argv[4]
        gen = subprocess.run([tool, "--man-scdoc", group], capture_output=True, text=True,
                             env={"UNVME_QUIET": "1"})
        if gen.returncode != 0:
            sys.exit(f"man.py: {tool} --man-scdoc {group}: {gen.stderr.strip()}")
        if "@COMMANDS@\n" not in text:
            sys.exit(f"man.py: {src} has no @COMMANDS@ line for the commands of {group}")
        text = text.replace("@COMMANDS@\n", gen.stdout)
    p = subprocess.run(["scdoc"], input=text, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"man.py: scdoc on {src}: {p.stderr.strip()}")
    with open(out, "w") as f:
        f.write(p.stdout)


if __name__ == "__main__":
    main()
