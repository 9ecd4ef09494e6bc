#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checker of the crash harness for BlobFS (tests/crash/crash.py, component "blobfs").

    crash_blobfs.py --unvme PATH --writer PATH --dev URI --log FILE --seed S

The writer (tests/integration/blobfs_crash_writer run DEV SEED, stdout into FILE) printed
"OP i" before operation i and "SYNCED i" once blobfs_sync() after operation i returned. The
checker, as a user would after the crash:
  1. `unvme fsck DEV -o json` before anything mounts: no error in the state the kill left;
  2. `blobfs_crash_writer verify DEV SEED SYNCED STARTED`: mounts (the journal replays) and
     finds the namespace equal to the model's after some operation M, SYNCED <= M <= STARTED,
     and every file untouched since SYNCED with exactly its synced bytes;
  3. fsck again: the mount left a clean file system.
It prints one JSON verdict like the C checkers (ops started, durable = operations synced,
checked = synced files compared, lost = files that differ, violations, first)."""
import argparse
import json
import re
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for a in ("unvme", "writer", "dev", "log", "seed"):
        ap.add_argument(f"--{a}", required=True)
    o = ap.parse_args()
    started = synced = 0
    with open(o.log, errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == "OP" and w[1].isdigit():
                started = int(w[1])
            elif len(w) >= 2 and w[0] == "SYNCED" and w[1].isdigit():
                synced = int(w[1])
    v = {"component": "blobfs", "ops": started, "acked": max(started - 1, 0), "durable": synced,
         "checked": 0, "lost": 0, "corrupt": 0, "violations": 0, "first": None}

    def violation(what):
        v["violations"] += 1
        v["first"] = v["first"] or what

    def fsck(when):
        r = subprocess.run([o.unvme, "fsck", o.dev, "-o", "json"], capture_output=True,
                           text=True, timeout=300)
        try:
            rep = json.loads(r.stdout)
        except ValueError:
            violation(f"fsck {when}: no report (exit {r.returncode}): {r.stderr.strip()[-300:]}")
            return None
        if rep.get("errors", 1) != 0:
            v["corrupt"] += rep.get("errors", 1)
            violation(f"fsck {when}: {r.stdout.strip()[-400:]}")
        return rep

    fsck("after the kill")
    r = subprocess.run([o.writer, "verify", o.dev, o.seed, str(synced), str(started)],
                       capture_output=True, text=True, timeout=300)
    m = re.search(r"(\d+) synced files checked, (\d+) bad", r.stdout)
    if m:
        v["checked"], v["lost"] = int(m.group(1)), int(m.group(2))
    if r.returncode != 0:
        violation(f"seed {o.seed}, killed after op {started} (synced {synced}): "
                  f"{(r.stdout + r.stderr).strip()[-500:]}")
    rep = fsck("after the mount")
    if rep is not None and rep.get("clean_unmount") is not True:
        violation("the file system is not clean after a mount and unmount: "
                  + json.dumps(rep)[:300])
    print(json.dumps(v))
    return 1 if v["violations"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
