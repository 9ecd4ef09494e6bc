#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kv_db_bench against RocksDB's db_bench for make bench: the same db_bench benchmark list with
the same flags (--benchmarks, --num, --key_size, --value_size, --threads, --seed), both outputs
parsed with the same regex (bench_common.DB_BENCH_RESULT), ratios per benchmark.

Ours: kv_db_bench on an in-memory emulated KV namespace (inline mode: the device's work runs
on the calling thread). RocksDB: Debian's db_bench on tmpfs with what it needs besides
(--db, and as in bench_kv.py WAL off and no compression); neither side makes anything
durable. Each benchmark runs on the data the ones before it left, in one process per side.

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
DEVICE = "emu://kvdbbench?ns=kv:4G"


def common_flags(num, value_size, seed):
    return [f"--benchmarks={','.join(BENCHMARKS)}", f"--num={num}", "--key_size=16",
            f"--value_size={value_size}", "--threads=1", f"--seed={seed}"]


def parse(out, who):
    """{benchmark: {"ops", "found"}} from db_bench-format output."""
    lines = re.findall(bc.DB_BENCH_RESULT, out, re.M)
    names = [x[0] for x in lines]
    if names != list(BENCHMARKS):
        raise RuntimeError(f"{who} printed results {names}, not {list(BENCHMARKS)}:\n{out[-2000:]}")
    return {name: {"ops": float(ops), "found": int(f) / int(of) if of else None}
            for name, _, ops, f, of in lines}


def ours(num, value_size, seed):
    out, _ = bc.run([bc.KV_DB_BENCH, *common_flags(num, value_size, seed), f"--device={DEVICE}"],
                    timeout=1800)
    return parse(out, "kv_db_bench")


def rocksdb(num, value_size, seed):
    if not shutil.which("db_bench"):
        return None
    with tempfile.TemporaryDirectory(dir=bc.TMPFS if os.path.isdir(bc.TMPFS) else None) as d:
        out, _ = bc.run(["db_bench", *common_flags(num, value_size, seed), f"--db={d}/db",
                         "--disable_wal=1", "--compression_type=none"], timeout=1800)
    return parse(out, "db_bench")


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
            "flags": " ".join(common_flags(num, "V", "R"))}


def pct(s):
    return bc.fmt(s, lambda x: f"{100 * x:.0f}%", False)


def render(d):
    out = [f"`kv_db_bench` and Debian's `db_bench` with the same flags (`{d['flags']}`, V the "
           "value size, R the round), one process per side running the benchmarks in order; "
           f"median of {d['rounds']} runs (range in brackets). Ours: in-memory emulated KV "
           "namespace; RocksDB: tmpfs, WAL off, no compression. readseq: ours retrieves every "
           "key a KV iterator lists, RocksDB walks its iterator. Found: the share of reads that "
           "found their key, both sides (random keys repeat, so fillrandom leaves some unwritten).",
           ""]
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
    return "\n".join(out)


def add_args(ap):
    ap.add_argument("--num", type=int, default=0)


if __name__ == "__main__":
    sys.exit(bc.main(__doc__.splitlines()[0], run, render, add_args))
