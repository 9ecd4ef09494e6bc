#!/usr/bin/env python3
"""Host-managed flash figures for make bench, each next to its baseline from the same run.

1. FTL write amplification and IOPS against device utilization (50..95%), 4 KiB uniform random
   writes at steady state, greedy against cost-benefit collection, with the analytical greedy
   model of the same utilization: WA = a / (a + W0(-a e^-a)), a = physical / logical space
   (Desnoyers 2012; Xiang & Kurkoski 2011). The FTL is driven directly (tools/bench/ftl_waf),
   on an emulated zoned namespace in memory with 1024 zones. Target: WAF within 10% of the
   model at 80% utilization.
2. CPU per I/O of the FTL (ftl://, through the NVMe protocol like any device) against the plain
   namespace of the same emulated device kind, 4 KiB random reads and writes, one core, QD 32
   (unvme perf's CPU ns per I/O). Target: at most 1.15x.
3. The KV API: the host KV engine on a zoned namespace (hostkv://) against the emulated KV SSD
   and RocksDB's db_bench (fillrandom, readrandom, deleterandom), the same work on every side:
   the same number of operations per phase over the same number of 16-byte keys, drawn uniformly
   at random with repeats for every phase (db_bench's order; kv_perf -p 5), so the same share
   of retrieves finds its key (printed); the second round of one process each reported, every
   process pinned to CPU 0; db_bench tuned as in bench_kv.py (block cache, bloom filter,
   checksums as ours). Store and retrieve ops/s, medians of the rounds. Targets: KV on ZNS >=
   0.7x the KV SSD, >= 2x RocksDB for retrieve.
4. LightNVM's table in our terms: the page-mapped block target (FTL) against the KV target,
   1 MiB value writes: throughput and latency.
5. The cost of durable acknowledgements (group commit): store and retrieve ops/s of kv_perf on
   the KV configurations, in memory and in files, sync and async at queue depth 64, against a
   baseline build whose KV devices acknowledged a store before it was durable
   (ZNS_BENCH_BASELINE=<its build directory>; without it the section shows this build alone).
   The two builds run alternately, ZNS_BENCH_ROUNDS rounds each (default 3), medians; files go
   to ZNS_BENCH_DIR (default: the system's temporary directory).

Every figure but the WAF curve's is the median of BENCH_ROUNDS runs (3); the curve's points
are one run each: its writes come from a fixed seed, so a point's WAF is the same in every run
(its KIOPS column is for reading the trend only).

  BUILD=build python3 scripts/bench_zns.py [--short] [--only SECTION] [--json out.json]
                                           [--plot-dir DIR]
"""
import argparse
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
UNVME = BUILD / "tools" / "unvme" / "unvme"
FTL_WAF = BUILD / "tools" / "bench" / "ftl_waf"
KV_PERF = BUILD / "tools" / "kv" / "kv_perf"
import bench_common  # noqa: E402  (the bench's own run directory, in its ENV)
ENV = dict(bench_common.ENV)


def lambert_w0(x):
    """Principal branch of Lambert's W for -1/e <= x < 0, by Newton's method."""
    w = -1.0 + math.sqrt(max(0.0, 2.0 * (1.0 + math.e * x))) if x < -0.3 else x
    for _ in range(100):
        ew = math.exp(w)
        f = w * ew - x
        step = f / (ew * (w + 1.0) + 1e-300)
        w -= step
        if abs(step) < 1e-14:
            break
    return w


def greedy_model(util):
    a = 1.0 / util
    return a / (a + lambert_w0(-a * math.exp(-a)))


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True,
                          env=ENV, **kw).stdout


def waf_curve(short):
    size, zone = ("64M", "128K") if short else ("256M", "256K")
    utils = [50, 80, 95] if short else [50, 60, 70, 80, 90, 95]
    rows = []
    for u in utils:
        for gc in ("greedy", "cb"):
            warm, meas = ("1", "1") if short or u < 90 else ("2", "2")
            out = run([FTL_WAF, f"emu://waf?ns=zns,zone={zone}:{size}:4096",
                       f"op={100 - u}&gc={gc}&format=1", warm, meas])
            r = json.loads(out)
            r["util"] = u
            r["model"] = greedy_model(u / 100.0)
            rows.append(r)
    return rows


ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))


