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
     what our engine, driver and device cost per I/O. Target: >= 0.9x fio null's IOPS
     (xNVMe's engine reached 0.77x).
  2. 4 KiB random reads, QD 32, batched the same way on every side (iodepth_batch_submit and
     iodepth_batch_complete_min 16: half the queue goes in at once, as fio's documentation
     suggests for io_uring), every fio process pinned to CPU 0 (taskset: its threads and the
     kernel's io_uring workers of its rings inherit the mask; the report says which workers
     were seen and where they could run):
       ours      our engine on a 1 GiB memory namespace (filled first by a write job);
       io_uring  fio's io_uring engine on a 1 GiB tmpfs file written before, tuned as its
                 documentation says: registered file and buffers (registerfiles, fixedbufs),
                 no SQ polling thread (it would take a second CPU); tmpfs reads go through the
                 page cache, and io_uring may hand them to its iou-wrk workers, whose CPU is
                 counted (the kernel accounts them to fio's process);
       O_DIRECT  fio's io_uring engine, direct I/O on a loop device over the same tmpfs file
                 (losetup --direct-io): no io_uring workers; the loop driver's own kworkers do
                 the copy outside fio's process, and their CPU (every kworker's, before and
                 after) is added; polled completions (hipri) do not apply, the loop driver
                 has no poll queues.
     Each side copies every 4 KiB block once. Limit: memcpy_floor, the same random copies
     alone on one core, per CPU-second, measured in every round. Targets against io_uring:
     >= 1.5x the IOPS and >= 2x less CPU per I/O.

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
BATCH = 16
NULL_TARGET, RATIO_TARGET, CPU_TARGET = 0.9, 1.5, 2.0


def engine_args():
    return [f"--ioengine=external:{bc.FIO_ENGINE}"]


def fio_cpu(args, short_args, sample=None, kworkers=False):
    """Runs fio with args and with short_args (the same jobs, the measured one cut to one I/O),
    pinned to CPU 0; returns the measured job's figures with its CPU per I/O from the
    difference (plus the kernel's kworkers' CPU over each run, with kworkers)."""
    k0 = bc.kworker_cpu_s() if kworkers else 0
    out, cpu = bc.run(bc.pinned(["fio", "--output-format=json", *args]), sample=sample)
    k1 = bc.kworker_cpu_s() if kworkers else 0
    job = bc.json_out(out)["jobs"][-1]
    r = bc.fio_side(job)
    out0, cpu0 = bc.run(bc.pinned(["fio", "--output-format=json", *short_args]))
    k2 = bc.kworker_cpu_s() if kworkers else 0
    ios0 = bc.fio_side(bc.json_out(out0)["jobs"][-1])["ios"]
    if kworkers:
        r["kworker_cpu_s"] = k1 - k0
        cpu += k1 - k0
        cpu0 += k2 - k1
    if r["ios"] > ios0:
        r["cpu_ns"] = max(cpu - cpu0, 0) * 1e9 / (r["ios"] - ios0)
        r["ios_per_cpu_s"] = 1e9 / r["cpu_ns"] if r["cpu_ns"] else None
    r["job_thread_cpu_ns"] = r.pop("job_thread_cpu_s") * 1e9 / r["ios"] if r["ios"] else None
    r["cmd"] = "taskset -c 0 fio " + " ".join(args)
    if sample:
        r["workers"] = sample.summary()
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


def huge_buffers():
    """fio's buffers on hugetlbfs pages when the pool has free ones (ours are DMA memory, which
    takes them too)."""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("HugePages_Free:") and int(line.split()[1]) > 64:
                return ["--iomem=shmhuge"]
    except OSError:
        pass
    return []


READ4K = ["--rw=randread", "--bs=4k", "--iodepth=32", f"--iodepth_batch_submit={BATCH}",
          f"--iodepth_batch_complete_min={BATCH}", "--stonewall"]


def mem_ours(seconds, size):
    full, one = measured_job("randread4k", READ4K, seconds)
    uri = f"emu://benchmem?ns=mem:{size}:512"
    # job 1 fills the namespace, job 2 (after stonewall) is measured; the device stays open
    # between them (the engine closes it after the last job that named it)
    t = [*engine_args(), "--thread=1", f"--size={size}", "--cpus_allowed=0",
         f"--filename={bc.fio_esc(uri)}", "--name=fill", "--rw=write", "--bs=1M", "--iodepth=8"]
    return fio_cpu([*t, *full], [*t, *one])


def mem_uring(seconds, size, path, direct=False):
    full, one = measured_job("randread4k", READ4K, seconds)
    t = ["--ioengine=io_uring", *URING_TUNED, *huge_buffers(), "--thread=1", f"--size={size}",
         "--cpus_allowed=0", f"--filename={path}", *(["--direct=1"] if direct else [])]
    return fio_cpu([*t, *full], [*t, *one], sample=bc.ThreadSample(), kworkers=direct)


def size_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


def side_stats(runs):
    return {k: bc.collect(runs, k) for k in ("iops", "cpu_ns", "ios_per_cpu_s",
                                             "job_thread_cpu_ns", "p50_us", "p99_us")}


def run(a):
    if not shutil.which("fio"):
        sys.exit("bench_fio: fio is not installed")
    bc.need(bc.FIO_ENGINE, "the fio engine")
    seconds = a.seconds or (1 if bc.QUICK else 3)
    size = a.size or ("64M" if bc.QUICK else "1G")
    path = bc.tmp_file(size_bytes(size), "unvme-fio-bench-")
    runs = {k: [] for k in ("null_ours", "null_base", "ours", "uring", "direct", "floor")}
    loop_why = None
    try:
        with bc.loop_device(path) as (loop, why):
            loop_why = why
            for _ in range(bc.ROUNDS):
                o, b = null_pair(seconds)
                runs["null_ours"].append(o)
                runs["null_base"].append(b)
                runs["ours"].append(mem_ours(seconds, size))
                runs["uring"].append(mem_uring(seconds, size, path))
                if loop:
                    runs["direct"].append(mem_uring(seconds, size, loop, direct=True))
                runs["floor"].append(bc.floor(4096, size_bytes(size), 32))
    finally:
        os.unlink(path)
    s = {k: side_stats(v) for k, v in runs.items() if k != "floor"}
    floor = bc.stat([f["copies_per_s"] for f in runs["floor"] if f])
    null_diff = bc.stat([o["cpu_ns"] - b["cpu_ns"] for o, b in zip(runs["null_ours"], runs["null_base"])
                         if o.get("cpu_ns") is not None and b.get("cpu_ns") is not None])

    def cpu_ratio(base, ours):  # how many times less CPU per I/O ours takes
        return bc.ratio(base["cpu_ns"], ours["cpu_ns"])

    return {
        "seconds": seconds, "size": size, "rounds": bc.ROUNDS, "batch": BATCH, "runs": runs,
        "null": {"ours": s["null_ours"], "base": s["null_base"],
                 "ratio": bc.ratio(s["null_ours"]["iops"], s["null_base"]["iops"]),
                 "cpu_difference_ns": null_diff, "target": NULL_TARGET},
        "mem": {"ours": s["ours"], "uring": s["uring"], "direct": s.get("direct"),
                "vs_uring": bc.ratio(s["ours"]["iops"], s["uring"]["iops"]),
                "cpu_vs_uring": cpu_ratio(s["uring"], s["ours"]),
                "vs_direct": bc.ratio(s["ours"]["iops"], s["direct"]["iops"]) if runs["direct"] else None,
                "cpu_vs_direct": cpu_ratio(s["direct"], s["ours"]) if runs["direct"] else None,
                "direct_skipped": loop_why,
                "workers": [r.get("workers") for r in runs["uring"]],
                "floor": floor,
                "floor_page_bytes": runs["floor"][0]["page_bytes"] if runs["floor"][0] else None,
                "vs_floor": bc.ratio(s["ours"]["ios_per_cpu_s"], floor),
                "targets": {"iops": RATIO_TARGET, "cpu": CPU_TARGET}},
    }


def met(r, target):
    return "met" if r and r["median"] >= target else "NOT met"


def render(d):
    if "null" not in d:  # results of an older run (before issue 31): its rows as they were
        return "(results of an earlier version of this section; rerun make bench)"
    n, m = d["null"], d["mem"]
    cpu = bc.num(0)
    out = [f"fio {d['seconds']} s per run, every fio process pinned to CPU 0 (taskset), median of "
           f"{d['rounds']} runs (range in brackets); CPU per I/O: the whole fio process (every "
           "thread), measured, minus a one-I/O run.", "",
           "**Per I/O: null namespace against fio's null engine** (512 B random reads, QD 128, "
           "batches of 32)", "",
           bc.table(["side", "IOPS", "CPU ns/I/O"],
                    [["fio + our engine, null namespace", bc.fmt(n["ours"]["iops"]),
                      bc.fmt(n["ours"]["cpu_ns"], cpu)],
                     ["fio --ioengine=null", bc.fmt(n["base"]["iops"]), bc.fmt(n["base"]["cpu_ns"], cpu)]]),
           "", f"Ours / fio null: {bc.fmt_ratio(n['ratio'])} (target >= {n['target']}x: "
           f"{met(n['ratio'], n['target'])}); our engine, driver and emulated device add "
           f"{bc.fmt(n['cpu_difference_ns'], cpu)} ns of CPU per I/O to fio's own loop.", "",
           f"**4 KiB random reads over {d['size']}, QD 32**, every side batched by "
           f"{d['batch']} (iodepth_batch_submit, iodepth_batch_complete_min)", ""]
    rows = [["fio + our engine, memory namespace", bc.fmt(m["ours"]["iops"]),
             bc.fmt(m["ours"]["cpu_ns"], cpu), bc.fmt(m["ours"]["ios_per_cpu_s"]), "-", "-"],
            ["fio io_uring, tmpfs file (registerfiles, fixedbufs)", bc.fmt(m["uring"]["iops"]),
             bc.fmt(m["uring"]["cpu_ns"], cpu), bc.fmt(m["uring"]["ios_per_cpu_s"]),
             bc.fmt_ratio(m["vs_uring"]), bc.fmt_ratio(m["cpu_vs_uring"])]]
    if m.get("direct") and m.get("vs_direct"):
        rows.append(["fio io_uring O_DIRECT, loop device over the tmpfs file (+ kworkers' CPU)",
                     bc.fmt(m["direct"]["iops"]), bc.fmt(m["direct"]["cpu_ns"], cpu),
                     bc.fmt(m["direct"]["ios_per_cpu_s"]), bc.fmt_ratio(m["vs_direct"]),
                     bc.fmt_ratio(m["cpu_vs_direct"])])
    out.append(bc.table(["side", "IOPS", "CPU ns/I/O", "I/Os per CPU-second",
                         "ours / it (IOPS)", "its CPU / ours (per I/O)"], rows, "lrrrrr"))
    workers = [w for w in m.get("workers") or [] if w]
    seen = max((w["threads"] for w in workers), default=0)
    masks = sorted({c for w in workers for c in w["cpus"]})
    out += ["", f"io_uring's iou-wrk workers seen during the tmpfs runs: up to {seen}"
            + (f", allowed on CPU {', '.join(masks)} (their CPU is in the figure above)" if seen else
               "") + "."]
    if m.get("direct_skipped"):
        out.append(f"The O_DIRECT loop-device baseline did not run: {m['direct_skipped']}.")
    t = m["targets"]
    out += ["", f"Targets against io_uring on tmpfs: >= {t['iops']}x the IOPS: "
            f"{bc.fmt_ratio(m['vs_uring'])}, {met(m['vs_uring'], t['iops'])}; >= {t['cpu']}x less "
            f"CPU per I/O: {bc.fmt_ratio(m['cpu_vs_uring'])}, {met(m['cpu_vs_uring'], t['cpu'])}."]
    if m.get("floor"):
        page = m.get("floor_page_bytes") or 4096
        out.append(f"Limit (memcpy_floor: the random 4 KiB copies alone on CPU 0, per CPU-second, "
                   f"on {'2 MiB' if page > 4096 else '4 KiB'} pages as the namespace's memory, in "
                   f"every round): {bc.fmt(m['floor'])}; ours reaches {bc.fmt_ratio(m['vs_floor'])} "
                   "of it per CPU-second.")
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--size", default="", help="memory namespace / tmpfs file size (1G)")


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
