#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs the libFuzzer targets (make fuzz: long, make test-fuzz: a few seconds each).

    scripts/fuzz.py [--build build-fuzz] [--seconds S] [--runs N] [--target NAME]...
                    [--json FILE] [--jobs J] [--fork N | --workers N]

Each target first runs every input of its kept corpus (tests/fuzz/corpus/<target>: seeds and
the inputs of crashes found before, as regressions), then fuzzes until --seconds or --runs,
whichever comes first, growing a working corpus in <build>/fuzz-corpus/<target> (kept between
runs, not in the tree). A crash, a leak, a sanitizer report or a timeout fails the run; its
input is in <build>/fuzz-artifacts/ (add it to the kept corpus as regress-<what>, and a unit
test where sensible). --jobs runs several targets at once; --fork N runs one target in N
worker processes sharing its corpus (libFuzzer's -fork, which restarts its workers every few
minutes, each start replaying part of the corpus); --workers N runs N independent fuzzers of one
target for the whole run on one working corpus (each reloads what the others add): the long
run of a slow target on every CPU, its executions counted over all workers.

Targets of other parts join by adding an entry to TARGETS (a binary of the normal or the fuzz
build, its kept corpus, extra libFuzzer flags).
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# name: (binary under the fuzz build, kept corpus, extra flags)
TARGETS = {
    "emu_cmd": ("tests/fuzz/fuzz_emu_cmd", "tests/fuzz/corpus/emu_cmd", []),
    "kv_log": ("tests/fuzz/fuzz_kv_log", "tests/fuzz/corpus/kv_log", []),
    "kv_config": ("tests/fuzz/fuzz_kv_config", "tests/fuzz/corpus/kv_config", []),
    "devid": ("tests/fuzz/fuzz_devid", "tests/fuzz/corpus/devid", []),
    "cli": ("tests/fuzz/fuzz_cli", "tests/fuzz/corpus/cli", []),
    "mp": ("tests/fuzz/fuzz_mp", "tests/fuzz/corpus/mp", []),
    "target_session": ("tests/fuzz/fuzz_target_session", "tests/fuzz/corpus/target_session",
                       # its targets log every refused connection: stderr closed (the
                       # harness says a broken promise on stdout too)
                       ["-max_len=16384", "-entropic=0", "-close_fd_mask=2"]),
    "rdma": ("tests/fuzz/fuzz_rdma", "tests/fuzz/corpus/rdma", []),
}

STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)
# fork mode prints no stat:: lines: its progress lines count the workers' executions together
FORK_PROGRESS = re.compile(r"^#(\d+): .* time: (\d+)s", re.M)


