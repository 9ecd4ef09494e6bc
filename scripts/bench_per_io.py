#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The driver's and the emulated device's cost per I/O, alone: `unvme perf` on a null
namespace, 512 B random reads on one core (CPU 0), inline mode, at QD 128 and QD 1.

What runs: the tool's I/O loop, the driver (command, PRPs, doorbell, completion), and inside
the doorbell write the emulated controller (fetch, checks, the PRP walk through its IOMMU, the
completion entry). The null namespace discards the data, so no byte is copied: the memory
namespace's figures (bench_qd.py) add the copy.

There is no baseline that does the same work, so these are absolute budgets: at most 35 ns of
CPU per I/O at QD 128 and 60 ns at QD 1 (SPDK publishes about 100 ns for its driver alone on
hardware). The comparison against a baseline is fio with our engine against fio's null engine
(plugins/fio/bench_fio.py). CPU per I/O is measured (the process's CPU time over the run,
every thread); busy per I/O is the polling thread's wall time, for reference.

  BUILD=build python3 scripts/bench_per_io.py [--seconds N] [--json out.json]
"""
import sys

import bench_common as bc

DEVICE = "emu://perio?ns=null:1T:512"
TARGET_NS = {128: 35.0, 1: 60.0}


def run(a):
    bc.need(bc.UNVME, "unvme")
    seconds = a.seconds or (1 if bc.QUICK else 3)
    rows = []
    for qd in (128, 1):
        runs = [bc.perf([DEVICE], 512, qd, seconds) for _ in range(bc.ROUNDS)]
        rows.append({"qd": qd, "runs": runs, "iops": bc.collect(runs, "iops"),
                     "cpu_ns": bc.collect(runs, "cpu_ns"), "busy_ns": bc.collect(runs, "busy_ns")})
    return {"seconds": seconds, "rounds": bc.ROUNDS, "device": DEVICE, "rows": rows,
            "target_ns": {str(k): v for k, v in TARGET_NS.items()}}


def render(d):
    targets = d["target_ns"]
    if not isinstance(targets, dict):  # results of an older run: one budget, at QD 128
        targets = {"128": targets}
    rows, verdicts = [], []
    for r in d["rows"]:
        t = targets.get(str(r["qd"]))
        cpu = r["cpu_ns"]["median"]
        verdict = f"<= {t:.0f} ns: {'met' if cpu <= t else 'NOT met'}" if t else "-"
        rows.append([f"512 B randread, QD {r['qd']}", bc.fmt(r["iops"]),
                     bc.fmt(r["cpu_ns"], bc.num(1)), bc.fmt(r["busy_ns"], bc.num(1)), verdict])
        if t:
            verdicts.append(f"QD {r['qd']} {cpu:.1f} ns (budget {t:.0f}, "
                            f"{'met' if cpu <= t else 'NOT met'})")
    return "\n".join([
        f"`unvme perf` on a null namespace (`{d['device']}`), one core (CPU 0), inline mode; "
        f"median of {d['rounds']} runs of {d['seconds']} s (range in brackets).", "",
        bc.table(["scenario", "IOPS", "CPU ns per I/O (measured)", "busy ns per I/O", "budget"],
                 rows, "lrrrl"), "",
        "Budgets: " + "; ".join(verdicts) + ". No baseline does this work; the per-I/O "
        "comparison is fio with our engine against fio's null engine (next section)."])


def add_args(ap):
    ap.add_argument("--seconds", type=int, default=0)


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
