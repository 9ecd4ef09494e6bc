#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where the time of an I/O goes, in instructions: valgrind's callgrind counts the instructions
each function executes, the same on a quiet machine and a busy one (wall-clock figures are
not), so this is what the I/O path was optimized with. Not part of make bench: a run takes
several minutes (callgrind runs the code about 50 times slower).

Scenarios (one core, the I/O loop alone: unvme perf's worker threads, --toggle-collect):
  perf null 512 B QD 128 / QD 1   unvme perf on a null namespace
  perf mem 512 B / 4 KiB QD 32    unvme perf on a 64 MiB memory namespace, written first
  fio engine / fio null           512 B random reads, QD 128, batches of 32: fio with our engine
                                  on a null namespace and fio's null engine, the whole process,
                                  as the difference of a long and a short run over their I/Os
Instructions per I/O by component: the tool's loop (tools/), the driver (lib/driver), the
emulated device (hw/emu), the fio engine (plugins/fio), fio itself, libc (memcpy and the rest).

Needs a build with debug information, so that callgrind can tell the files apart:
  meson setup build-prof -Dbuildtype=release -Ddebug=true && ninja -C build-prof
  BUILD=build-prof python3 scripts/bench_profile.py [--json out.json]
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile

import bench_common as bc

COMPONENTS = (("tool", ("/tools/",)), ("driver", ("/lib/driver/",)), ("device", ("/hw/emu/",)),
              ("fio engine", ("/plugins/fio/",)), ("fio", ("/usr/bin/fio",)),
              ("libc", ("libc.so", "/string/", "libc")))


def component(fl):
    obj = fl[fl.rindex(" [") + 2:-1] if fl.endswith("]") and " [" in fl else ""
    fl = fl[:fl.rindex(" [")] if obj else fl
    if fl.startswith("???"):  # no debug information: the object it is in
        fl = obj
    for name, keys in COMPONENTS:
        if any(k in fl for k in keys):
            return name
    return "other"


def self_costs(out_file):
    """{component: instructions} from callgrind_annotate's per-function self costs."""
    p = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no",
                        out_file], capture_output=True, text=True, check=True)
    total, by, listing = 0, {}, False
    for line in p.stdout.splitlines():
        if "file:function" in line:
            listing = True  # the per-function list starts after this header
            continue
        m = re.match(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*)$", line)
        if not listing or not m or "PROGRAM TOTALS" in line:
            continue
        n = int(m.group(1).replace(",", ""))
        c = component(m.group(2))
        by[c] = by.get(c, 0) + n
        total += n
    by["total"] = total
    return by


def callgrind(cmd, toggle=None):
    with tempfile.NamedTemporaryFile(suffix=".cg", delete=False) as f:
        out = f.name
    args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if toggle:
        args.append(f"--toggle-collect={toggle}")
    p = subprocess.run([*args, *[str(c) for c in cmd]], capture_output=True, text=True,
                       env=bc.ENV, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: {p.stderr[-1500:]}")
    return out, p.stdout


def perf_case(ns, bs, qd, fill):
    cmd = [bc.UNVME, "perf", f"emu://prof?ns={ns}", "-w", "randread", "-b", bs, "-q", qd,
           "-t", 1, "-c", 0, "-o", "json", *(["--fill"] if fill else [])]
    out, stdout = callgrind(cmd, toggle="perf_thread_main")
    ios = json.loads(stdout)["total"]["ios"]
    # the loop's I/Os: those measured plus the queue's worth in flight at the ends
    costs = self_costs(out)
    return {k: v / (ios + qd) for k, v in costs.items()}


def fio_case(engine_args):
    """Instructions per I/O of the whole fio process: a long run minus a short one."""
    res = {}
    for n in (20000, 220000):
        cmd = ["fio", "--output-format=json", "--thread=1", "--cpus_allowed=0", "--name=x",
               *engine_args, "--rw=randread", "--bs=512", "--iodepth=128",
               "--iodepth_batch_submit=32", "--iodepth_batch_complete_min=32",
               f"--number_ios={n}"]
        out, _ = callgrind(cmd)
        res[n] = self_costs(out)
    keys = set(res[20000]) | set(res[220000])
    return {k: (res[220000].get(k, 0) - res[20000].get(k, 0)) / 200000 for k in keys}


def run(a):
    for tool in ("valgrind", "callgrind_annotate"):
        if not shutil.which(tool):
            sys.exit(f"bench_profile: {tool} is not installed (Debian's valgrind)")
    bc.need(bc.UNVME, "unvme")
    cases = {
        "perf null 512 B QD 128": perf_case("null:1T:512", 512, 128, False),
        "perf null 512 B QD 1": perf_case("null:1T:512", 512, 1, False),
        "perf mem 512 B QD 32": perf_case("mem:64M:512", 512, 32, True),
        "perf mem 4 KiB QD 32": perf_case("mem:64M:512", 4096, 32, True),
    }
    if shutil.which("fio") and bc.FIO_ENGINE.exists():
        cases["fio + our engine, null"] = fio_case([f"--ioengine=external:{bc.FIO_ENGINE}",
                                                    f"--filename={bc.fio_esc('emu://proff?ns=null:1T:512')}"])
        cases["fio null engine"] = fio_case(["--ioengine=null", "--size=1T"])
    return {"build": str(bc.BUILD), "cases": cases}


def render(d):
    names = ["tool", "fio", "fio engine", "driver", "device", "libc", "other", "total"]
    rows = [[case, *[f"{c.get(n, 0):.0f}" for n in names]] for case, c in d["cases"].items()]
    return "\n".join([
        "Instructions per I/O (callgrind), by component; " + d["build"] + ".", "",
        bc.table(["scenario", *names], rows)])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    a = ap.parse_args()
    data = run(a)
    print(render(data))
    if a.json:
        open(a.json, "w").write(json.dumps(data, indent=2) + "\n")