def median(values):
    v = sorted(x for x in values if x is not None)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2 if v else None


def medians(runs):
    """The per-key medians of a list of {key: number or {key: number}} results."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: medians([r[k] for r in runs]) for k in first}
    return median(runs)


def perf(dev, workload, seconds, qd=32, fill=False):
    out = run([UNVME, "perf", dev, "-w", workload, "-b", "4k", "-q", qd, "-t", seconds, "-c", "0",
               "-o", "json", *(["--fill"] if fill else [])])
    j = json.loads(out)
    return {"iops": j["total"]["iops"], "ns_per_io": j["cpu"]["ns_per_io"],
            "p50_us": j["total"]["latency_us"]["p50"], "p99_us": j["total"]["latency_us"]["p99"]}


def cpu_per_io(short):
    secs = 1 if short else 3
    size = "512M" if short else "2G"
    plain = f"emu://plain?ns=mem:{size}:4096"
    ftl = f"ftl://emu://fz?ns=zns,zone=16M:{size}:4096?op=50&format=1"
    rows = []
    for wl in ("randread", "randwrite"):
        # every block written once first (--fill): reads move real data on both sides, and the
        # FTL's writes run with its map full, collecting garbage as at steady state
        ps, fs = [], []
        for _ in range(1 if short else ROUNDS):
            ps.append(perf(plain, wl, secs, fill=True))
            fs.append(perf(ftl, wl, secs, fill=True))
        p, f = medians(ps), medians(fs)
        rows.append({"workload": wl, "plain": p, "ftl": f, "ratio": f["ns_per_io"] / p["ns_per_io"],
                     "runs": {"plain": ps, "ftl": fs}})
    return rows


def kv_perf(dev, keys, value, extra=(), exe=None, sync=True):
    """kv_perf, two rounds, the second round's phases: sync calls on CPU 0, or async ones at
    queue depth 64 with the completion thread on CPU 1."""
    mode = ["-s", "1"] if sync else ["-s", "0", "-q", "2", "-a", "64"]
    out = run(["taskset", "-c", "0" if sync else "0,1", exe or KV_PERF, "-w", "-r", "-n", keys,
               "-v", value, "-t", "2", "-c", "1", *mode, "-d", dev, "-J", *extra])
    last = json.loads(out)["tests"][-1]
    res = {}
    for ph in last:
        d = ph["devices"][0]
        t = ph.get("total", {})
        found = (1 - t["not_found"] / t["operations"]) if t.get("operations") else None
        res[ph["phase"]] = {"ops": d["ops_per_sec"], "mean_us": d.get("qos_us", {}).get("mean"),
                            "mb_s": d.get("throughput_mb_s"), "found": found}
    return res


def rocksdb(keys, value):
    """db_bench's fillrandom/readrandom/deleterandom as bench_kv.py runs it (one thread, tuned,
    pinned to CPU 0, the second round reported, as kv_perf's second round is)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_kv  # noqa: E402
    res = bench_kv.db_bench(keys, value, 1)
    return ({ph: {"ops": v["ops"], "found": v["found"]}
             for ph, v in res[bench_kv.ROUNDS_IN_RUN[-1]].items()} if res else None)


def kv_compare(short):
    keys = 5000 if short else 50000
    same_order = ["-p", "5"]  # uniform random with repeats, drawn anew per phase: db_bench's
    ssd, zns, rdb = [], [], []
    for i in range(1 if short else ROUNDS):
        seed = ["-g", str(i + 1)]
        size = "512M" if short else "2G"
        ssd.append(kv_perf(f"emu://kvssd?ns=kv:{size}", keys, 4096, same_order + seed))
        zns.append(kv_perf(f"hostkv://emu://kvz?ns=zns,zone=16M:{size}:4096?op=30", keys, 4096,
                           same_order + seed))
        rdb.append(rocksdb(keys, 4096))
    return {"keys": keys, "value": 4096, "kv_ssd": medians(ssd), "hostkv_zns": medians(zns),
            "rocksdb": medians(rdb) if all(rdb) else None,
            "runs": {"kv_ssd": ssd, "hostkv_zns": zns, "rocksdb": rdb}}


