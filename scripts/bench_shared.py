#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Shared devices and hot-plug for make bench (issue 16), each figure beside its baseline of the
same run:

  - A secondary's queue pair against the primary's: `unvme perf` (random 4 KiB reads, QD 32,
    CPU 0) on an emulated device, once as the device's primary (alone) and once as a
    secondary while `unvme monitor` holds the device idle as its primary. In thread mode the
    device's engine thread (CPU 1) serves both alike (a device that polls, like hardware);
    in inline mode the primary's commands run on its own submitting thread while a
    secondary's go through the device's doorbell-window watcher, a thread of the primary's
    process. Compared: IOPS, the submitting thread's CPU per I/O, and all the CPU the I/O took
    per I/O: perf's process (every thread) plus, for a secondary, the holder's process over the
    same run (its CPU clock from /proc, before and after), where the device's work for the
    secondary runs. Target: within 5% in thread mode.
  - Re-insertion to the first completed I/O: `unvme perf --unplug-at --plug-after` on the
    emulated device (the card is pulled and put back in the process); the time the driver
    takes to attach the card again, and from the plug to the first I/O completed on it.
  - What a secondary's CLI call costs the primary's latency: QD 1 random reads on CPU 0,
    alone and while `unvme smart-log` processes attach, run and exit back to back on CPU 1;
    p50 and p99 of each, and the p99 increase as a fraction of the p99 alone.

  BUILD=build python3 scripts/bench_shared.py [--seconds N] [--json out.json]
"""
import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import bench_common as bc

SIZE = "256M"


@contextlib.contextmanager
def run_dir():
    """A run directory of the round's own: its processes share devices only with each other."""
    d = tempfile.mkdtemp(prefix="ub-", dir="/tmp")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def env(run_dir):
    return dict(bc.ENV, UNVME_RUN_DIR=run_dir)


def perf(dev, seconds, qd, run_dir, extra=(), fill=True, want="emu"):
    """One `unvme perf` run as the device's primary (want="emu") or a secondary."""
    cmd = [bc.UNVME, "perf", "-d", dev, "-w", "randread", "-b", "4096", "-q", qd, "-t", seconds,
           "-c", "0", "-o", "json", *extra] + (["--fill"] if fill else [])
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env(run_dir),
                       timeout=seconds * 10 + 120)
    if p.returncode != 0:
        raise SystemExit(f"bench: {' '.join(map(str, cmd))} failed: {p.stderr.strip()[-2000:]}")
    r = json.loads(p.stdout)
    if r["transports"][0]["transport"] != want:
        raise SystemExit(f"bench: {dev}: perf ran as {r['transports'][0]['transport']}, not {want}")
    t = r["total"]
    return {"iops": t["iops"], "ios": t["ios"], "p50_us": t["latency_us"]["p50"],
            "p99_us": t["latency_us"]["p99"],
            "submit_cpu_ns": r["cpu"]["submitting_threads_ns_per_io"],
            "cpu_ns": r["cpu"]["ns_per_io"], "total_cpu_ns": r["cpu"]["ns_per_io"],
            "hotplug": r.get("hotplug")}


def process_cpu_s(pid):
    """CPU seconds (user + system, every thread) a process has used so far, from /proc."""
    f = open(f"/proc/{pid}/stat").read()
    fields = f[f.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Holder:
    """`unvme monitor` holding a device as its idle primary."""

    def __init__(self, dev, run_dir):
        self.p = subprocess.Popen([str(bc.UNVME), "monitor", dev], env=env(run_dir),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not glob.glob(os.path.join(run_dir, "ctrl-*.sock")):
            if self.p.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"bench: the holder did not start: {self.p.stderr.read()}")
            time.sleep(0.05)

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=30)


