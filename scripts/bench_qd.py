#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Queue-depth sweep for make bench: 4 KiB and 512 B random reads over 1 GiB on one core
(CPU 0), QD 1, 4, 16, 32, 64, 128 and 256, four figures per point, all in the same run:

  perf      `unvme perf` on a memory namespace, every block written first (--fill): our own
            I/O loop, the driver, the emulated controller in the doorbell write, one copy per
            read out of the namespace's memory.
  engine    fio with our engine on the same kind of namespace (filled by a write job of the
            same fio run): fio's loop instead of ours, the rest the same.
  io_uring  fio with io_uring on a 1 GiB tmpfs file written before, tuned as its documentation
            says: registered file and buffers (registerfiles, fixedbufs), no SQ polling thread
            (a second CPU); hipri does not apply (polled completions need O_DIRECT on a block
            device with poll queues). One copy per read out of the page cache, in the kernel.
            Batched like the engine (iodepth_batch_submit = iodepth_batch_complete_min = half
            the queue depth), the whole process pinned to CPU 0 with its iou-wrk workers, whose
            CPU is counted.
  floor     memcpy_floor: the copies alone (random block-aligned offsets of 1 GiB, into as many
            buffers as the queue is deep), one core, per CPU-second, measured at each point of
            each round, on the page size the namespace's memory has.

