#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Queue-depth sweep for make bench: 4 KiB and 512 B random reads over 1 GiB on one core
(CPU 0), QD 1..256, four figures per point, all in the same run:

  perf      `unvme perf` on a memory namespace, every block written first (--fill): our own
            I/O loop, the driver, the emulated controller in the doorbell write, one copy per
            read out of the namespace's memory.
  engine    fio with our engine on the same kind of namespace (filled by a write job of the
            same fio run): fio's loop instead of ours, the rest the same.
  io_uring  fio with io_uring on a 1 GiB tmpfs file written before, tuned: registered file
            and buffers (registerfiles, fixedbufs), no SQ polling thread; hipri does not apply
            (polled completions need O_DIRECT on a block device with poll queues). One copy
            per read out of the page cache, in the kernel.
  limit     memcpy_floor: the copies alone (random block-aligned offsets of 1 GiB), one core:
            no memory device can read faster on one core.

engine / io_uring is the fair comparison (same harness: fio's loop on both sides); perf /
io_uring compares our whole tool with fio and says how much fio's loop costs. Draws KIOPS
against QD for each block size.

  BUILD=build python3 scripts/bench_qd.py [--seconds N] [--json out.json] [--plot-dir DIR]
"""
import os
import pathlib
import shutil
import sys

import bench_common as bc

QDS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
SIZE = 1 << 30
URING_TUNED = ["--registerfiles=1", "--fixedbufs=1", "--sqthread_poll=0"]


def perf(bs, qd, seconds, size):
    return bc.perf([f"emu://qd?ns=mem:{size}:512"], bs, qd, seconds, fill=True)


def fio_sweep(bs, qds, seconds, target_args, fill_args=()):
    """One fio run: the optional fill job, then one stonewalled randread job per QD."""
    args = ["fio", "--output-format=json", "--thread=1", "--cpus_allowed=0", *target_args,
            *fill_args]
    for qd in qds:
        args += [f"--name=qd{qd}", "--stonewall", "--rw=randread", f"--bs={bs}",
                 f"--iodepth={qd}", "--time_based", f"--runtime={seconds}"]
    out, _ = bc.run(args, timeout=len(qds) * (seconds + 30) + 120)
    jobs = [j for j in bc.json_out(out)["jobs"] if j["jobname"].startswith("qd")]
    return {int(j["jobname"][2:]): bc.fio_side(j) for j in jobs}


def engine(bs, qds, seconds, size):
    uri = f"emu://qdfio?ns=mem:{size}:512"
    return fio_sweep(bs, qds, seconds,
                     [f"--ioengine=external:{bc.FIO_ENGINE}", f"--filename={bc.fio_esc(uri)}",
                      f"--size={size}"],
                     ["--name=fill", "--rw=write", "--bs=1M", "--iodepth=8"])


def uring(bs, qds, seconds, path, size):
    return fio_sweep(bs, qds, seconds, ["--ioengine=io_uring", *URING_TUNED,
                                        f"--filename={path}", f"--size={size}"])


SIDES = ("perf", "engine", "io_uring")


def run(a):
    bc.need(bc.UNVME, "unvme")
    have_fio = shutil.which("fio") is not None and bc.FIO_ENGINE.exists()
    seconds = a.seconds or (1 if bc.QUICK else 2)
    size = (64 << 20) if bc.QUICK else SIZE
    qds = [int(q) for q in a.qds.split(",")] if a.qds else ([1, 32] if bc.QUICK else list(QDS))
    sizes = [4096, 512]
    runs = {(bs, qd): {s: [] for s in SIDES} for bs in sizes for qd in qds}
    path = bc.tmp_file(size, "unvme-qd-") if have_fio else None
    try:
        for _ in range(bc.ROUNDS):
            for bs in sizes:
                for qd in qds:
                    runs[(bs, qd)]["perf"].append(perf(bs, qd, seconds, size))
                if have_fio:
                    e, u = engine(bs, qds, seconds, size), uring(bs, qds, seconds, path, size)
                    for qd in qds:
                        runs[(bs, qd)]["engine"].append(e.get(qd))
                        runs[(bs, qd)]["io_uring"].append(u.get(qd))
    finally:
        if path:
            os.unlink(path)
    limit = {bs: bc.stat([bc.memcpy_floor(bs, size) for _ in range(bc.ROUNDS)]) for bs in sizes}
    rows = []
    for bs in sizes:
        for qd in qds:
            r = runs[(bs, qd)]
            row = {"bs": bs, "qd": qd, "runs": r}
            for side in SIDES:
                row[side] = {k: bc.collect(r[side], k) for k in ("iops", "p50_us", "p99_us", "p99.9_us")}
            row["engine_vs_uring"] = bc.ratio(row["engine"]["iops"], row["io_uring"]["iops"])
            row["perf_vs_uring"] = bc.ratio(row["perf"]["iops"], row["io_uring"]["iops"])
            row["limit_iops"] = limit[bs]
            rows.append(row)
    data = {"seconds": seconds, "size": size, "rounds": bc.ROUNDS, "qds": qds, "rows": rows,
            "plots": {}}
    for bs in sizes:
        sel = [r for r in rows if r["bs"] == bs]
        png = pathlib.Path(a.plot_dir) / f"qd-randread-{bs}.png"
        lines = [{"label": "uNVMe: unvme perf (memory namespace)", "style": "o-",
                  "y": [r["perf"]["iops"]["median"] / 1e3 for r in sel]}]
        if have_fio:
            lines += [{"label": "uNVMe fio engine (memory namespace)", "style": "^-",
                       "y": [r["engine"]["iops"]["median"] / 1e3 if r["engine"]["iops"] else 0
                             for r in sel]},
                      {"label": "fio io_uring, tuned (tmpfs file)", "style": "s--",
                       "y": [r["io_uring"]["iops"]["median"] / 1e3 if r["io_uring"]["iops"] else 0
                             for r in sel]}]
        if limit[bs]:
            lines.append({"label": "limit: memcpy alone", "style": "k:",
                          "y": [limit[bs]["median"] / 1e3] * len(sel)})
        why = bc.plot_lines(png, f"{bs} B random read, {size >> 20} MiB, one core", "queue depth",
                            "KIOPS (one core)", qds, lines)
        data["plots"][str(bs)] = None if why else str(png)
    return data


def k(x):
    return f"{x / 1e3:.0f}"


def render(d):
    out = [f"Random reads over {d['size'] >> 20} MiB, one core (CPU 0), {d['seconds']} s per "
           f"point, median of {d['rounds']} runs (range in brackets). perf: `unvme perf --fill`; "
           "engine: fio + our engine; io_uring: fio, tuned (registerfiles, fixedbufs, no "
           "sqthread); limit: memcpy_floor. engine/io_uring is the same-harness ratio, "
           "perf/io_uring the cross-harness one.", ""]
    for bs in sorted({r["bs"] for r in d["rows"]}, reverse=True):
        rows = []
        for r in (x for x in d["rows"] if x["bs"] == bs):
            rows.append([r["qd"], bc.fmt(r["perf"]["iops"], k),
                         bc.fmt(r["perf"]["p50_us"], bc.num(2), False),
                         bc.fmt(r["perf"]["p99_us"], bc.num(2), False),
                         bc.fmt(r["engine"]["iops"], k), bc.fmt(r["io_uring"]["iops"], k),
                         bc.fmt(r["io_uring"]["p50_us"], bc.num(2), False),
                         bc.fmt_ratio(r["engine_vs_uring"]), bc.fmt_ratio(r["perf_vs_uring"]),
                         bc.fmt(r["limit_iops"], k, False)])
        out += [f"**{bs} B**", "", bc.table(
            ["QD", "perf KIOPS", "perf p50 us", "perf p99 us", "engine KIOPS", "io_uring KIOPS",
             "io_uring p50 us", "engine / io_uring", "perf / io_uring", "limit KIOPS"], rows), ""]
    r4 = [r for r in d["rows"] if r["bs"] == 4096]
    best = max(r4, key=lambda r: r["perf"]["iops"]["median"])
    eng = [r["engine_vs_uring"]["median"] for r in r4 if r["engine_vs_uring"]]
    out.append(f"Targets (4 KiB, one core): >= 1.2M IOPS: best {best['perf']['iops']['median'] / 1e6:.2f}M "
               f"(perf, QD {best['qd']}); >= 2x io_uring: "
               + (f"same harness (engine) {min(eng):.2f}x..{max(eng):.2f}x over QD "
                  f"{r4[0]['qd']}..{r4[-1]['qd']}." if eng else "fio not installed."))
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--qds", default="", help="queue depths, e.g. 1,32 (default 1..256)")


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
