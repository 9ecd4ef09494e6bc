#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Device-thread benchmarks for make bench: the emulated controller in thread mode with the
latency model of a datacenter NVMe SSD, measured against the model's theoretical line.

The model (docs/devices.md, "Latency model"): 4 KiB reads take RLAT on one of UNITS parallel
units, so a device can do at most UNITS / RLAT IOPS (48 / 80 us = 600K) and QD commands in
flight at most QD / RLAT. Theory = min(QD / RLAT, devices * UNITS / RLAT).

1. QD sweep, 1 core : 1 device, QD 1..256: measured IOPS and latency against the theory, with
   a plot of both (KIOPS against QD).
2. The original SDK's core-to-device layouts: one core driving 1 device (1:1) and 4 devices
   (1:4), and 2 cores driving 2 devices (N:N; `unvme perf` gives every core a queue pair on
   every device).

Every device's blocks are written first (`unvme perf --fill`): a read of a never-written block
of a memory namespace would come from the kernel's zero page. Every figure is the median of
the rounds (3) with their range.

The engine threads (the "hardware") need a CPU too. This machine has two: the device engines
share one thread (engine=0) pinned to CPU 1 while one core submits on CPU 0. N:N leaves no CPU
of its own for the engine, so it shares CPU 1 with a submitting thread that never stops
polling, and the kernel's time slices (milliseconds) show in its latency: that row measures
the 2-CPU machine, not the driver.

  BUILD=build python3 scripts/bench_devthread.py [--seconds N] [--json out.json] [--plot-dir DIR]
"""
import pathlib
import sys

import bench_common as bc

QDS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
RLAT_US, WLAT_US, UNITS = 80, 20, 48
LAYOUTS = (("1:1", 1, "0", 128), ("1:4", 4, "0", 32), ("N:N (2:2)", 2, "0,1", 32))


def device(name, size):
    return (f"emu://{name}?ns=mem:{size}:4096&mode=thread&rlat={RLAT_US}us&wlat={WLAT_US}us"
            f"&units={UNITS}&engine=0&cpu=1")


def theory(total_qd, ndev):
    return min(total_qd, ndev * UNITS) / (RLAT_US / 1e6)


def measure(devices, qd, cores, seconds):
    return bc.perf(devices, 4096, qd, seconds, cores=cores, fill=True)


def summarize(runs, model):
    r = {k: bc.collect(runs, k) for k in ("iops", "p50_us", "p99_us", "cpu_ns")}
    r["theory"] = model
    r["ratio"] = {k: v / model for k, v in r["iops"].items() if k != "runs"}
    r["ratio"]["runs"] = [v / model for v in r["iops"]["runs"]]
    r["runs"] = runs
    return r


def run(a):
    if bc.ncpus() < 2:
        sys.exit("bench_devthread: needs 2 CPUs (one submits, one runs the device engine)")
    bc.need(bc.UNVME, "unvme")
    seconds = a.seconds or (1 if bc.QUICK else 2)
    size = "16M" if bc.QUICK else "256M"
    qds = [int(q) for q in a.qds.split(",")] if a.qds else ([1, 64] if bc.QUICK else list(QDS))
    sweep_runs = {qd: [] for qd in qds}
    layout_runs = {name: [] for name, *_ in LAYOUTS}
    for _ in range(bc.ROUNDS):
        for qd in qds:
            sweep_runs[qd].append(measure([device("ssd", size)], qd, "0", seconds))
        for name, ndev, cores, qd in LAYOUTS:
            layout_runs[name].append(measure([device(f"d{i}", size) for i in range(ndev)], qd,
                                             cores, seconds))
    sweep = []
    for qd in qds:
        r = summarize(sweep_runs[qd], theory(qd, 1))
        r["qd"] = qd
        sweep.append(r)
    layouts = []
    for name, ndev, cores, qd in LAYOUTS:
        total_qd = qd * ndev * len(cores.split(","))
        r = summarize(layout_runs[name], theory(total_qd, ndev))
        r.update(layout=name, devices=ndev, cores=cores, qd_per_qpair=qd, total_qd=total_qd)
        layouts.append(r)
    png = pathlib.Path(a.plot_dir) / "devthread-qd.png"
    why = bc.plot_lines(png, f"4 KiB random read, SSD model ({RLAT_US} us, {UNITS} units), "
                        "1 core : 1 device", "queue depth", "KIOPS", qds,
                        [{"label": "measured (unvme perf, 1 core)", "style": "o-",
                          "y": [r["iops"]["median"] / 1e3 for r in sweep]},
                         {"label": "model: min(QD, units) / rlat", "style": "k--",
                          "y": [r["theory"] / 1e3 for r in sweep]}])
    return {"seconds": seconds, "size": size, "rounds": bc.ROUNDS, "sweep": sweep,
            "layouts": layouts, "core_to_core_ns": bc.core_to_core_ns(),
            "plots": {"qd": None if why else str(png)}}


def k(x):
    return f"{x / 1e3:.1f}"


def render(d):
    c2c = d.get("core_to_core_ns")
    out = [f"Device-thread mode, SSD latency model: 4 KiB random reads, rlat {RLAT_US} us, "
           f"{UNITS} parallel units ({UNITS / RLAT_US * 1e3:.0f}K IOPS per device), wlat {WLAT_US} us; "
           f"{d['size']} per device, every block written first (--fill); engine threads share "
           f"CPU 1; {d['seconds']} s per point, median of {d['rounds']} runs (range in brackets)"
           + (f"; cache line CPU 0 <-> 1: {c2c:.0f} ns one way" if c2c else "") + ".", ""]
    rows = [[r["qd"], bc.fmt(r["iops"], k), bc.fmt(r["p50_us"], bc.num(1), False),
             bc.fmt(r["p99_us"], bc.num(1), False), k(r["theory"]), bc.fmt(r["ratio"], bc.num(2)),
             bc.fmt(r["cpu_ns"], bc.num(0), False)] for r in d["sweep"]]
    out.append(bc.table(["QD", "measured KIOPS", "p50 us", "p99 us", "model KIOPS",
                         "measured / model", "CPU ns per I/O (all threads)"], rows))
    out += ["", "Core-to-device layouts (the original SDK's 1:1, 1:4 and N:N):", ""]
    rows = [[r["layout"], r["devices"], r["cores"], r["qd_per_qpair"], r["total_qd"],
             bc.fmt(r["iops"], k), bc.fmt(r["p50_us"], bc.num(1), False),
             bc.fmt(r["p99_us"], bc.num(1), False), k(r["theory"]), bc.fmt(r["ratio"], bc.num(2))]
            for r in d["layouts"]]
    out.append(bc.table(["layout", "devices", "cores", "QD per queue pair", "in flight",
                         "measured KIOPS", "p50 us", "p99 us", "model KIOPS", "measured / model"],
                        rows, "lrlrrrrrrr"))
    out += ["", "N:N shares CPU 1 between a submitting thread and the engine thread (2 CPUs in "
            "all): its p99 is the kernel's time slice, not the device."]
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--qds", default="", help="queue depths of the sweep (default 1..256)")


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
