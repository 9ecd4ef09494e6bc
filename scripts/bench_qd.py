#!/usr/bin/env python3
"""Queue-depth sweep for make bench: 4 KiB and 512 B random reads on a 1 GiB memory namespace
through `unvme perf` (one core, every block written first with --fill), next to fio's
io_uring engine on a 1 GiB tmpfs file (written first too), QD 1..256, the same core, the same
run. Prints IOPS, latency percentiles and the ratio per QD; draws KIOPS against QD like the
original SDK's figures (with Debian's matplotlib, run by /usr/bin/python3).

  BUILD=build python3 scripts/bench_qd.py [--seconds N] [--json out.json] [--plot-dir DIR]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
UNVME = BUILD / "tools" / "unvme" / "unvme"
ENV = dict(os.environ, UNVME_QUIET="1")
QDS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def ours(bs, qd, seconds):
    cmd = [str(UNVME), "perf", "emu://qd?ns=mem:1G:512", "--fill", "-w", "randread", "-b", str(bs),
           "-q", str(qd), "-t", str(seconds), "-c", "0", "-o", "json"]
    t = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV).stdout)["total"]
    lat = t["latency_us"]
    return {"iops": t["iops"], "p50_us": lat["p50"], "p99_us": lat["p99"], "p99.9_us": lat["p99.9"]}


def fio(path, bs, qd, seconds):
    cmd = ["fio", "--name=qd", "--ioengine=io_uring", f"--filename={path}", "--rw=randread",
           f"--bs={bs}", f"--iodepth={qd}", "--time_based", f"--runtime={seconds}", "--thread",
           "--cpus_allowed=0", "--output-format=json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    pct = r["clat_ns"]["percentile"]
    return {"iops": r["iops"], "p50_us": pct["50.000000"] / 1e3, "p99_us": pct["99.000000"] / 1e3,
            "p99.9_us": pct["99.900000"] / 1e3}


PLOT = r'''
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows, outdir = json.load(open(sys.argv[1])), sys.argv[2]
for bs in sorted({r["bs"] for r in rows}, reverse=True):
    sel = [r for r in rows if r["bs"] == bs]
    qd = [r["qd"] for r in sel]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(qd, [r["ours"]["iops"] / 1e3 for r in sel], "o-", label="uNVMe (perf, memory namespace)")
    ax.plot(qd, [r["fio"]["iops"] / 1e3 for r in sel], "s--", label="fio io_uring (tmpfs file)")
    ax.set_xscale("log", base=2); ax.set_xticks(qd); ax.set_xticklabels([str(q) for q in qd])
    ax.set_xlabel("queue depth"); ax.set_ylabel("KIOPS (one core)")
    ax.set_title(f"{bs} B random read, 1 GiB, one core"); ax.grid(alpha=0.3); ax.legend()
    fig.tight_layout(); fig.savefig(f"{outdir}/qd-randread-{bs}.png", dpi=110)
'''


def plot(rows, outdir):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(rows, f)
    try:
        p = subprocess.run(["/usr/bin/python3", "-c", PLOT, f.name, str(outdir)], capture_output=True,
                           text=True)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        return f"plots not drawn: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--plot-dir", default=str(ROOT / "bench" / "results"))
    a = ap.parse_args()
    rows = []
    fd, path = tempfile.mkstemp(prefix="unvme-qd-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        with os.fdopen(fd, "wb") as f:             # written through, so reads move real data
            block = bytes((i * 131 + 7) & 0xFF for i in range(1 << 20))
            for _ in range(1024):
                f.write(block)
        for bs in (4096, 512):
            for qd in QDS:
                o, b = ours(bs, qd, a.seconds), fio(path, bs, qd, a.seconds)
                rows.append({"bs": bs, "qd": qd, "ours": o, "fio": b, "ratio": o["iops"] / b["iops"]})
    finally:
        os.unlink(path)
    print(f"QD sweep: random reads, 1 GiB, one core (CPU 0), {a.seconds} s per point; "
          "ours: unvme perf on a memory namespace (--fill); baseline: fio io_uring, tmpfs file\n")
    print("| bs | QD | ours KIOPS | p50 us | p99 us | p99.9 us | fio KIOPS | fio p50 | fio p99 | ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        o, b = r["ours"], r["fio"]
        print(f"| {r['bs']} | {r['qd']} | {o['iops'] / 1e3:.0f} | {o['p50_us']:.2f} | {o['p99_us']:.2f} | "
              f"{o['p99.9_us']:.2f} | {b['iops'] / 1e3:.0f} | {b['p50_us']:.2f} | {b['p99_us']:.2f} | "
              f"{r['ratio']:.2f}x |")
    best4k = max((r for r in rows if r["bs"] == 4096), key=lambda r: r["ours"]["iops"])
    print(f"\nTargets (benchmark issue, 4 KiB, one core): >= 1.2M IOPS: best {best4k['ours']['iops'] / 1e6:.2f}M "
          f"at QD {best4k['qd']}; >= 2x fio io_uring: {best4k['ratio']:.2f}x at that QD, "
          f"{min(r['ratio'] for r in rows if r['bs'] == 4096):.2f}x..{max(r['ratio'] for r in rows if r['bs'] == 4096):.2f}x over QD 1..256.")
    pathlib.Path(a.plot_dir).mkdir(parents=True, exist_ok=True)
    why = plot(rows, a.plot_dir)
    print(why or f"plots: {a.plot_dir}/qd-randread-4096.png, qd-randread-512.png")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
