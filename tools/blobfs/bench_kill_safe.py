#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What kill-safe WAL writes cost RocksDB: db_bench fillrandom on BlobFS with the plugin's
kill_safe=false (the baseline: WAL appends stay in the process until a commit) and
kill_safe=true (every WAL append also copied to the shadow on tmpfs), alternating runs on a
fresh file system each, medians and their ratio: db_bench's ops/s (wall clock), and the CPU
time db_bench used per operation (user + system, from the kernel's accounting), which a
machine busy with other work disturbs far less.

    tools/blobfs/bench_kill_safe.py [--build build] [--runs 3] [--num 300000] [--dir /dev/shm]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(build, work, kill_safe, num, threads):
    img = Path(work) / "bench.img"
    img.unlink(missing_ok=True)
    dev = f"emu://killsafe?ns=file:4G:512:{img}"
    uri = f"id=blobfs;device={dev};format=always;kill_safe={'true' if kill_safe else 'false'}"
    env = dict(os.environ, LD_PRELOAD=str(build / "plugins/rocksdb/libblobfs_rocksdb.so"),
               UNVME_QUIET="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(["db_bench", f"--fs_uri={uri}", "--benchmarks=fillrandom", f"--num={num}",
                        f"--threads={threads}", "--value_size=100", "--key_size=16",
                        "--db=/bench", "--compression_type=none"],
                       env=env, capture_output=True, text=True, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"^fillrandom\s*:\s*([\d.]+) micros/op (\d+) ops/sec", r.stdout, re.M)
    if r.returncode != 0 or not m:
        sys.exit(f"db_bench failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    img.unlink(missing_ok=True)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return int(m.group(2)), cpu * 1e6 / (num * threads)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("UNVME_BUILD", "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--num", type=int, default=300000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dir", default="/dev/shm")
    o = ap.parse_args()
    build = Path(o.build) if Path(o.build).is_absolute() else REPO / o.build
    res = {False: [], True: []}
    cpu = {False: [], True: []}
    with tempfile.TemporaryDirectory(dir=o.dir, prefix="bench-kill-safe-") as work:
        for i in range(o.runs):
            for ks in (False, True):  # alternating: drift on a shared machine hits both
                ops, us = run(build, work, ks, o.num, o.threads)
                res[ks].append(ops)
                cpu[ks].append(us)
                print(f"run {i + 1} kill_safe={str(ks).lower():5s} fillrandom {ops:8d} ops/s "
                      f"{us:6.2f} us CPU/op", flush=True)
    base, safe = statistics.median(res[False]), statistics.median(res[True])
    cbase, csafe = statistics.median(cpu[False]), statistics.median(cpu[True])
    print(f"median: kill_safe=false {base:.0f} ops/s {cbase:.2f} us CPU/op, kill_safe=true "
          f"{safe:.0f} ops/s {csafe:.2f} us CPU/op; ratio ops/s {safe / base:.3f}, "
          f"CPU/op {csafe / cbase:.3f}")


if __name__ == "__main__":
    main()
