#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""make bench: uNVMe's figures next to their baselines, measured in the same run on the same
machine. Each section is a script of its own that runs ours and the baseline back to back,
rounds times, and prints a markdown table of medians with their range and ratios:

  per_io     scripts/bench_per_io.py      driver + emulated device CPU per I/O (null namespace)
  fio        plugins/fio/bench_fio.py     fio with our engine against fio's null and io_uring
  qd         scripts/bench_qd.py          QD sweep: perf, our fio engine, tuned io_uring, memcpy limit
  kv         scripts/bench_kv.py          KV SDK against RocksDB; same core against separate cores
  kvdbbench  scripts/bench_kv_db_bench.py kv_db_bench against db_bench, same benchmarks and flags
  devthread  scripts/bench_devthread.py   SSD latency model: QD curve and core-to-device layouts
  blobfs     scripts/bench_blobfs.py      BlobFS: db_bench and direct reads against ext4 on a loop device
  zns        scripts/bench_zns.py         host FTL and host KV on zoned namespaces, WAF against its model
  tcp        scripts/bench_tcp.py         NVMe/TCP: local against remote over 127.0.0.1, with its floor
  shared     scripts/bench_shared.py      several processes on one device, re-insertion, CLI cost

Writes bench/results/<stamp>.md (the tables), <stamp>.json (every run of every figure) and the
plots in <stamp>-plots/. `make bench-doc` (scripts/bench_doc.py) puts the newest results into
docs/performance.md. BENCH_QUICK=1 makes every section short (for the tests); --only picks
sections.

Run as root, the bench reserves BENCH_HUGEPAGES 2 MiB hugepages (default 3072, 6 GiB; 0 in
quick mode) for its duration and gives back what was there after: the emulated devices' memory
(memory namespaces, KV values), DMA memory and the memcpy floors then live on 2 MiB pages, as
they would on a machine set up with scripts/setup.sh. Fewer pages than asked (fragmented
memory) only means regular pages for what does not fit; the results say how many there were.
"""
import contextlib
import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

import bench_common as bc

SECTIONS = {
    "per_io": ("Driver + emulated device per I/O", bc.ROOT / "scripts" / "bench_per_io.py"),
    "fio": ("fio with our engine", bc.ROOT / "plugins" / "fio" / "bench_fio.py"),
    "qd": ("Queue-depth sweep", bc.ROOT / "scripts" / "bench_qd.py"),
    "kv": ("KV SDK", bc.ROOT / "scripts" / "bench_kv.py"),
    "kvdbbench": ("kv_db_bench against db_bench", bc.ROOT / "scripts" / "bench_kv_db_bench.py"),
    "devthread": ("Device-thread mode: SSD latency model and core-to-device layouts",
                  bc.ROOT / "scripts" / "bench_devthread.py"),
    "blobfs": ("BlobFS", bc.ROOT / "scripts" / "bench_blobfs.py"),
    "zns": ("Host-managed flash: FTL and KV on zoned namespaces", bc.ROOT / "scripts" / "bench_zns.py"),
    "tcp": ("NVMe over TCP: local against remote over 127.0.0.1", bc.ROOT / "scripts" / "bench_tcp.py"),
    "shared": ("Shared devices and hot-plug", bc.ROOT / "scripts" / "bench_shared.py"),
}


def machine():
    kernel = platform.release()
    os_name = ""
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return {"host": platform.node(), "cpus": bc.ncpus(), "kernel": kernel, "os": os_name,
            "quick": bc.QUICK, "rounds": bc.ROUNDS}


HUGEPAGES_PATH = "/proc/sys/vm/nr_hugepages"


@contextlib.contextmanager
def hugepages(want):
    """Reserves want hugepages for the run (none fewer than already reserved); yields what the
    machine had then; restores the previous reservation at the end."""
    try:
        before = int(open(HUGEPAGES_PATH).read())
    except (OSError, ValueError):
        yield {"asked": want, "reserved": 0, "note": "no hugetlbfs on this machine"}
        return
    if want <= before or os.geteuid() != 0:
        yield {"asked": want, "reserved": before,
               **({} if want <= before else {"note": "not root: nothing reserved"})}
        return
    try:
        with open(HUGEPAGES_PATH, "w") as f:
            f.write(str(want))
        got = int(open(HUGEPAGES_PATH).read())
    except (OSError, ValueError) as e:
        yield {"asked": want, "reserved": before, "note": f"cannot reserve: {e}"}
        return
    try:
        yield {"asked": want, "reserved": got}
    finally:
        try:
            with open(HUGEPAGES_PATH, "w") as f:
                f.write(str(before))
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--out", default=str(bc.ROOT / "bench" / "results"))
    a = ap.parse_args()
    bc.need(bc.UNVME, "unvme")
    only = [s for s in a.only.split(",") if s] or list(SECTIONS)
    unknown = [s for s in only if s not in SECTIONS]
    if unknown:
        sys.exit(f"bench: unknown section(s) {', '.join(unknown)}: {', '.join(SECTIONS)}")
    start = datetime.datetime.now()
    stamp = start.strftime("%Y%m%d-%H%M%S")
    outdir = pathlib.Path(a.out)
    plots = outdir / f"{stamp}-plots"
    outdir.mkdir(parents=True, exist_ok=True)
    meta = {"started": start.isoformat(timespec="seconds"), **machine()}
    results = {"meta": meta, "sections": {}, "failed": {}, "seconds": {}}
    want = int(os.environ.get("BENCH_HUGEPAGES", "0" if bc.QUICK else "3072"))
    with hugepages(want) as huge:
        meta["hugepages"] = huge
        return run_sections(a, only, outdir, plots, stamp, meta, results)


def run_sections(a, only, outdir, plots, stamp, meta, results):
    lines = [f"# uNVMe benchmark, {meta['started']}", "",
             f"Machine: {meta['host']}, {meta['cpus']} CPUs, {meta['os']}, Linux {meta['kernel']}; "
             f"median of {bc.ROUNDS} runs per figure; {meta['hugepages']['reserved']} hugepages "
             "reserved" + (" (QUICK mode: not figures to read)" if bc.QUICK else "") + "."]
    for key in only:
        title, script = SECTIONS[key]
        jpath = outdir / f"{stamp}-{key}.json"
        t0 = time.monotonic()
        print(f"bench: {key} ...", file=sys.stderr, flush=True)
        p = subprocess.run([sys.executable, str(script), "--json", str(jpath), "--plot-dir",
                            str(plots)], capture_output=True, text=True, env=dict(bc.ENV, BUILD=str(bc.BUILD)))
        results["seconds"][key] = round(time.monotonic() - t0, 1)
        if p.returncode == 0 and jpath.exists():
            results["sections"][key] = json.loads(jpath.read_text())
            jpath.unlink()
            body = p.stdout.strip()
        else:
            results["failed"][key] = f"exit {p.returncode}: {p.stderr.strip()[-3000:]}"
            body = f"failed: {results['failed'][key]}"
        lines += ["", f"## {title}", "", body]
        print(f"bench: {key} took {results['seconds'][key]:.0f} s", file=sys.stderr, flush=True)
    total = sum(results["seconds"].values())
    lines += ["", f"Took {total / 60:.1f} minutes ({', '.join(f'{k} {v:.0f} s' for k, v in results['seconds'].items())})."]
    report = "\n".join(lines)
    print(report)
    (outdir / f"{stamp}.md").write_text(report + "\n")
    (outdir / f"{stamp}.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nbench: results in {outdir}/{stamp}.md, .json and {stamp}-plots/; "
          f"'make bench-doc' puts them into docs/performance.md", file=sys.stderr)
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