def run_target(name, build, seconds, runs, fork=0, workers=1):
    exe, kept, extra = TARGETS[name]
    exe = build / exe
    if not exe.exists():
        return {"target": name, "skipped": f"{exe} is not built"}
    work = build / "fuzz-corpus" / name
    work.mkdir(parents=True, exist_ok=True)
    art = build / "fuzz-artifacts"
    art.mkdir(parents=True, exist_ok=True)
    args = [str(exe), f"-max_total_time={int(seconds)}", "-print_final_stats=1",
            f"-artifact_prefix={art}/{name}-", "-timeout=25", "-rss_limit_mb=4096",
            "-max_len=8192", *extra]
    if runs:
        args.append(f"-runs={runs}")
    if fork:
        args.append(f"-fork={fork}")
    args += [str(work), str(REPO / kept)]
    env = dict(os.environ, UNVME_QUIET="1",
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:" + os.environ.get("ASAN_OPTIONS", ""),
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    sym = Path("/usr/lib/llvm-14/bin/llvm-symbolizer")
    if sym.exists():
        env.setdefault("ASAN_SYMBOLIZER_PATH", str(sym))
    t0 = time.monotonic()
    if workers > 1:
        rc, stderr, stats = run_workers(args, runs, workers, env, seconds)
    else:
        p = subprocess.run(args, env=env, capture_output=True, text=True, errors="replace",
                           timeout=seconds + 600)
        rc, stderr = p.returncode, p.stderr
        stats = {k: int(v) for k, v in STAT.findall(stderr)}
    took = time.monotonic() - t0
    progress = FORK_PROGRESS.findall(stderr)
    if fork and progress:
        execs, secs = (int(x) for x in progress[-1])
        stats["number_of_executed_units"] = execs
        stats["average_exec_per_sec"] = execs // max(secs, 1)
    res = {"target": name, "seconds": round(took, 1), "workers": fork or workers,
           "executions": stats.get("number_of_executed_units", 0),
           "exec_per_sec": stats.get("average_exec_per_sec", 0),
           "new_units": stats.get("new_units_added", 0),
           "corpus": len(list(work.iterdir())) + len(list((REPO / kept).iterdir())),
           "peak_rss_mb": stats.get("peak_rss_mb", 0), "crashes": 0}
    if rc != 0:
        res["crashes"] = 1
        lines = [ln for ln in stderr.splitlines()
                 if "ERROR" in ln or "SUMMARY" in ln or "artifact" in ln or "deadly" in ln]
        res["failure"] = "\n".join(lines[:12]) or stderr[-2000:]
    return res


def run_workers(args, runs, workers, env, seconds):
    """N fuzzers of args on one working corpus, runs shared out among them: the first
    failing exit status, every worker's stderr, and the summed statistics (executions and
    exec/s added up, peak RSS the largest)."""
    args = [a for a in args if not a.startswith("-runs=")] + ["-reload=1"]
    each = -(-runs // workers) if runs else 0
    procs = []
    for w in range(workers):
        log = open(Path(args[0]).parent / f"fuzz-worker-{w}.log", "w+", errors="replace")
        cmd = args[:1] + ([f"-runs={each}"] if each else []) + args[1:]
        procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=log), log))
    rc, text, stats = 0, [], {}
    for p, log in procs:
        try:
            code = p.wait(timeout=seconds + 600)
        except subprocess.TimeoutExpired:
            p.kill()
            code = p.wait()
        log.seek(0)
        err = log.read()
        log.close()
        rc = rc or code
        text.append(err)
        for k, v in STAT.findall(err):
            stats[k] = max(stats.get(k, 0), int(v)) if k == "peak_rss_mb" else stats.get(k, 0) + int(v)
    return rc, "\n".join(text), stats


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("FUZZ_BUILD", "build-fuzz"))
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--runs", type=int, default=0, help="stop a target after this many runs")
    ap.add_argument("--target", action="append", choices=sorted(TARGETS))
    ap.add_argument("--json")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--fork", type=int, default=0, help="libFuzzer -fork workers per target")
    ap.add_argument("--workers", type=int, default=1,
                    help="independent fuzzers per target on one corpus, for the whole run")
    opts = ap.parse_args(argv)
    if opts.fork and opts.workers > 1:
        ap.error("--fork and --workers are two ways of using several CPUs: give one")
    build = Path(opts.build)
    build = build if build.is_absolute() else REPO / build
    names = opts.target or list(TARGETS)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        futs = [pool.submit(run_target, n, build, opts.seconds, opts.runs, opts.fork, opts.workers) for n in names]
        for f in futs:
            r = f.result()
            results.append(r)
            if "skipped" in r:
                print(f"{r['target']:10s} skipped: {r['skipped']}", flush=True)
                continue
            print(f"{r['target']:10s} {r['executions']:>12,d} executions in {r['seconds']:7.1f} s "
                  f"({r['exec_per_sec']:,d}/s), corpus {r['corpus']}, crashes {r['crashes']}",
                  flush=True)
            if r["crashes"]:
                print("   " + r["failure"].replace("\n", "\n   "), flush=True)
    if opts.json:
        Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.json).write_text(json.dumps({"targets": results}, indent=1) + "\n")
    return 1 if any(r.get("crashes") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