def lightnvm_table(short):
    n = 200 if short else 1000
    secs = 1 if short else 3
    size = "512M" if short else "2G"
    blk = perf(f"ftl://emu://lb?ns=zns,zone=16M:{size}:4096?op=30&format=1", "write", secs, qd=1)
    # 1 MiB writes through perf: the block size is the value size
    out = run([UNVME, "perf", f"ftl://emu://lb2?ns=zns,zone=16M:{size}:4096?op=30&format=1", "-w",
               "write", "-b", "1M", "-q", 1, "-t", secs, "-c", 0, "-o", "json"])
    j = json.loads(out)
    block = {"mb_s": j["total"]["mib_per_s"], "mean_us": j["total"]["latency_us"]["avg"],
             "p99_us": j["total"]["latency_us"]["p99"]}
    kv = kv_perf(f"hostkv://emu://lk?ns=zns,zone=16M:{size}:4096?op=30", n, 1 << 20)
    st = kv.get("store", {})
    return {"block_1m": block, "kv_1m": {"mb_s": st.get("mb_s"), "mean_us": st.get("mean_us"),
                                          "ops": st.get("ops")}, "block_4k_qd1": blk}


def durability_cost(short):
    """Section 5: this build against the baseline build, alternately."""
    base = os.environ.get("ZNS_BENCH_BASELINE")
    base_perf = pathlib.Path(base) / "tools" / "kv" / "kv_perf" if base else None
    if base_perf and not base_perf.exists():
        sys.exit(f"bench_zns: ZNS_BENCH_BASELINE: {base_perf} is not built")
    rounds = 1 if short or not base_perf else int(os.environ.get("ZNS_BENCH_ROUNDS", "3"))
    keys = 1000 if short else 20000
    hkv = "zone=16M:2G:4096"
    configs = [  # name, device (FILE: a fresh file per run), sync, keys
        ("emulated KV SSD, memory, sync", "emu://dm?ns=kv:2G", True, keys),
        ("host KV engine, ZNS in memory, sync", f"hostkv://emu://hm?ns=zns,{hkv}?op=30", True, keys),
        ("host KV engine, ZNS in memory, async QD 64", f"hostkv://emu://hm?ns=zns,{hkv}?op=30",
         False, keys),
        ("emulated KV SSD, file, sync", "emu://df?ns=kv:2G::FILE", True, keys // 10),
        ("emulated KV SSD, file, async QD 64", "emu://df?ns=kv:2G::FILE", False, keys),
        ("host KV engine, ZNS file, sync", f"hostkv://emu://hf?ns=zns,{hkv}:FILE?op=30", True,
         keys // 10),
        ("host KV engine, ZNS file, async QD 64", f"hostkv://emu://hf?ns=zns,{hkv}:FILE?op=30",
         False, keys),
    ]
    builds = [("now", KV_PERF)] + ([("baseline", base_perf)] if base_perf else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-zns-", dir=os.environ.get("ZNS_BENCH_DIR")) as tmp:
        for name, dev, sync, n in configs:
            got = {b: {"store": [], "retrieve": []} for b, _ in builds}
            for r in range(rounds):
                order = builds if r % 2 == 0 else builds[::-1]  # alternate who goes first
                for b, exe in order:
                    for f in pathlib.Path(tmp).iterdir():
                        f.unlink()
                    res = kv_perf(dev.replace("FILE", f"{tmp}/media"), n, 4096, exe=exe, sync=sync)
                    for ph in ("store", "retrieve"):
                        got[b][ph].append(res.get(ph, {}).get("ops") or 0)
            med = {b: {ph: sorted(v)[len(v) // 2] for ph, v in d.items()} for b, d in got.items()}
            rows.append({"config": name, "keys": n, "rounds": rounds, **med})
    return {"baseline": base, "rows": rows}


def render_durability(dc):
    lines = ["### The cost of durable acknowledgements: before and after group commit", ""]
    if not dc["baseline"]:
        lines += ["(no baseline build given: ZNS_BENCH_BASELINE)", "",
                  "| configuration | keys | store ops/s | retrieve ops/s |", "|---|---:|---:|---:|"]
        for r in dc["rows"]:
            lines.append(f"| {r['config']} | {r['keys']} | {r['now']['store']:,.0f} | "
                         f"{r['now']['retrieve']:,.0f} |")
        return "\n".join(lines)
    lines += [f"kv_perf, 4 KiB values, the median of {dc['rows'][0]['rounds']} alternating rounds "
              "each: the baseline build acknowledged a store from the device's buffers (before "
              "group commit), this one once it is durable.", "",
              "| configuration | keys | store before | store now | ratio | retrieve before | "
              "retrieve now | ratio |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in dc["rows"]:
        b, n = r["baseline"], r["now"]
        lines.append(f"| {r['config']} | {r['keys']} | {b['store']:,.0f} | {n['store']:,.0f} | "
                     f"{fmt_ratio(n['store'], b['store'])} | {b['retrieve']:,.0f} | "
                     f"{n['retrieve']:,.0f} | {fmt_ratio(n['retrieve'], b['retrieve'])} |")
    return "\n".join(lines)


PLOT = r'''
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows, outdir = json.load(open(sys.argv[1])), sys.argv[2]
utils = sorted({r["util"] for r in rows})
fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
for gc, mark in (("greedy", "o-"), ("cost-benefit", "s--")):
    sel = [r for r in rows if r["gc"] == gc]
    ax[0].plot([r["util"] for r in sel], [r["waf"] for r in sel], mark, label=f"FTL, {gc}")
    ax[1].plot([r["util"] for r in sel], [r["iops"] / 1e3 for r in sel], mark, label=f"FTL, {gc}")
model = [next(r["model"] for r in rows if r["util"] == u) for u in utils]
ax[0].plot(utils, model, "k:", label="greedy model (Lambert W)")
ax[0].set_yscale("log"); ax[0].set_xlabel("utilization (%)"); ax[0].set_ylabel("write amplification")
ax[1].set_xlabel("utilization (%)"); ax[1].set_ylabel("KIOPS, 4 KiB random writes (FTL alone)")
for a in ax:
    a.grid(alpha=0.3); a.legend()
fig.suptitle("Host FTL on an emulated zoned namespace: steady state")
fig.tight_layout(); fig.savefig(f"{outdir}/ftl-waf.png", dpi=110)
'''


def plot(rows, outdir):
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(rows, f)
    try:
        p = subprocess.run(["/usr/bin/python3", "-c", PLOT, f.name, str(outdir)], capture_output=True,
                           text=True)
    finally:
        os.unlink(f.name)
    return None if p.returncode == 0 else f"plot not drawn: {p.stderr.strip()[-200:]}"


def fmt_ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "n/a"


def render(d):
    """The section's markdown from its results (make bench prints it; make bench-doc reuses it)."""
    waf, cpu, kv, ln = d["waf"], d["cpu"], d["kv"], d["lightnvm"]
    lines = ["### FTL steady state: 4 KiB uniform random writes", "",
             "| utilization | GC | WAF | model (greedy) | WAF / model | WAF incl. headers | KIOPS |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for r in waf:
        lines.append(f"| {r['util']}% | {r['gc']} | {r['waf']:.2f} | {r['model']:.2f} | "
                     f"{r['waf'] / r['model']:.3f} | {r['waf_total']:.2f} | {r['iops'] / 1e3:.1f} |")
    g80 = next((r for r in waf if r["util"] == 80 and r["gc"] == "greedy"), None)
    if g80:
        dev = abs(g80["waf"] / g80["model"] - 1)
        lines += ["", f"Target: greedy WAF at 80% within 10% of the model: {g80['waf']:.2f} against "
                  f"{g80['model']:.2f} ({dev * 100:.1f}% off) -> {'met' if dev <= 0.10 else 'NOT met'}."]
    if (d.get("plots") or {}).get("waf"):
        lines += ["", "![FTL write amplification against utilization](img/ftl-waf.png)"]
    elif d.get("plot_failed"):
        lines += ["", d["plot_failed"]]
    lines += ["", "### FTL CPU per I/O against the plain namespace (4 KiB, QD 32, one core)", "",
              "| workload | plain ns/I/O | FTL ns/I/O | ratio | plain KIOPS | FTL KIOPS |",
              "|---|---:|---:|---:|---:|---:|"]
    for r in cpu:
        lines.append(f"| {r['workload']} | {r['plain']['ns_per_io']:.0f} | {r['ftl']['ns_per_io']:.0f} | "
                     f"{r['ratio']:.2f}x | {r['plain']['iops'] / 1e3:.0f} | {r['ftl']['iops'] / 1e3:.0f} |")
    worst = max(r["ratio"] for r in cpu)
    lines += ["", f"Target: at most 1.15x: worst {worst:.2f}x -> {'met' if worst <= 1.15 else 'NOT met'} "
              "(the FTL is a second NVMe controller over the first: two protocol traversals per I/O)."]
    lines += ["", f"### KV API: {kv['keys']} operations per phase over {kv['keys']} keys of 16 bytes, "
              "random with repeats (db_bench's order on every side), 4 KiB values, sync, CPU 0", "",
              "| | store ops/s | retrieve ops/s | retrieves that found their key |", "|---|---:|---:|---:|"]
    for name, key in (("emulated KV SSD", "kv_ssd"), ("host KV engine on ZNS", "hostkv_zns"),
                      ("RocksDB db_bench (tmpfs, tuned)", "rocksdb")):
        r = kv.get(key)
        if r:
            found = r.get("retrieve", {}).get("found")
            lines.append(f"| {name} | {r.get('store', {}).get('ops', 0):,.0f} | "
                         f"{r.get('retrieve', {}).get('ops', 0):,.0f} | "
                         f"{'n/a' if found is None else f'{100 * found:.0f}%'} |")
    z, s, rdb = kv["hostkv_zns"], kv["kv_ssd"], kv["rocksdb"]
    r1 = z["retrieve"]["ops"] / s["retrieve"]["ops"]
    lines += ["", f"Target: KV on ZNS >= 0.7x the KV SSD: store {fmt_ratio(z['store']['ops'], s['store']['ops'])}, "
              f"retrieve {r1:.2f}x -> {'met' if r1 >= 0.7 else 'NOT met'}."]
    if rdb and rdb.get("retrieve", {}).get("ops"):
        r2 = z["retrieve"]["ops"] / rdb["retrieve"]["ops"]
        lines.append(f"Target: retrieve >= 2x RocksDB: {r2:.2f}x -> {'met' if r2 >= 2 else 'NOT met'}.")
    lines += ["", "### LightNVM's comparison in our terms: 1 MiB writes, QD 1", "",
              "| target | MB/s | mean latency (us) |", "|---|---:|---:|",
              f"| page-mapped block (FTL, ftl://) | {ln['block_1m']['mb_s']:.0f} | {ln['block_1m']['mean_us']:.0f} |",
              f"| key-value (host KV engine, hostkv://) | {ln['kv_1m']['mb_s'] or 0:.0f} | {ln['kv_1m']['mean_us'] or 0:.0f} |"]
    if d.get("durability"):
        lines += ["", render_durability(d["durability"])]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", default=os.environ.get("BENCH_QUICK") == "1",
                    help="small devices and short runs (default under BENCH_QUICK=1)")
    ap.add_argument("--json")
    ap.add_argument("--plot-dir")
    ap.add_argument("--only", choices=["durability"], help="run one section alone")
    a = ap.parse_args()
    short = a.short or os.environ.get("BENCH_SHORT") == "1"
    for exe in (UNVME, FTL_WAF, KV_PERF):
        if not exe.exists():
            sys.exit(f"bench_zns: {exe} is not built")
    if a.only == "durability":
        dc = durability_cost(short)
        print(render_durability(dc))
        if a.json:
            pathlib.Path(a.json).write_text(json.dumps({"durability": dc}, indent=2) + "\n")
        return
    d = {"waf": waf_curve(short)}
    if a.plot_dir:
        msg = plot(d["waf"], pathlib.Path(a.plot_dir))
        d["plot_failed"] = msg
        d["plots"] = {"waf": None if msg else str(pathlib.Path(a.plot_dir) / "ftl-waf.png")}
    d["cpu"] = cpu_per_io(short)
    d["kv"] = kv_compare(short)
    d["lightnvm"] = lightnvm_table(short)
    d["durability"] = durability_cost(short)
    print(render(d))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(d, indent=2) + "\n")


if __name__ == "__main__":
    main()