def secondary_vs_primary(a, rounds):
    rows = {}
    engine_cpu = 1 if bc.ncpus() > 1 else 0
    for mode, spec in (("thread", f"mode=thread&cpu={engine_cpu}"), ("inline", "mode=inline")):
        prim, sec = [], []
        for i in range(rounds):
            with run_dir() as rd:
                dev = f"emu://bs{mode}{i}?ns=mem:{SIZE}:4096&{spec}"
                prim.append(perf(dev, a.seconds, 32, rd))
                dev2 = f"emu://bs2{mode}{i}?ns=mem:{SIZE}:4096&{spec}"
                h = Holder(dev2, rd)
                try:
                    # filled by a run of its own first, so that the holder's CPU over the
                    # measured run is the device's work for it (the doorbell-window watcher in
                    # inline mode, the engine in thread mode), not the fill's
                    perf(dev2, 1, 32, rd, want="secondary")
                    before = process_cpu_s(h.p.pid)
                    r = perf(dev2, a.seconds, 32, rd, fill=False, want="secondary")
                    holder = process_cpu_s(h.p.pid) - before
                    r["holder_cpu_s"] = holder
                    r["total_cpu_ns"] = r["cpu_ns"] + holder * 1e9 / r["ios"] if r["ios"] else None
                    sec.append(r)
                finally:
                    h.stop()
        rows[mode] = {k: {"primary": bc.collect(prim, k), "secondary": bc.collect(sec, k)}
                      for k in ("iops", "submit_cpu_ns", "total_cpu_ns", "p50_us", "p99_us")}
        for k in ("iops", "submit_cpu_ns", "total_cpu_ns"):
            rows[mode][k]["ratio"] = bc.ratio(rows[mode][k]["secondary"], rows[mode][k]["primary"])
    return rows


def reinsertion(a, rounds):
    runs = []
    for i in range(rounds):
        with run_dir() as rd:
            r = perf(f"emu://bh{i}?ns=mem:{SIZE}:4096", max(2, a.seconds), 32, rd,
                     extra=("--unplug-at", "500", "--plug-after", "200"), fill=False)
        h = r["hotplug"] or {}
        if not h.get("done"):
            raise SystemExit("bench: the card was not put back during the run")
        runs.append({"attach_us": h["attach_us"], "first_io_us": h["first_io_after_plug_us"],
                     "failed_ios": h["failed_ios"]})
    return {k: bc.collect(runs, k) for k in ("attach_us", "first_io_us", "failed_ios")}


def cli_impact(a, rounds):
    alone, loaded, calls = [], [], []
    for i in range(rounds):
        with run_dir() as rd:
            dev = f"emu://bc{i}?ns=mem:{SIZE}:4096"
            alone.append(perf(dev, a.seconds, 1, rd))
            dev2 = f"emu://bc2{i}?ns=mem:{SIZE}:4096"
            pin = ["taskset", "-c", "1"] if bc.ncpus() > 1 else []
            stop = tempfile.mktemp(dir=rd)
            # a shell loop on CPU 1: one `unvme smart-log` process after another until told
            loop = subprocess.Popen(
                [*pin, "sh", "-c", f'n=0; while [ ! -e "{stop}" ]; do "{bc.UNVME}" smart-log '
                 f'"{dev2}" >/dev/null 2>&1 && n=$((n+1)); done; echo $n'],
                env=env(rd), stdout=subprocess.PIPE, text=True)
            # the loop's first call may make it the primary: wait until perf is the primary
            try:
                r = None
                for _ in range(20):
                    p = subprocess.run([str(bc.UNVME), "perf", "-d", dev2, "-w", "randread", "-b",
                                        "4096", "-q", "1", "-t", str(a.seconds), "-c", "0", "-o",
                                        "json", "--fill"], capture_output=True, text=True,
                                       env=env(rd), timeout=a.seconds * 10 + 120)
                    # (as a secondary it fails when the smart-log that was primary exits)
                    doc = json.loads(p.stdout) if p.returncode == 0 else None
                    if doc and doc["transports"][0]["transport"] == "emu":
                        r = doc
                        break
                if r is None:
                    raise SystemExit("bench: perf never got to be the primary")
            finally:
                open(stop, "w").close()
                out, _ = loop.communicate(timeout=60)
            t = r["total"]
            loaded.append({"iops": t["iops"], "p50_us": t["latency_us"]["p50"],
                           "p99_us": t["latency_us"]["p99"]})
            calls.append(int(out.strip() or 0) / a.seconds)
    res = {k: {"alone": bc.collect(alone, k), "with_cli": bc.collect(loaded, k)}
           for k in ("iops", "p50_us", "p99_us")}
    res["cli_calls_per_s"] = bc.stat(calls)
    res["p99_increase"] = bc.stat([(w["p99_us"] - al["p99_us"]) / al["p99_us"]
                                   for w, al in zip(loaded, alone) if al["p99_us"]])
    return res


