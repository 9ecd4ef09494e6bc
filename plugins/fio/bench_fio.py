#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""fio with the uNVMe engine next to fio's own engines: the same harness, the same core (CPU 0),
the same run.

  1. Per I/O: our engine on a null namespace against fio's null engine, 512 B random reads,
     QD 128, batches of 32. fio's loop (job accounting, io_u handling, latency stamps) is the
     same on both sides; fio's null engine then does nothing, ours builds the NVMe command and
     its PRPs, rings, and the emulated controller (inline, in the doorbell write) checks the
     command, walks the PRPs through its IOMMU and posts the completion. The null namespace
     discards the data: no copy on either side. So the difference of the two CPU figures is
     what our engine, driver and device cost per I/O. Target: >= 0.8x fio null's IOPS
     (xNVMe's engine reached 0.77x).
  2. 4 KiB random reads, QD 32: our engine on a 1 GiB memory namespace (filled first by a
     write job in the same fio run) against fio's io_uring engine on a 1 GiB tmpfs file
     (written before), tuned: registered file and buffers (registerfiles, fixedbufs), no SQ
     polling thread; hipri does not apply (polled completions need O_DIRECT on a block
     device with poll queues, tmpfs has neither). Each read copies 4 KiB once on both sides:
     ours from the namespace's memory (user space), io_uring from the page cache (kernel).
     Physical limit: memcpy_floor, the same copies alone on one core. Target: >= 2x.

CPU per I/O is measured for the whole fio process (getrusage of the finished child: every
thread, our engine's, io_uring's kernel workers, which Linux accounts to their process),
minus the same run with a one-I/O measured job (which takes out fio's start, the fill and the
exit), over the I/Os. fio's own usr+sys figure counts only the job thread: it is kept in the
JSON as "job_thread_cpu_ns".

  BUILD=build python3 plugins/fio/bench_fio.py [--seconds N] [--size 1G] [--json out.json]
"""
import os
import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
import bench_common as bc  # noqa: E402

NULL_URI = "emu://benchnull?ns=null:1T:512"
URING_TUNED = ["--registerfiles=1", "--fixedbufs=1", "--sqthread_poll=0"]


def engine_args():
    return [f"--ioengine=external:{bc.FIO_ENGINE}"]


def fio_cpu(args, short_args):
    """Runs fio with args and with short_args (the same jobs, the measured one cut to one I/O);
    returns the measured job's figures with its CPU per I/O from the difference."""
    out, cpu = bc.run(["fio", "--output-format=json", *args])
    job = bc.json_out(out)["jobs"][-1]
    r = bc.fio_side(job)
    out0, cpu0 = bc.run(["fio", "--output-format=json", *short_args])
    ios0 = bc.fio_side(bc.json_out(out0)["jobs"][-1])["ios"]
    if r["ios"] > ios0:
        r["cpu_ns"] = max(cpu - cpu0, 0) * 1e9 / (r["ios"] - ios0)
    r["job_thread_cpu_ns"] = r.pop("job_thread_cpu_s") * 1e9 / r["ios"] if r["ios"] else None
    r["cmd"] = "fio " + " ".join(args)
    return r


def measured_job(name, extra, seconds):
    """The measured job, and the same cut to one I/O."""
    full = [f"--name={name}", *extra, "--time_based", f"--runtime={seconds}"]
    one = [f"--name={name}", *extra, "--number_ios=1"]
    return full, one


def null_pair(seconds):
    common = ["--thread=1", "--rw=randread", "--bs=512", "--iodepth=128",
              "--iodepth_batch_submit=32", "--iodepth_batch_complete_min=32", "--cpus_allowed=0"]
    full, one = measured_job("null512", common, seconds)
    ours_t = [*engine_args(), f"--filename={bc.fio_esc(NULL_URI)}"]
    base_t = ["--ioengine=null", "--size=1T"]
    return fio_cpu([*ours_t, *full], [*ours_t, *one]), fio_cpu([*base_t, *full], [*base_t, *one])


def mem_pair(seconds, size, path):
    read = ["--rw=randread", "--bs=4k", "--iodepth=32", "--stonewall"]
    full, one = measured_job("randread4k", read, seconds)
    uri = f"emu://benchmem?ns=mem:{size}:512"
    # job 1 fills the namespace, job 2 (after stonewall) is measured; the device stays open
    # between them (the engine closes it after the last job that named it)
    ours_t = [*engine_args(), "--thread=1", f"--size={size}", "--cpus_allowed=0",
              f"--filename={bc.fio_esc(uri)}", "--name=fill", "--rw=write", "--bs=1M", "--iodepth=8"]
    base_t = ["--ioengine=io_uring", *URING_TUNED, "--thread=1", f"--size={size}",
              "--cpus_allowed=0", f"--filename={path}"]
    return fio_cpu([*ours_t, *full], [*ours_t, *one]), fio_cpu([*base_t, *full], [*base_t, *one])


def size_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


def pair_row(name, baseline, what, runs_o, runs_b, target, limit=None):
    row = {"scenario": name, "baseline": baseline, "what": what, "target": target,
           "ours_runs": runs_o, "baseline_runs": runs_b}
    for side, runs in (("ours", runs_o), ("base", runs_b)):
        row[side] = {k: bc.collect(runs, k) for k in ("iops", "cpu_ns", "job_thread_cpu_ns",
                                                       "p50_us", "p99_us")}
    row["ratio"] = bc.ratio(row["ours"]["iops"], row["base"]["iops"])
    row["cpu_difference_ns"] = bc.stat([o.get("cpu_ns") - b.get("cpu_ns")
                                        for o, b in zip(runs_o, runs_b)
                                        if o.get("cpu_ns") is not None and b.get("cpu_ns") is not None])
    row["limit_iops"] = limit
    return row


def run(a):
    if not shutil.which("fio"):
        sys.exit("bench_fio: fio is not installed")
    bc.need(bc.FIO_ENGINE, "the fio engine")
    seconds = a.seconds or (1 if bc.QUICK else 3)
    size = a.size or ("64M" if bc.QUICK else "1G")
    path = bc.tmp_file(size_bytes(size), "unvme-fio-bench-")
    n_o, n_b, m_o, m_b = [], [], [], []
    try:
        for _ in range(bc.ROUNDS):
            o, b = null_pair(seconds)
            n_o.append(o)
            n_b.append(b)
            o, b = mem_pair(seconds, size, path)
            m_o.append(o)
            m_b.append(b)
    finally:
        os.unlink(path)
    floor = bc.stat([bc.memcpy_floor(4096, size_bytes(size)) for _ in range(bc.ROUNDS)])
    rows = [
        pair_row("null namespace, 512 B randread, QD 128, batch 32", "fio --ioengine=null",
                 "both: fio's loop; ours adds engine + driver + emulated controller (PRP walk, "
                 "no copy); fio null does nothing", n_o, n_b, 0.8),
        pair_row(f"memory namespace {size}, 4 KiB randread, QD 32",
                 f"fio --ioengine=io_uring (registerfiles, fixedbufs, no sqthread), {size} tmpfs file",
                 "both: fio's loop and one 4 KiB copy per read; ours in user space through the "
                 "emulated controller, io_uring through the kernel's page cache",
                 m_o, m_b, 2.0, floor),
    ]
    return {"seconds": seconds, "size": size, "rounds": bc.ROUNDS, "rows": rows}


def render(d):
    out = [f"fio {d['seconds']} s per run, CPU 0, median of {d['rounds']} runs (range in "
           "brackets); CPU per I/O: the whole fio process (every thread), measured.", ""]
    rows = []
    for r in d["rows"]:
        t = r["ratio"]["median"] if r["ratio"] else 0
        rows.append([r["scenario"], bc.fmt(r["ours"]["iops"]), bc.fmt(r["ours"]["cpu_ns"], bc.num(0)),
                     r["baseline"], bc.fmt(r["base"]["iops"]), bc.fmt(r["base"]["cpu_ns"], bc.num(0)),
                     bc.fmt_ratio(r["ratio"]),
                     f">= {r['target']}x: {'met' if t >= r['target'] else 'NOT met'}"])
    out.append(bc.table(["scenario", "ours IOPS", "ours CPU ns/I/O", "baseline", "baseline IOPS",
                         "baseline CPU ns/I/O", "ratio", "target"], rows, "lrrlrrrl"))
    null, mem = d["rows"]
    diff = null["cpu_difference_ns"]
    out += ["", f"Per I/O through fio: our engine, driver and emulated device add "
            f"{bc.fmt(diff, bc.num(0))} ns of CPU to fio's own loop (our engine's CPU per I/O minus "
            "fio null's, per round)."]
    if mem.get("limit_iops"):
        lim = mem["limit_iops"]
        out.append(f"Physical limit of the 4 KiB reads on one core (memcpy_floor: random 4 KiB "
                   f"copies out of {d['size']}, nothing else): {bc.fmt(lim)} copies/s; ours reaches "
                   f"{mem['ours']['iops']['median'] / lim['median']:.2f} of it, io_uring "
                   f"{mem['base']['iops']['median'] / lim['median']:.2f}.")
    out += ["", "What each side does: " + "; ".join(f"*{r['scenario']}*: {r['what']}"
                                                     for r in d["rows"]) + "."]
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--size", default="", help="memory namespace / tmpfs file size (1G)")


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
