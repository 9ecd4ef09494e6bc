#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""KV figures for make bench: the SDK (kv_perf) next to RocksDB's db_bench in the same run, and
submission and completion on the same core against separate cores at equal queue depth.

1. KV SDK against RocksDB. Both sides do the same operations in the same key order:
   16-byte keys, N operations per phase, every phase drawing its own uniform random keys with
   repeats over N keys (db_bench's fillrandom, readrandom, deleterandom; kv_perf -p 5), so
   about 1/e of the first round's reads and deletes miss on both sides. Two rounds in one
   process each: the cold first (fresh device / fresh database, memory never touched) and
   the warm second (db_bench: overwrite, readrandom, deleterandom on the same database; ours:
   the same phases again on the same device). Both are reported.
   Threads: sync rows use one core on both sides (the caller polls its queue; db_bench
   --threads=1); async rows use two cores (a submitting core and a completion thread on the
   other), so db_bench runs --threads=2, with the operations split between them
   (--writes/--reads/--deletes = N/2 each) to keep N per phase.
   Ours: an in-memory emulated KV namespace (inline mode: the device's work, index and
   value copy, runs on the thread that rings the doorbell; its memory exists from its
   creation, as a device's DRAM does). RocksDB: Debian's db_bench on tmpfs, tuned as RocksDB's
   own guide says for data that fits in memory (bench_common.DB_BENCH_TUNED: a 2 GiB block
   cache, a 10 bits/key bloom filter, block checksums off as ours keeps none, WAL off and no
   compression, as nothing is durable or compressed on our side): memtable, then flushes and
   compactions into files. Both processes pinned to the same CPUs (taskset: CPU 0 for sync,
   CPUs 0 and 1 for async; RocksDB's flush and compaction threads inherit the mask), and each
   side's whole CPU time (every thread) over its run is reported. Limit: memcpy_floor, one
   copy of the value per store or retrieve alone on one core (deletes copy no value).
2. Same core against separate cores, at equal queue depth. The SDK offers one same-core mode,
   sync: the caller submits and polls its own queue, one call in flight (QD 1); a completion
   thread may not share a submitting core (the SDK refuses the mask). So the comparison at equal
   QD is QD 1: sync on one core against async with one call in flight and the completion thread
   on the other core. The queue-depth effect is shown separately: async at QD 64 against
   async at QD 1, both on separate cores. Two devices: the in-memory namespace above and a
   thread-mode KV device with an SSD's latency (80 us retrieves, 20 us stores, 48 units), whose
   engine thread takes the core the caller's side leaves free. Warm round, every key found
   (kv_perf -p 4, a random permutation).

Async figures depend on how fast a cache line moves between the two cores, which on shared VMs
changes from run to run: the report prints it (tools/bench/core_pingpong, before and after).

  BUILD=build python3 scripts/bench_kv.py [--keys N] [--json out.json]
"""
import os
import re
import shutil
import sys
import tempfile

import bench_common as bc

PHASES = ("store", "retrieve", "delete")
ROUNDS_IN_RUN = ("cold", "warm")
# 2 GiB: the 200,000 4 KiB values and their records (the device's memory exists from its
# creation, so a larger namespace would only cost time to make); a quick run's keys need less
KV_SIZE = "256M" if bc.QUICK else "2G"
MEM_KV = f"emu://kvbench?ns=kv:{KV_SIZE}"
SSD_KV = f"emu://kvssd?ns=kv:{KV_SIZE}&mode=thread&rlat=80us&wlat=20us&units=48&cpu={{cpu}}"
SYNC = ["-c", "1", "-s", "1"]


def async_args(qd):
    return ["-c", "1", "-s", "0", "-q", "2", "-a", str(qd)]


def cpus_of(mode_args):
    """The CPUs a kv_perf mode uses: the caller's core 0, and core 1 with a completion thread."""
    return "0" if "-s" in mode_args and mode_args[mode_args.index("-s") + 1] == "1" else "0,1"


def kv_perf(device, keys, value_size, dist, mode_args, seed):
    """One kv_perf run of two rounds: {round: {phase: {"ops", "not_found", "operations"}},
    "cpu_s": the process's CPU time (every thread)}, pinned to the CPUs its mode uses."""
    cmd = [bc.KV_PERF, "-w", "-r", "-e", "-n", keys, "-v", value_size, "-t", 2, "-p", dist,
           "-g", seed, "-d", device, "-J", *mode_args]
    out, cpu = bc.run(bc.pinned(cmd, cpus_of(mode_args)), timeout=1800)
    res = {"cpu_s": cpu}
    for rnd, test in zip(ROUNDS_IN_RUN, bc.json_out(out)["tests"]):
        res[rnd] = {ph["phase"]: {"ops": ph["total"]["ops_per_sec"],
                                  "found": 1 - ph["total"]["not_found"] / ph["total"]["operations"]}
                    for ph in test}
    return res


DB_NAMES = {"store": ("fillrandom", "overwrite"), "retrieve": ("readrandom",) * 2,
            "delete": ("deleterandom",) * 2}


def db_bench(keys, value_size, threads):
    """db_bench in the same two rounds, tuned and pinned (CPU 0, or CPUs 0 and 1 with two
    threads); None when it is not installed."""
    if not shutil.which("db_bench"):
        return None
    per = keys // threads
    with tempfile.TemporaryDirectory(dir=bc.TMPFS if os.path.isdir(bc.TMPFS) else None) as d:
        cmd = ["db_bench", "--benchmarks=fillrandom,readrandom,deleterandom,overwrite,readrandom,"
               "deleterandom", f"--num={keys}", f"--writes={per}", f"--reads={per}",
               f"--deletes={per}", "--key_size=16", f"--value_size={value_size}",
               *bc.DB_BENCH_TUNED, f"--threads={threads}", f"--db={d}/db"]
        out, cpu = bc.run(bc.pinned(cmd, "0" if threads == 1 else "0,1"), timeout=1800)
    lines = [(name, ops, found, of) for name, _, ops, found, of
             in re.findall(bc.DB_BENCH_RESULT, out, re.M)]
    if len(lines) != 6:
        raise RuntimeError(f"db_bench printed {len(lines)} results, not 6:\n{out[-2000:]}")
    res = {r: {} for r in ROUNDS_IN_RUN}
    res["cpu_s"] = cpu
    for i, (name, ops, found, of) in enumerate(lines):
        rnd, ph = ROUNDS_IN_RUN[i // 3], PHASES[i % 3]
        res[rnd][ph] = {"ops": float(ops), "found": int(found) / int(of) if of else None}
    return res


def pick(runs, rnd, ph, key="ops"):
    return bc.stat([r[rnd][ph][key] if r else None for r in runs])


def versus_rocksdb(keys, value_sizes):
    rows = []
    for vs in value_sizes:
        floor = bc.stat([bc.memcpy_floor(vs, max(keys * vs, 64 << 20))])
        for mode, args, threads in (("sync", SYNC, 1), ("async", async_args(64), 2)):
            if mode == "async" and bc.ncpus() < 2:
                continue
            ours, base = [], []
            for i in range(bc.ROUNDS):
                ours.append(kv_perf(MEM_KV, keys, vs, 5, args, i + 1))
                base.append(db_bench(keys, vs, threads))
            # CPU per operation over the whole run (both rounds, every phase), every thread
            ops = 2 * len(PHASES) * keys
            cpu = {"ours": bc.stat([r["cpu_s"] * 1e9 / ops for r in ours]),
                   "rocksdb": bc.stat([r["cpu_s"] * 1e9 / ops for r in base if r])}
            for rnd in ROUNDS_IN_RUN:
                for ph in PHASES:
                    o, b = pick(ours, rnd, ph), pick(base, rnd, ph)
                    rows.append({"value_size": vs, "mode": mode, "threads": threads, "round": rnd,
                                 "phase": ph, "ours": o, "rocksdb": b, "ratio": bc.ratio(o, b),
                                 "ours_found": pick(ours, rnd, ph, "found"),
                                 "rocksdb_found": pick(base, rnd, ph, "found"),
                                 "limit": floor if ph != "delete" else None,
                                 "cpu_ns_per_op": cpu})
    return rows


def placement(mem_keys, ssd_keys):
    """Same core (sync, QD 1) against separate cores (async QD 1 and QD 64), warm round."""
    rows = []
    if bc.ncpus() < 2:
        return rows
    configs = (("same core, QD 1", SYNC, 1), ("separate cores, QD 1", async_args(1), 0),
               ("separate cores, QD 64", async_args(64), 0))
    for dev_name, dev, keys in (("memory, inline", lambda cpu: MEM_KV, mem_keys),
                                ("SSD model, thread mode", lambda cpu: SSD_KV.format(cpu=cpu), ssd_keys)):
        res = {}
        for name, args, engine_cpu in configs:
            res[name] = [kv_perf(dev(engine_cpu), keys, 4096, 4, args, i + 1) for i in range(bc.ROUNDS)]
        for ph in PHASES:
            s = {name: pick(res[name], "warm", ph) for name, _, _ in configs}
            rows.append({"device": dev_name, "phase": ph, "keys": keys, **s,
                         "separate_vs_same_qd1": bc.ratio(s["separate cores, QD 1"], s["same core, QD 1"]),
                         "qd64_vs_qd1": bc.ratio(s["separate cores, QD 64"], s["separate cores, QD 1"])})
    return rows


def run(a):
    bc.need(bc.KV_PERF, "kv_perf")
    keys = a.keys or (4000 if bc.QUICK else 200000)
    before = bc.core_to_core_ns()
    rows = versus_rocksdb(keys, [4096] if bc.QUICK else [4096, 1024])
    place = placement(keys, max(500, keys // 20))
    after = bc.core_to_core_ns()
    return {"keys": keys, "rounds": bc.ROUNDS, "rows": rows, "placement": place,
            "core_to_core_ns": [before, after] if before is not None else None,
            "rocksdb": shutil.which("db_bench") is not None}


def pct(s):
    return bc.fmt(s, lambda x: f"{100 * x:.0f}%", False)


def render(d):
    out = [f"{d['keys']} operations per phase over {d['keys']} keys of 16 bytes, random with "
           "repeats, drawn anew for every phase on both sides (db_bench's fillrandom, "
           "readrandom, deleterandom; kv_perf -p 5); cold = first round, warm = second round "
           f"of the same process; median of {d['rounds']} runs (range in brackets). Ours: "
           "in-memory KV namespace (its memory there from creation); RocksDB: db_bench on tmpfs, "
           "tuned (2 GiB block cache, 10 bits/key bloom filter, block checksums off as ours, WAL "
           "off, no compression); both pinned to the same CPUs (CPU 0 sync, CPUs 0-1 async, "
           "every thread). Found: the share of retrieves (deletes) that found their key, both "
           "sides. CPU: each side's whole process over its run (both rounds, all phases), per "
           "operation.", ""]
    if d.get("core_to_core_ns"):
        b, a = d["core_to_core_ns"]
        out += [f"Cache line between CPU 0 and CPU 1 (core_pingpong), one way: {b:.0f} ns before, "
                f"{a:.0f} ns after the runs.", ""]
    rows = []
    for r in d["rows"]:
        lim = f"{bc.fmt(r['limit'], spread=False)}" if r["limit"] else "-"
        rows.append([r["value_size"], f"{r['mode']} ({r['threads']} thread{'s' if r['threads'] > 1 else ''})",
                     r["round"], r["phase"], bc.fmt(r["ours"]), bc.fmt(r["rocksdb"]),
                     bc.fmt_ratio(r["ratio"]),
                     f"{pct(r['ours_found'])} / {pct(r['rocksdb_found'])}" if r["phase"] != "store" else "-",
                     lim])
    out.append(bc.table(["value", "mode (db_bench threads)", "round", "op", "ours ops/s",
                         "RocksDB ops/s", "ratio", "found ours / RocksDB", "copy limit ops/s"],
                        rows, "rllrrrrrr"))
    cpu_lines = []
    for r in d["rows"]:
        c = r.get("cpu_ns_per_op")
        if c and r["round"] == "cold" and r["phase"] == "store":
            cpu_lines.append(f"{r['value_size']} B {r['mode']}: ours {bc.fmt(c['ours'], bc.num(0))} "
                             f"ns, RocksDB {bc.fmt(c['rocksdb'], bc.num(0))} ns")
    if cpu_lines:
        out += ["", "CPU per operation over each whole run (every thread): " + "; ".join(cpu_lines) + "."]
    get = {(r["value_size"], r["mode"], r["round"], r["phase"]): r for r in d["rows"]}
    s_ret, s_st = get.get((4096, "sync", "warm", "retrieve")), get.get((4096, "sync", "warm", "store"))
    if s_ret and s_st:
        out += ["", "Targets (KV issue, 4 KiB values, sync, warm): retrieve >= 1M ops/s: "
                f"{s_ret['ours']['median'] / 1e6:.2f}M; store >= 0.7M ops/s: "
                f"{s_st['ours']['median'] / 1e6:.2f}M; >= 3x RocksDB: retrieve "
                f"{bc.fmt_ratio(s_ret['ratio'])}, store {bc.fmt_ratio(s_st['ratio'])}."]
    if d["placement"]:
        out += ["", "Same core against separate cores at equal queue depth (QD 1: sync on one core "
                "against async with one call in flight and the completion thread on CPU 1), and "
                "the queue-depth effect on separate cores (QD 64 against QD 1); 4 KiB values, warm "
                "round, every key found (kv_perf -p 4):", ""]
        rows = [[r["device"], r["phase"], bc.fmt(r["same core, QD 1"]),
                 bc.fmt(r["separate cores, QD 1"]), bc.fmt_ratio(r["separate_vs_same_qd1"]),
                 bc.fmt(r["separate cores, QD 64"]), bc.fmt_ratio(r["qd64_vs_qd1"])]
                for r in d["placement"]]
        out.append(bc.table(["device", "op", "same core QD 1 ops/s", "separate cores QD 1 ops/s",
                             "separate / same (QD 1)", "separate cores QD 64 ops/s",
                             "QD 64 / QD 1 (separate)"], rows, "llrrrrr"))
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--keys", type=int, default=0)


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
