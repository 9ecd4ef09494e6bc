#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""fio with the uNVMe engine next to fio's own engines, in the same run on the same core.

  1. null namespace vs fio's null engine: 512 B random reads, QD 128, batches of 32. Both move
     no data, so the ratio is the engine + driver + emulated device cost per I/O against an
     engine that does nothing. Target: >= 0.8x (xNVMe's engine reached 0.77x).
  2. 4 KiB random reads, QD 32, on a memory namespace vs fio's io_uring engine on a tmpfs file
     of the same size. Both are filled first (a sequential write job, then stonewall), so the
     reads move real data. Target: >= 2x.

  BUILD=build python3 plugins/fio/bench_fio.py [--seconds N] [--size 1G] [--json out.json]

Machines here are noisy: read ratios, not absolutes. Each pair runs ours and the baseline back
to back, --rounds times, and keeps each side's best.
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
ENGINE = BUILD / "plugins" / "fio" / "unvme-fio.so"
ENV = dict(os.environ, UNVME_QUIET="1")


def esc(uri):
    return uri.replace(":", "\\:")


def run_fio(args, job_index=-1):
    cmd = ["fio", "--output-format=json", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if p.returncode != 0:
        sys.exit(f"bench_fio: failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}{p.stdout[-2000:]}")
    job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][job_index]
    r = job["read"]
    # CPU per I/O: the job's user + system time over the I/Os it completed
    cpu_ns = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * job["job_runtime"] * 1e6
    return {"iops": r["iops"], "p50_us": r["clat_ns"]["percentile"]["50.000000"] / 1000.0,
            "p99_us": r["clat_ns"]["percentile"]["99.000000"] / 1000.0,
            "ns_per_io": cpu_ns / r["total_ios"] if r["total_ios"] else None,
            "cmd": " ".join(cmd)}


def null_pair(seconds):
    common = ["--thread=1", "--rw=randread", "--bs=512", "--iodepth=128",
              "--iodepth_batch_submit=32", "--iodepth_batch_complete_min=32", "--time_based",
              f"--runtime={seconds}", "--cpus_allowed=0", "--name=null512"]
    ours = run_fio([f"--ioengine=external:{ENGINE}", *common,
                    f"--filename={esc('emu://benchnull?ns=null:1T:512')}"])
    base = run_fio(["--ioengine=null", *common, "--size=1T"])
    return ours, base


def mem_pair(seconds, size, tmpfs_dir):
    # job 1 fills, job 2 (after stonewall) is measured
    def jobs(engine_args, target):
        return [*engine_args, "--thread=1", f"--size={size}", "--cpus_allowed=0", *target,
                "--name=fill", "--rw=write", "--bs=1M", "--iodepth=8",
                "--name=randread4k", "--stonewall", "--rw=randread", "--bs=4k", "--iodepth=32",
                "--time_based", f"--runtime={seconds}"]
    ours = run_fio(jobs([f"--ioengine=external:{ENGINE}"],
                        [f"--filename={esc(f'emu://benchmem?ns=mem:{size}:512')}"]))
    fd, path = tempfile.mkstemp(prefix="unvme-fio-bench-", dir=tmpfs_dir)
    os.close(fd)
    try:
        base = run_fio(jobs(["--ioengine=io_uring"], [f"--filename={path}"]))
    finally:
        os.unlink(path)
    return ours, base


def ns(run):
    return f"{run['ns_per_io']:.1f}" if run.get("ns_per_io") else "-"


def best(runs):
    return max(runs, key=lambda r: r["iops"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("BENCH_SECONDS", "5")))
    ap.add_argument("--size", default="1G", help="memory namespace / tmpfs file size")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tmpfs", default="/dev/shm", help="a tmpfs directory for io_uring's file")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("bench_fio: fio is not installed")
    if not ENGINE.exists():
        sys.exit(f"bench_fio: {ENGINE} is not built")
    fstype = subprocess.run(["stat", "-f", "-c", "%T", a.tmpfs], capture_output=True,
                            text=True).stdout.strip()
    if fstype != "tmpfs":
        sys.exit(f"bench_fio: {a.tmpfs} is {fstype or 'missing'}, not tmpfs (use --tmpfs)")

    rows = []
    n_o, n_b, m_o, m_b = [], [], [], []
    for _ in range(a.rounds):
        o, b = null_pair(a.seconds)
        n_o.append(o)
        n_b.append(b)
        o, b = mem_pair(a.seconds, a.size, a.tmpfs)
        m_o.append(o)
        m_b.append(b)
    rows.append(("null namespace, 512 B randread, QD 128, batch 32, 1 core",
                 "fio --ioengine=null", best(n_o), best(n_b), 0.8))
    rows.append((f"memory namespace {a.size}, 4 KiB randread, QD 32, 1 core",
                 f"fio --ioengine=io_uring, {a.size} file on tmpfs", best(m_o), best(m_b), 2.0))

    print(f"fio + uNVMe engine ({ENGINE}), {a.seconds} s per run, best of {a.rounds}\n")
    print("| scenario | ours IOPS | ours ns/I/O (CPU) | baseline | baseline IOPS | "
          "baseline ns/I/O (CPU) | ratio | target |")
    print("|---|---:|---:|---|---:|---:|---:|---|")
    out = []
    for name, bname, o, b, target in rows:
        ratio = o["iops"] / b["iops"]
        verdict = "met" if ratio >= target else "NOT met"
        print(f"| {name} | {o['iops'] / 1e6:.3f}M | {ns(o)} | {bname} | {b['iops'] / 1e6:.3f}M | "
              f"{ns(b)} | {ratio:.2f}x | >= {target}x: {verdict} |")
        out.append({"scenario": name, "baseline": bname, "ours": o, "baseline_result": b,
                    "ratio": ratio, "target": target})
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