def run(a):
    rounds = bc.ROUNDS
    if bc.QUICK:
        a.seconds = 1
    return {"seconds": a.seconds, "rounds": rounds,
            "secondary": secondary_vs_primary(a, rounds),
            "reinsertion": reinsertion(a, rounds),
            "cli": cli_impact(a, rounds)}


def render(d):
    us = bc.num(1)
    out = ["Secondary's queue pair against the primary's: random 4 KiB reads, QD 32, CPU 0, "
           f"{d['seconds']} s, namespace written first.", ""]
    rows = []
    for mode, r in d["secondary"].items():
        tot = r.get("total_cpu_ns")
        rows.append([f"{mode} mode", bc.fmt(r["iops"]["primary"]), bc.fmt(r["iops"]["secondary"]),
                     bc.fmt_ratio(r["iops"]["ratio"]),
                     bc.fmt(r["submit_cpu_ns"]["primary"], us), bc.fmt(r["submit_cpu_ns"]["secondary"], us),
                     bc.fmt_ratio(r["submit_cpu_ns"]["ratio"]),
                     bc.fmt(tot["primary"], us) if tot else "n/a",
                     bc.fmt(tot["secondary"], us) if tot else "n/a",
                     bc.fmt_ratio(tot["ratio"]) if tot else "n/a"])
    out.append(bc.table(["device", "IOPS primary", "IOPS secondary", "secondary/primary",
                         "submitter ns/IO primary", "submitter ns/IO secondary", "secondary/primary",
                         "all CPU ns/IO primary", "all CPU ns/IO secondary (+ holder)",
                         "secondary/primary"], rows))
    out += ["", "All CPU: perf's whole process per I/O; for a secondary plus the holder's process "
            "over the same run, where the device's work for the secondary runs (in inline mode the "
            "doorbell-window watcher; the holder's fill-free idle time costs nothing)."]
    t = d["secondary"]["thread"]
    gap = max(abs(1 - t["iops"]["ratio"]["median"]), abs(1 - t["submit_cpu_ns"]["ratio"]["median"]))
    out += ["", f"Target (issue 16): a secondary's IOPS and ns/IO within 5% of the primary's (thread "
            f"mode): {100 * gap:.1f}% -> {'met' if gap <= 0.05 else 'NOT met'}."]
    h = d["reinsertion"]
    out += ["", "Re-insertion (card pulled 500 ms into the run, put back 200 ms later, QD 32):", "",
            bc.table(["re-attach (us)", "plug to first completed I/O (us)", "I/Os failed at removal"],
                     [[bc.fmt(h["attach_us"], us), bc.fmt(h["first_io_us"], us),
                       bc.fmt(h["failed_ios"], bc.num(0))]])]
    c = d["cli"]
    out += ["", "A secondary's CLI call against the primary's latency (QD 1 reads on CPU 0; "
            "`unvme smart-log` processes back to back on CPU 1):", "",
            bc.table(["", "IOPS", "p50 (us)", "p99 (us)"],
                     [["alone", bc.fmt(c["iops"]["alone"]), bc.fmt(c["p50_us"]["alone"], us),
                       bc.fmt(c["p99_us"]["alone"], us)],
                      ["with CLI calls", bc.fmt(c["iops"]["with_cli"]), bc.fmt(c["p50_us"]["with_cli"], us),
                       bc.fmt(c["p99_us"]["with_cli"], us)]]),
            "", f"CLI calls per second: {bc.fmt(c['cli_calls_per_s'], bc.num(1))}; p99 increase: "
            f"{bc.fmt(c['p99_increase'], lambda x: f'{100 * x:.1f}%')} of the p99 alone."]
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--seconds", type=int, default=3)


if __name__ == "__main__":
    raise SystemExit(bc.main(__doc__.splitlines()[0], run, render, add_args))
