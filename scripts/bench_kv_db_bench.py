#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kv_db_bench against RocksDB's db_bench for make bench: the same db_bench benchmark list with
the same flags (--benchmarks, --num, --key_size, --value_size, --threads, --seed), both outputs
parsed with the same regex (bench_common.DB_BENCH_RESULT), ratios per benchmark.

Ours: kv_db_bench on an in-memory emulated KV namespace (inline mode: the device's work runs
on the calling thread; the device's memory exists from its creation, as a device's DRAM does).
RocksDB: Debian's db_bench on tmpfs, tuned as RocksDB's guide says for data that fits in memory
(bench_common.DB_BENCH_TUNED: a 2 GiB block cache, a 10 bits/key bloom filter, block checksums
off as ours keeps none, WAL off and no compression as nothing is durable or compressed on our
side). Both pinned to CPU 0 (taskset: RocksDB's flush and compaction threads too).

The same phase order and the same memory on both sides: each side runs fillseq alone in a
fresh process (a fresh device, a fresh database) and then the rest of the list, from
fillrandom, in another fresh process, so both fills start on fresh memory on both sides, and
each later benchmark runs on the data the ones before it left. Targets (4 KiB values):
fillseq and fillrandom >= 3x db_bench's fillrandom, readrandom >= 10x db_bench's.

  BUILD=build python3 scripts/bench_kv_db_bench.py [--num N] [--json out.json]
"""
import os
import re
import shutil
import sys
import tempfile

import bench_common as bc

BENCHMARKS = ("fillseq", "fillrandom", "overwrite", "readrandom", "readseq", "readwhilewriting",
              "deleterandom")
# each part runs in a fresh process on both sides
PARTS = (BENCHMARKS[:1], BENCHMARKS[1:])
DEVICE = f"emu://kvdbbench?ns=kv:{'256M' if bc.QUICK else '2G'}"
# 4 KiB values: fills against db_bench's fillrandom, readrandom against its readrandom
TARGETS = {"fillseq": ("fillrandom", 3.0), "fillrandom": ("fillrandom", 3.0),
           "readrandom": ("readrandom", 10.0)}


def common_flags(benchmarks, num, value_size, seed):
    return [f"--benchmarks={','.join(benchmarks)}", f"--num={num}", "--key_size=16",
            f"--value_size={value_size}", "--threads=1", f"--seed={seed}"]


def parse(out, who, benchmarks):
    """{benchmark: {"ops", "found"}} from db_bench-format output."""
    lines = re.findall(bc.DB_BENCH_RESULT, out, re.M)
    names = [x[0] for x in lines]
    if names != list(benchmarks):
        raise RuntimeError(f"{who} printed results {names}, not {list(benchmarks)}:\n{out[-2000:]}")
    return {name: {"ops": float(ops), "found": int(f) / int(of) if of else None}
            for name, _, ops, f, of in lines}


def ours(num, value_size, seed):
    res = {}
    for part in PARTS:
        out, _ = bc.run(bc.pinned([bc.KV_DB_BENCH, *common_flags(part, num, value_size, seed),
                                   f"--device={DEVICE}"]), timeout=1800)
        res.update(parse(out, "kv_db_bench", part))
    return res


def rocksdb(num, value_size, seed):
    if not shutil.which("db_bench"):
        return None
    res = {}
    for part in PARTS:
        with tempfile.TemporaryDirectory(dir=bc.TMPFS if os.path.isdir(bc.TMPFS) else None) as d:
            out, _ = bc.run(bc.pinned(["db_bench", *common_flags(part, num, value_size, seed),
                                       f"--db={d}/db", *bc.DB_BENCH_TUNED]), timeout=1800)
        res.update(parse(out, "db_bench", part))
    return res


def run(a):
    bc.need(bc.KV_DB_BENCH, "kv_db_bench")
    num = a.num or (2000 if bc.QUICK else 200000)
    sizes = [100] if bc.QUICK else [100, 4096]
    rows = []
    for vs in sizes:
        o, b = [], []
        for i in range(bc.ROUNDS):
            o.append(ours(num, vs, i + 1))
            b.append(rocksdb(num, vs, i + 1))
        for name in BENCHMARKS:
            so = bc.stat([r[name]["ops"] for r in o])
            sb = bc.stat([r[name]["ops"] if r else None for r in b])
            rows.append({"value_size": vs, "benchmark": name, "ours": so, "rocksdb": sb,
                         "ratio": bc.ratio(so, sb),
                         "ours_found": bc.stat([r[name]["found"] for r in o]),
                         "rocksdb_found": bc.stat([r[name]["found"] if r else None for r in b])})
    return {"num": num, "rounds": bc.ROUNDS, "rows": rows,
            "rocksdb": shutil.which("db_bench") is not None,
            "flags": " ".join(common_flags(BENCHMARKS, num, "V", "R")),
            "parts": [list(p) for p in PARTS], "tuned": " ".join(bc.DB_BENCH_TUNED),
            "targets": {k: list(v) for k, v in TARGETS.items()}}


def pct(s):
    return bc.fmt(s, lambda x: f"{100 * x:.0f}%", False)


def render(d):
    parts = " and ".join("`" + ",".join(p) + "`" for p in d.get("parts", [BENCHMARKS]))
    out = [f"`kv_db_bench` and Debian's `db_bench` with the same flags (`{d['flags']}`, V the "
           f"value size, R the round), each side's list in two fresh processes ({parts}), so "
           "both fills start on fresh memory on both sides; both pinned to CPU 0; median of "
           f"{d['rounds']} runs (range in brackets). Ours: in-memory emulated KV namespace, its "
           "memory there from creation; RocksDB: tmpfs, tuned (`" + d.get("tuned", "") + "`). "
           "readseq: ours retrieves every key a KV iterator lists, RocksDB walks its iterator. "
           "Found: the share of reads that found their key, both sides (random keys repeat, so "
           "fillrandom leaves some unwritten).", ""]
    if not d["rocksdb"]:
        out += ["db_bench is not installed (Debian's rocksdb-tools): no baseline.", ""]
    rows = []
    for r in d["rows"]:
        found = (f"{pct(r['ours_found'])} / {pct(r['rocksdb_found'])}"
                 if r["ours_found"] is not None else "-")
        rows.append([r["value_size"], r["benchmark"], bc.fmt(r["ours"]), bc.fmt(r["rocksdb"]),
                     bc.fmt_ratio(r["ratio"]), found])
    out.append(bc.table(["value", "benchmark", "kv_db_bench ops/s", "db_bench ops/s", "ratio",
                         "found ours / RocksDB"], rows, "rlrrrr"))
    get = {(r["value_size"], r["benchmark"]): r for r in d["rows"]}
    verdicts = []
    for name, (theirs, target) in (d.get("targets") or {}).items():
        o, b = get.get((4096, name)), get.get((4096, theirs))
        if o and b and o["ours"] and b["rocksdb"]:
            v = o["ours"]["median"] / b["rocksdb"]["median"]
            verdicts.append(f"{name} {v:.2f}x db_bench's {theirs} (>= {target}x: "
                            f"{'met' if v >= target else 'NOT met'})")
    if verdicts:
        out += ["", "Targets (4 KiB values): " + "; ".join(verdicts) + "."]
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--num", type=int, default=0)


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