engine / io_uring is the fair comparison (same harness: fio's loop on both sides); perf /
io_uring compares our whole tool with fio and says how much fio's loop costs. perf against
the floor is per CPU-second on both sides (perf's I/Os over the CPU time its process used).
Draws KIOPS against QD for each block size.

Durations: 2 s per perf point, 1 s per fio point (engine and io_uring alike, the same-harness
pair): a fio run of seven points per block size and round had taken half the section's six
minutes, and even io_uring's slowest point moves a quarter of a million reads a second.

  BUILD=build python3 scripts/bench_qd.py [--seconds N] [--fio-seconds N] [--json out.json]
                                         [--plot-dir DIR]
"""
import os
import pathlib
import shutil
import sys

import bench_common as bc

# seven points: the targets' QD 1, 32 and 128 and the curve between (every point costs four
# measurements and a floor per round)
QDS = (1, 4, 16, 32, 64, 128, 256)
SIZE = 1 << 30
URING_TUNED = ["--registerfiles=1", "--fixedbufs=1", "--sqthread_poll=0"]
# perf per CPU-second against the floor per CPU-second: {block: {qd: target}}
FLOOR_TARGETS = {4096: {1: 0.8, 32: 0.9, 128: 0.9}, 512: {1: 0.25, 32: 0.5, 128: 0.5}}


def perf(bs, qd, seconds, size):
    r = bc.perf([f"emu://qd?ns=mem:{size}:512"], bs, qd, seconds, fill=True)
    r["ios_per_cpu_s"] = 1e9 / r["cpu_ns"] if r.get("cpu_ns") else None
    return r


def batch(qd):
    return max(1, qd // 2)


def fio_sweep(bs, qds, seconds, target_args, fill_args=(), sample=None):
    """One fio run pinned to CPU 0: the optional fill job, then one stonewalled randread job
    per QD, each batched by half its depth."""
    args = ["fio", "--output-format=json", "--thread=1", "--cpus_allowed=0", *target_args,
            *fill_args]
    for qd in qds:
        args += [f"--name=qd{qd}", "--stonewall", "--rw=randread", f"--bs={bs}",
                 f"--iodepth={qd}", f"--iodepth_batch_submit={batch(qd)}",
                 f"--iodepth_batch_complete_min={batch(qd)}", "--time_based",
                 f"--runtime={seconds}"]
    out, _ = bc.run(bc.pinned(args), timeout=len(qds) * (seconds + 30) + 120, sample=sample)
    jobs = [j for j in bc.json_out(out)["jobs"] if j["jobname"].startswith("qd")]
    res = {int(j["jobname"][2:]): bc.fio_side(j) for j in jobs}
    if sample:
        for r in res.values():
            r["workers"] = sample.summary()
    return res


def engine(bs, qds, seconds, size):
    uri = f"emu://qdfio?ns=mem:{size}:512"
    return fio_sweep(bs, qds, seconds,
                     [f"--ioengine=external:{bc.FIO_ENGINE}", f"--filename={bc.fio_esc(uri)}",
                      f"--size={size}"],
                     ["--name=fill", "--rw=write", "--bs=1M", "--iodepth=8"])


def uring(bs, qds, seconds, path, size):
    return fio_sweep(bs, qds, seconds, ["--ioengine=io_uring", *URING_TUNED,
                                        f"--filename={path}", f"--size={size}"],
                     sample=bc.ThreadSample())


SIDES = ("perf", "engine", "io_uring")


def run(a):
    bc.need(bc.UNVME, "unvme")
    have_fio = shutil.which("fio") is not None and bc.FIO_ENGINE.exists()
    seconds = a.seconds or (1 if bc.QUICK else 2)
    fio_s = a.fio_seconds or 1
    size = (64 << 20) if bc.QUICK else SIZE
    qds = [int(q) for q in a.qds.split(",")] if a.qds else ([1, 32] if bc.QUICK else list(QDS))
    sizes = [4096, 512]
    runs = {(bs, qd): {s: [] for s in (*SIDES, "floor")} for bs in sizes for qd in qds}
    path = bc.tmp_file(size, "unvme-qd-") if have_fio else None
    try:
        for _ in range(bc.ROUNDS):
            for bs in sizes:
                for qd in qds:
                    runs[(bs, qd)]["perf"].append(perf(bs, qd, seconds, size))
                    runs[(bs, qd)]["floor"].append(bc.floor(bs, size, qd))
                if have_fio:
                    e, u = engine(bs, qds, fio_s, size), uring(bs, qds, fio_s, path, size)
                    for qd in qds:
                        runs[(bs, qd)]["engine"].append(e.get(qd))
                        runs[(bs, qd)]["io_uring"].append(u.get(qd))
    finally:
        if path:
            os.unlink(path)
    rows = []
    for bs in sizes:
        for qd in qds:
            r = runs[(bs, qd)]
            row = {"bs": bs, "qd": qd, "runs": r}
            for side in SIDES:
                row[side] = {k: bc.collect(r[side], k) for k in ("iops", "p50_us", "p99_us", "p99.9_us")}
            row["perf"]["ios_per_cpu_s"] = bc.collect(r["perf"], "ios_per_cpu_s")
            row["engine_vs_uring"] = bc.ratio(row["engine"]["iops"], row["io_uring"]["iops"])
            row["perf_vs_uring"] = bc.ratio(row["perf"]["iops"], row["io_uring"]["iops"])
            row["limit_iops"] = bc.stat([f["copies_per_s"] for f in r["floor"] if f])
            row["floor_page_bytes"] = next((f["page_bytes"] for f in r["floor"] if f), None)
            row["perf_vs_floor"] = bc.ratio(row["perf"]["ios_per_cpu_s"], row["limit_iops"])
            row["floor_target"] = FLOOR_TARGETS.get(bs, {}).get(qd)
            row["uring_workers"] = [x.get("workers") for x in r["io_uring"] if x]
            rows.append(row)
    data = {"seconds": seconds, "fio_seconds": fio_s, "size": size, "rounds": bc.ROUNDS, "qds": qds, "rows": rows,
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
        if all(r["limit_iops"] for r in sel):
            lines.append({"label": "floor: memcpy alone, per CPU-second", "style": "k:",
                          "y": [r["limit_iops"]["median"] / 1e3 for r in sel]})
        why = bc.plot_lines(png, f"{bs} B random read, {size >> 20} MiB, one core", "queue depth",
                            "KIOPS (one core)", qds, lines)
        data["plots"][str(bs)] = None if why else str(png)
    return data


def k(x):
    return f"{x / 1e3:.0f}"


def render(d):
    per = (f"{d['seconds']} s per perf point and {d['fio_seconds']} s per fio point (engine, "
           "io_uring)" if d.get("fio_seconds", d["seconds"]) != d["seconds"]
           else f"{d['seconds']} s per point")
    out = [f"Random reads over {d['size'] >> 20} MiB, one core (CPU 0), {per}, "
           f"median of {d['rounds']} runs (range in brackets). perf: `unvme perf --fill`; "
           "engine: fio + our engine; io_uring: fio, tuned (registerfiles, fixedbufs, no "
           "sqthread); engine and io_uring batched by half the queue depth and pinned to CPU 0 "
           "with every thread (io_uring's workers included, their CPU counted). floor: "
           "memcpy_floor per CPU-second, measured at every point; perf / floor compares perf's "
           "I/Os per CPU-second with it. engine/io_uring is the same-harness ratio, "
           "perf/io_uring the cross-harness one.", ""]
    verdicts = []
    for bs in sorted({r["bs"] for r in d["rows"]}, reverse=True):
        rows = []
        sel = [x for x in d["rows"] if x["bs"] == bs]
        for r in sel:
            rows.append([r["qd"], bc.fmt(r["perf"]["iops"], k),
                         bc.fmt(r["perf"]["p50_us"], bc.num(2), False),
                         bc.fmt(r["perf"].get("ios_per_cpu_s"), k),
                         bc.fmt(r["engine"]["iops"], k), bc.fmt(r["io_uring"]["iops"], k),
                         bc.fmt(r["io_uring"]["p50_us"], bc.num(2), False),
                         bc.fmt_ratio(r["engine_vs_uring"]), bc.fmt_ratio(r["perf_vs_uring"]),
                         bc.fmt(r["limit_iops"], k), bc.fmt_ratio(r.get("perf_vs_floor"))])
            t = r.get("floor_target")
            if t and r.get("perf_vs_floor"):
                v = r["perf_vs_floor"]["median"]
                verdicts.append(f"{bs} B QD {r['qd']} {v:.2f}x (>= {t}x: "
                                f"{'met' if v >= t else 'NOT met'})")
        page = next((r.get("floor_page_bytes") for r in sel if r.get("floor_page_bytes")), None)
        out += [f"**{bs} B**" + (f" (floor on {'2 MiB' if page > 4096 else '4 KiB'} pages, as the "
                                 "namespace's memory)" if page else ""), "", bc.table(
            ["QD", "perf KIOPS", "perf p50 us", "perf K I/Os per CPU-s", "engine KIOPS",
             "io_uring KIOPS", "io_uring p50 us", "engine / io_uring", "perf / io_uring",
             "floor K copies per CPU-s", "perf / floor (per CPU-s)"], rows), ""]
    r4 = [r for r in d["rows"] if r["bs"] == 4096]
    eng = [r["engine_vs_uring"]["median"] for r in r4 if r["engine_vs_uring"]]
    workers = [w for r in d["rows"] for w in r.get("uring_workers") or [] if w]
    seen = max((w["threads"] for w in workers), default=0)
    masks = sorted({c for w in workers for c in w["cpus"]})
    out.append("io_uring's iou-wrk workers seen: up to " + str(seen)
               + (f", allowed on CPU {', '.join(masks)}" if seen else "") + ".")
    out.append("Targets, perf against the floor per CPU-second: " + ("; ".join(verdicts) or "n/a")
               + ". Same harness (engine / io_uring, 4 KiB): "
               + (f"{min(eng):.2f}x..{max(eng):.2f}x over QD {r4[0]['qd']}..{r4[-1]['qd']}."
                  if eng else "fio not installed."))
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--seconds", type=int, default=0, help="per perf point (2)")
    ap.add_argument("--fio-seconds", type=int, default=0,
                    help="per fio point, engine and io_uring alike (1)")
    ap.add_argument("--qds", default="", help="queue depths, e.g. 1,32 (default 1,4,...,256)")


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
