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

With --cache, the targets of issue 31 that a quiet make bench missed, each side of its
comparison: instructions, first-level and last-level data cache misses per I/O from
callgrind's cache model (--cache-sim=yes: this machine's cache sizes, LRU; hardware counters
are not available in these VMs), and cycles estimated the way KCachegrind does (instructions
+ 10 per L1 miss + 100 per last-level miss). 4 KiB random reads at QD 1 against the floor's
copies one after the other (the 1 GiB region of make bench's sweep on both sides), the null
namespace at QD 1, and fio with our engine against fio's null engine.

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


def callgrind(cmd, toggle=None, cache=False):
    with tempfile.NamedTemporaryFile(suffix=".cg", delete=False) as f:
        out = f.name
    args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if toggle:
        args.append(f"--toggle-collect={toggle}")
    if cache:
        args.append("--cache-sim=yes")
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


FIO_NULL = ["--ioengine=null", "--size=1T"]


def our_engine(name):
    """fio's arguments for our engine on a null namespace."""
    return [f"--ioengine=external:{bc.FIO_ENGINE}",
            f"--filename={bc.fio_esc(f'emu://{name}?ns=null:1T:512')}"]


def fio_runs(engine_args, cache=False):
    """Costs of the whole fio process over 200000 I/Os: a long run minus a short one."""
    res = {}
    for n in (20000, 220000):
        cmd = ["fio", "--output-format=json", "--thread=1", "--cpus_allowed=0", "--name=x",
               *engine_args, "--rw=randread", "--bs=512", "--iodepth=128",
               "--iodepth_batch_submit=32", "--iodepth_batch_complete_min=32",
               f"--number_ios={n}"]
        out, _ = callgrind(cmd, cache=cache)
        res[n] = totals(out) if cache else self_costs(out)
    keys = set(res[20000]) | set(res[220000])
    return {k: res[220000].get(k, 0) - res[20000].get(k, 0) for k in keys}


def fio_case(engine_args):
    """Instructions per I/O of the whole fio process, by component."""
    return {k: v / 200000 for k, v in fio_runs(engine_args).items()}


CACHE_EVENTS = ("Ir", "D1mr", "D1mw", "DLmr", "DLmw", "I1mr", "ILmr")


def totals(out_file):
    """{event: count} of a cache-simulating callgrind run (its PROGRAM TOTALS line)."""
    p = subprocess.run(["callgrind_annotate", "--show=" + ",".join(CACHE_EVENTS), "--auto=no",
                        "--threshold=100", out_file], capture_output=True, text=True, check=True)
    for line in p.stdout.splitlines():
        if "PROGRAM TOTALS" in line:
            nums = re.findall(r"([\d,]+)(?:\s+\([\s\d.]+%\))?", line.split("PROGRAM")[0])
            vals = [int(n.replace(",", "")) for n in nums if n.strip(",")]
            return dict(zip(CACHE_EVENTS, vals))
    raise RuntimeError(f"no PROGRAM TOTALS in callgrind_annotate's output for {out_file}")


def per_op(ev, ops):
    """Instructions, misses and estimated cycles per operation from event totals."""
    l1 = ev.get("D1mr", 0) + ev.get("D1mw", 0) + ev.get("I1mr", 0)
    ll = ev.get("DLmr", 0) + ev.get("DLmw", 0) + ev.get("ILmr", 0)
    return {"instructions": ev.get("Ir", 0) / ops, "l1_misses": l1 / ops, "ll_misses": ll / ops,
            "cycles_est": (ev.get("Ir", 0) + 10 * l1 + 100 * ll) / ops}


def perf_cache_case(ns, bs, qd, fill):
    cmd = [bc.UNVME, "perf", f"emu://profc?ns={ns}", "-w", "randread", "-b", bs, "-q", qd,
           "-t", 1, "-c", 0, "-o", "json", *(["--fill"] if fill else [])]
    out, stdout = callgrind(cmd, toggle="perf_thread_main", cache=True)
    return per_op(totals(out), json.loads(stdout)["total"]["ios"] + qd)


def floor_cache_case(block, region):
    """memcpy_floor's copies one after the other: a long run minus a short one (the region's
    set-up is in both), per copy."""
    res = {}
    for secs in (1, 3):
        out, stdout = callgrind([bc.MEMCPY_FLOOR, block, region, secs, 0, 1], cache=True)
        d = json.loads(stdout)
        res[secs] = (totals(out), d["copies_per_s"] * d["cpu_s"])
    (ev1, n1), (ev3, n3) = res[1], res[3]
    return per_op({k: ev3[k] - ev1.get(k, 0) for k in ev3}, n3 - n1)


def fio_cache_case(engine_args):
    return per_op(fio_runs(engine_args, cache=True), 200000)


def run_cache():
    bc.need(bc.MEMCPY_FLOOR, "memcpy_floor")
    region = 1 << 30  # the queue-depth sweep's namespace (make bench)
    cases = {
        "unvme perf, memory (1 GiB), 4 KiB, QD 1": perf_cache_case("mem:1G:512", 4096, 1, True),
        "memcpy_floor, 4 KiB, one copy at a time (1 GiB)": floor_cache_case(4096, region),
        "unvme perf, null, 512 B, QD 1": perf_cache_case("null:1T:512", 512, 1, False),
    }
    if shutil.which("fio") and bc.FIO_ENGINE.exists():
        cases["fio + our engine, null, 512 B, QD 128"] = fio_cache_case(our_engine("profcf"))
        cases["fio null engine, the same job"] = fio_cache_case(FIO_NULL)
    return {"build": str(bc.BUILD), "cache_cases": cases}


def run(a):
    bc.need(bc.UNVME, "unvme")
    cases = {
        "perf null 512 B QD 128": perf_case("null:1T:512", 512, 128, False),
        "perf null 512 B QD 1": perf_case("null:1T:512", 512, 1, False),
        "perf mem 512 B QD 32": perf_case("mem:64M:512", 512, 32, True),
        "perf mem 4 KiB QD 32": perf_case("mem:64M:512", 4096, 32, True),
    }
    if shutil.which("fio") and bc.FIO_ENGINE.exists():
        cases["fio + our engine, null"] = fio_case(our_engine("proff"))
        cases["fio null engine"] = fio_case(FIO_NULL)
    return {"build": str(bc.BUILD), "cases": cases}


def render_cache(d):
    rows = [[case, f"{c['instructions']:.0f}", f"{c['l1_misses']:.1f}", f"{c['ll_misses']:.1f}",
             f"{c['cycles_est']:.0f}"] for case, c in d["cache_cases"].items()]
    return "\n".join([
        "Per I/O (per copy for the floor), callgrind's cache model; " + d["build"] + ".", "",
        bc.table(["scenario", "instructions", "L1 misses", "last-level misses",
                  "cycles (estimate)"], rows)])


def render(d):
    names = ["tool", "fio", "fio engine", "driver", "device", "libc", "other", "total"]
    rows = [[case, *[f"{c.get(n, 0):.0f}" for n in names]] for case, c in d["cases"].items()]
    return "\n".join([
        "Instructions per I/O (callgrind), by component; " + d["build"] + ".", "",
        bc.table(["scenario", *names], rows)])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    ap.add_argument("--cache", action="store_true",
                    help="the missed targets' both sides with callgrind's cache model")
    a = ap.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if not shutil.which(tool):
            sys.exit(f"bench_profile: {tool} is not installed (Debian's valgrind)")
    data = run_cache() if a.cache else run(a)
    print(render_cache(data) if a.cache else render(data))
    if a.json:
        open(a.json, "w").write(json.dumps(data, indent=2) + "\n")
