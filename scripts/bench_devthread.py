#!/usr/bin/env python3
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

The engine threads (the "hardware") need a CPU too. This machine has two: the device engines
share one thread (engine=0) pinned to CPU 1 while one core submits on CPU 0. N:N leaves no CPU
of its own for the engine, so it shares CPU 1 with a submitting thread that never stops
polling, and the kernel's time slices (milliseconds) show in its latency: that row measures
the 2-CPU machine, not the driver.

  BUILD=build python3 scripts/bench_devthread.py [--seconds N] [--json out.json] [--plot-dir DIR]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
UNVME = BUILD / "tools" / "unvme" / "unvme"
ENV = dict(os.environ, UNVME_QUIET="1")
QDS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
RLAT_US, WLAT_US, UNITS = 80, 20, 48


def device(name):
    return (f"emu://{name}?ns=mem:1G:4096&mode=thread&rlat={RLAT_US}us&wlat={WLAT_US}us"
            f"&units={UNITS}&engine=0&cpu=1")


def theory(total_qd, ndev):
    return min(total_qd, ndev * UNITS) / (RLAT_US / 1e6)


def perf(devices, qd, cores, seconds):
    cmd = [str(UNVME), "perf"]
    for d in devices:
        cmd += ["-d", d]
    cmd += ["-w", "randread", "-b", "4096", "-q", str(qd), "-t", str(seconds), "-c", cores,
            "-o", "json"]
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV,
                                  timeout=seconds * 10 + 60).stdout)
    t = r["total"]
    lat = t["latency_us"]
    return {"iops": t["iops"], "p50_us": lat["p50"], "p99_us": lat["p99"], "cmd": " ".join(cmd)}


PLOT = r'''
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows, out = json.load(open(sys.argv[1])), sys.argv[2]
qd = [r["qd"] for r in rows]
fig, ax = plt.subplots(figsize=(7, 4.2))
ax.plot(qd, [r["iops"] / 1e3 for r in rows], "o-", label="measured (unvme perf, 1 core)")
ax.plot(qd, [r["theory"] / 1e3 for r in rows], "k--", label="model: min(QD, units) / rlat")
ax.set_xscale("log", base=2); ax.set_xticks(qd); ax.set_xticklabels([str(q) for q in qd])
ax.set_xlabel("queue depth"); ax.set_ylabel("KIOPS")
ax.set_title(sys.argv[3]); ax.grid(alpha=0.3); ax.legend()
fig.tight_layout(); fig.savefig(out, dpi=110)
'''


def plot(rows, path, title):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(rows, f)
    try:
        p = subprocess.run(["/usr/bin/python3", "-c", PLOT, f.name, str(path), title],
                           capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        err = p.stderr.strip().splitlines()
        return f"plot not drawn: {err[-1] if err else p.returncode}"
    return None


def core_to_core_ns():
    exe = BUILD / "tools" / "bench" / "core_pingpong"
    if not exe.exists():
        return None
    out = subprocess.run([str(exe), "0", "1", "300000"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["one_way_ns"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--qds", default=",".join(map(str, QDS)), help="queue depths of the sweep")
    ap.add_argument("--json")
    ap.add_argument("--plot-dir", default=str(ROOT / "bench" / "results"))
    a = ap.parse_args()
    if (os.cpu_count() or 1) < 2:
        sys.exit("bench_devthread: needs 2 CPUs (one submits, one runs the device engine)")
    qds = [int(q) for q in a.qds.split(",")]

    sweep = []
    for qd in qds:
        r = perf([device("ssd")], qd, "0", a.seconds)
        r.update(qd=qd, theory=theory(qd, 1))
        r["ratio"] = r["iops"] / r["theory"]
        sweep.append(r)
    layouts = []
    for name, ndev, cores, qd in (("1:1", 1, "0", 128), ("1:4", 4, "0", 32), ("N:N (2:2)", 2, "0,1", 32)):
        nthreads = len(cores.split(","))
        r = perf([device(f"d{i}") for i in range(ndev)], qd, cores, a.seconds)
        total_qd = qd * ndev * nthreads
        r.update(layout=name, devices=ndev, cores=cores, qd_per_qpair=qd, total_qd=total_qd,
                 theory=theory(total_qd, ndev))
        r["ratio"] = r["iops"] / r["theory"]
        layouts.append(r)
    c2c = core_to_core_ns()

    print(f"Device-thread mode, SSD latency model: 4 KiB random reads, rlat {RLAT_US} us, "
          f"{UNITS} parallel units ({UNITS / RLAT_US * 1e3:.0f}K IOPS per device), wlat {WLAT_US} us; "
          f"engine threads share CPU 1, {a.seconds} s per point"
          + (f"; cache line CPU 0 <-> 1: {c2c:.0f} ns one way" if c2c else "") + "\n")
    print("| QD | measured KIOPS | p50 us | p99 us | model KIOPS | measured / model |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in sweep:
        print(f"| {r['qd']} | {r['iops'] / 1e3:.1f} | {r['p50_us']:.1f} | {r['p99_us']:.1f} | "
              f"{r['theory'] / 1e3:.1f} | {r['ratio']:.2f} |")
    print("\nCore-to-device layouts (the original SDK's 1:1, 1:4 and N:N):\n")
    print("| layout | devices | cores | QD per queue pair | in flight | measured KIOPS | p50 us | "
          "p99 us | model KIOPS | measured / model |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in layouts:
        print(f"| {r['layout']} | {r['devices']} | {r['cores']} | {r['qd_per_qpair']} | "
              f"{r['total_qd']} | {r['iops'] / 1e3:.0f} | {r['p50_us']:.1f} | {r['p99_us']:.1f} | "
              f"{r['theory'] / 1e3:.0f} | {r['ratio']:.2f} |")
    print("\nN:N shares CPU 1 between a submitting thread and the engine thread (2 CPUs in all): "
          "its p99 is the kernel's time slice, not the device.")
    pathlib.Path(a.plot_dir).mkdir(parents=True, exist_ok=True)
    png = pathlib.Path(a.plot_dir) / "devthread-qd.png"
    why = plot(sweep, png, f"4 KiB random read, SSD model ({RLAT_US} us, {UNITS} units), 1 core : 1 device")
    print(why or f"plot: {png}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"sweep": sweep, "layouts": layouts,
                                                    "core_to_core_ns": c2c}, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
