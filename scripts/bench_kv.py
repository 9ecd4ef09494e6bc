#!/usr/bin/env python3
"""KV figures for make bench: the SDK (kv_perf) next to RocksDB's db_bench in the same run.

Ours: kv_perf on an in-memory emulated KV namespace, 16-byte keys, one submitting core, sync
(the caller polls) and async (a completion thread on the other core, QD 64). Each run stores,
retrieves and deletes N keys twice and reports the second round: the first preconditions the
device's memory, as one preconditions an SSD (on these VMs the first touch of a page costs
~2.5 us, a hypervisor artifact that would otherwise dominate).

Baseline: Debian's db_bench (RocksDB 7.8) fillrandom, readrandom, deleterandom with the same
key and value sizes, WAL off, no compression, on tmpfs, one thread.

Submission and completion on the same core (sync: the caller polls its own queue) against
separate cores (async: a completion thread on CPU 1 reaps and calls back), as in the original's
configuration guide, on two devices: the in-memory namespace above (inline mode: the device's
work runs on the thread that rings, the completion thread in async) and a thread-mode KV device with the latency
model of an SSD (80 us retrieves, 20 us stores, 48 units), whose engine thread takes the CPU
the caller's side leaves free (CPU 1 for sync, CPU 0 for async).

Async figures depend on how fast a cache line moves between the two cores, which on these
VMs changes from run to run (50 to 250 ns) as the hypervisor places the virtual CPUs: the
report prints it, measured by tools/bench/core_pingpong before and after the runs.

  BUILD=build python3 scripts/bench_kv.py [--keys N] [--json out.json]
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
KV_PERF = BUILD / "tools" / "kv" / "kv_perf"
PINGPONG = BUILD / "tools" / "bench" / "core_pingpong"
ENV = dict(os.environ, UNVME_QUIET="1")
PHASES = ("store", "retrieve", "delete")


def ours(keys, value_size, mode):
    cmd = [str(KV_PERF), "-w", "-r", "-e", "-n", str(keys), "-v", str(value_size), "-t", "2",
           "-d", "emu://kvbench?ns=kv:4G", "-J"]
    if mode == "async" and (os.cpu_count() or 1) >= 2:
        cmd += ["-c", "1", "-s", "0", "-q", "2", "-a", "64"]
    else:
        cmd += ["-c", "1", "-s", "1"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV).stdout
    last = json.loads(out)["tests"][-1]
    return {ph["phase"]: ph["devices"][0]["ops_per_sec"] for ph in last}, " ".join(cmd)


def rocksdb(keys, value_size):
    if not shutil.which("db_bench"):
        return None, "db_bench not installed"
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as d:
        cmd = ["db_bench", "--benchmarks=fillrandom,readrandom,deleterandom", f"--num={keys}",
               "--key_size=16", f"--value_size={value_size}", "--disable_wal=1",
               "--compression_type=none", "--threads=1", f"--db={d}/db"]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    res = {}
    for name, ph in (("fillrandom", "store"), ("readrandom", "retrieve"), ("deleterandom", "delete")):
        m = re.search(rf"^{name}\s*:\s*[\d.]+ micros/op (\d+) ops/sec", out, re.M)
        if m:
            res[ph] = float(m.group(1))
    return res, " ".join(cmd)


def core_to_core_ns():
    """One-way cache-line move between CPU 0 and CPU 1 in ns, or None on one CPU."""
    if (os.cpu_count() or 1) < 2 or not PINGPONG.exists():
        return None
    out = subprocess.run([str(PINGPONG), "0", "1", "300000"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["one_way_ns"]


SSD_KV = "emu://kvssd?ns=kv:4G&mode=thread&rlat=80us&wlat=20us&units=48&cpu={cpu}"


def placement(keys):
    """Same core (sync) against separate cores (async) on the SSD-model KV device."""
    rows = []
    if (os.cpu_count() or 1) < 2:
        return rows
    res = {}
    for mode, cpu, extra in (("sync", 1, ["-c", "1", "-s", "1"]),
                             ("async", 0, ["-c", "1", "-s", "0", "-q", "2", "-a", "64"])):
        cmd = [str(KV_PERF), "-w", "-r", "-e", "-n", str(keys), "-v", "4096", "-t", "1",
               "-d", SSD_KV.format(cpu=cpu), "-J", *extra]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV).stdout
        last = json.loads(out)["tests"][-1]
        res[mode] = ({ph["phase"]: ph["devices"][0]["ops_per_sec"] for ph in last}, " ".join(cmd))
    for ph in PHASES:
        rows.append({"phase": ph, "same_core_ops": res["sync"][0][ph],
                     "separate_ops": res["async"][0][ph],
                     "ratio": res["async"][0][ph] / res["sync"][0][ph],
                     "cmd_same": res["sync"][1], "cmd_separate": res["async"][1]})
    return rows


def run(keys):
    rows = []
    for vs in (4096, 1024):
        base, bcmd = rocksdb(keys, vs)
        for mode in ("sync", "async"):
            o, ocmd = ours(keys, vs, mode)
            for ph in PHASES:
                b = base.get(ph) if base else None
                rows.append({"value_size": vs, "mode": mode, "phase": ph, "ours_ops": o[ph],
                             "rocksdb_ops": b, "ratio": o[ph] / b if b else None,
                             "cmd": ocmd, "baseline_cmd": bcmd})
    return rows


def report_placement(rows, ssd_rows):
    get = {(r["value_size"], r["mode"], r["phase"]): r for r in rows}
    lines = ["", "Submission and completion, same core (sync) against separate cores (async, "
             "completion thread on CPU 1, 64 calls in flight), 16 B keys, 4 KiB values:", "",
             "| device | op | same core ops/s | separate cores ops/s | separate / same |",
             "|---|---|---:|---:|---:|"]
    for ph in PHASES:
        s, a = get[(4096, "sync", ph)], get[(4096, "async", ph)]
        lines.append(f"| memory, inline | {ph} | {s['ours_ops'] / 1e3:.0f}K | "
                     f"{a['ours_ops'] / 1e3:.0f}K | {a['ours_ops'] / s['ours_ops']:.2f}x |")
    for r in ssd_rows:
        lines.append(f"| SSD model, thread mode | {r['phase']} | {r['same_core_ops'] / 1e3:.1f}K | "
                     f"{r['separate_ops'] / 1e3:.1f}K | {r['ratio']:.2f}x |")
    return "\n".join(lines)


def report(rows, keys, c2c=None):
    lines = [f"KV: {keys} keys of 16 bytes, in-memory KV namespace vs db_bench on tmpfs (WAL off)",
             ""]
    if c2c:
        lines += [f"Cache line between CPU 0 and CPU 1 (core_pingpong), one way: "
                  f"{c2c[0]:.0f} ns before, {c2c[1]:.0f} ns after the runs.", ""]
    lines += ["| value | mode | op | ours ops/s | RocksDB ops/s | ratio |",
             "|---:|---|---|---:|---:|---:|"]
    for r in rows:
        b = f"{r['rocksdb_ops'] / 1e3:.0f}K" if r["rocksdb_ops"] else "n/a"
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "n/a"
        lines.append(f"| {r['value_size']} | {r['mode']} | {r['phase']} | "
                     f"{r['ours_ops'] / 1e3:.0f}K | {b} | {ratio} |")
    get = {(r["value_size"], r["mode"], r["phase"]): r for r in rows}
    s_ret, s_st = get[(4096, "sync", "retrieve")], get[(4096, "sync", "store")]
    a_ret, a_st = get[(4096, "async", "retrieve")], get[(4096, "async", "store")]
    lines += ["", "Targets (KV issue, 4 KiB values, sync): retrieve >= 1M ops/s: "
              f"{s_ret['ours_ops'] / 1e6:.2f}M; store >= 0.7M ops/s: {s_st['ours_ops'] / 1e6:.2f}M; "
              f">= 3x RocksDB: retrieve {s_ret['ratio'] or 0:.1f}x, store {s_st['ratio'] or 0:.1f}x; "
              f"async / sync: retrieve {a_ret['ours_ops'] / s_ret['ours_ops']:.2f}x, "
              f"store {a_st['ours_ops'] / s_st['ours_ops']:.2f}x."]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=200000)
    ap.add_argument("--json")
    a = ap.parse_args()
    before = core_to_core_ns()
    rows = run(a.keys)
    ssd_rows = placement(max(1000, a.keys // 10))
    after = core_to_core_ns()
    c2c = (before, after) if before is not None else None
    print(report(rows, a.keys, c2c))
    print(report_placement(rows, ssd_rows))
    if a.json:
        for r in rows:
            r["core_to_core_ns"] = c2c
        pathlib.Path(a.json).write_text(json.dumps({"rows": rows, "placement_ssd_model": ssd_rows},
                                                   indent=2) + "\n")


if __name__ == "__main__":
    main()
