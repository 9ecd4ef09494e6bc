# SPDX-License-Identifier: BSD-3-Clause
"""What every benchmark script of make bench shares: where the tools are, how a run's CPU
time is measured, how baselines are pinned and tuned, how rounds become a median with its
spread, markdown tables and plots.

Every figure is the median of ROUNDS runs (3 by default) with the range of the runs next to
it, "1.23M (1.20-1.25)"; ours and its baseline run back to back in each round and the ratio is
the ratio of the medians, with the range of the per-round ratios.

The rule every section follows (docs/performance.md says it at the top): a baseline gets the
tuning its own documentation recommends for the workload, is pinned to the CPUs our side uses
(pinned(): the whole process, every thread it starts inherits the mask, io_uring's iou-wrk
workers included, which sample_threads() checks), has every thread's CPU counted (run(): the
getrusage of the whole finished process; kernel workers outside it, such as a loop device's
kworkers, with kworker_cpu_s()), and does the same work as our side (key order, hit rate,
phase order, fresh or warm memory); physical floors (floor()) are measured per CPU-second,
in the same rounds, on the page size the device's data lives on.

Environment:
  BUILD         the meson build directory (default build)
  BENCH_QUICK   1: short runs and few points, for the tests (tests/integration/test_bench_scripts.py);
                the figures of a quick run are not worth reading
  BENCH_ROUNDS  runs per figure (default 3; quick mode 2)
"""
import contextlib
import glob
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
UNVME = BUILD / "tools" / "unvme" / "unvme"
KV_PERF = BUILD / "tools" / "kv" / "kv_perf"
FIO_ENGINE = BUILD / "plugins" / "fio" / "unvme-fio.so"
KV_DB_BENCH = BUILD / "tools" / "kv_db_bench" / "kv_db_bench"
PINGPONG = BUILD / "tools" / "bench" / "core_pingpong"
MEMCPY_FLOOR = BUILD / "tools" / "bench" / "memcpy_floor"
# UNVME_EMU_PREFAULT=1: the emulated devices' memory is made when they are created even where
# no hugepages are reserved (hw/emu/ns/ns_memory.h), as a device's DRAM exists before its
# first command: no command of ours pays a first-touch page fault
ENV = dict(os.environ, UNVME_QUIET="1", UNVME_EMU_PREFAULT="1")
# A run directory of the benchmark's own (devices of the same name opened by other programs
# on the machine are then not shared with ours): made once by whichever script starts first,
# inherited by the sections bench.py runs.
if not os.environ.get("UNVME_RUN_DIR"):
    import atexit
    _run_dir = tempfile.mkdtemp(prefix="unvme-bench-run-")
    atexit.register(shutil.rmtree, _run_dir, True)
    ENV["UNVME_RUN_DIR"] = _run_dir
QUICK = os.environ.get("BENCH_QUICK", "") == "1"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2" if QUICK else "3"))
TMPFS = "/dev/shm"
# One result line of db_bench (and of kv_db_bench, which prints the same):
# "readrandom   :       3.103 micros/op 321336 ops/sec 0.006 seconds 2000 operations;
#  35.5 MB/s (2000 of 2000 found)": name, micros/op, ops/sec, found, of.
DB_BENCH_RESULT = r"^(\w+)\s*:\s*([\d.]+) micros/op (\d+) ops/sec.*?(?:\((\d+) of (\d+) found\))?$"


def ncpus():
    return len(os.sched_getaffinity(0))


# ---- running things ----

def pinned(cmd, cpus="0"):
    """cmd run with its whole process pinned to cpus (taskset: every thread it creates inherits
    the mask, the kernel's io_uring workers of its rings included)."""
    return ["taskset", "-c", str(cpus), *[str(c) for c in cmd]]


# db_bench tuned for a read and write benchmark whose data fits in memory, as RocksDB's own
# tuning guide recommends: a block cache that holds the data, a 10 bits/key bloom filter; the
# WAL off and no compression as our side (nothing durable, nothing compressed); block checksums
# neither written nor verified, as the emulated KV namespace in memory keeps none.
DB_BENCH_TUNED = ["--cache_size=2147483648", "--bloom_bits=10", "--verify_checksum=0",
                  "--checksum_type=0", "--disable_wal=1", "--compression_type=none"]


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run(cmd, timeout=None, env=None, sample=None):
    """Runs cmd to completion; returns (stdout, CPU seconds it used). The CPU time is the
    getrusage of the finished child: every thread it had (fio's job threads, an engine's
    device threads, io_uring's workers, which the kernel accounts to their process).
    sample: a ThreadSample, which looks at the child's threads while it runs."""
    cmd = [str(c) for c in cmd]
    before = children_cpu_s()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env or ENV)
    if sample:
        sample.start(p.pid)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    finally:
        if sample:
            sample.stop()
    cpu = children_cpu_s() - before
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{err[-3000:]}{out[-1000:]}")
    return out, cpu


class ThreadSample:
    """Looks at a running process's threads every interval (from a thread of ours): which
    threads whose name starts with prefix existed and which CPUs they were allowed. For
    io_uring's kernel workers (iou-wrk-*): they run outside the submitting thread, so the
    report says where they ran."""

    def __init__(self, prefix="iou-wrk", interval=0.2):
        import threading
        self.prefix, self.interval, self.seen = prefix, interval, {}
        self._stop = threading.Event()
        self._thread = None

    def _look(self, pid):
        for task in glob.glob(f"/proc/{pid}/task/*"):
            try:
                comm = open(f"{task}/comm").read().strip()
                if not comm.startswith(self.prefix):
                    continue
                allowed = next(l.split(":", 1)[1].strip() for l in open(f"{task}/status")
                               if l.startswith("Cpus_allowed_list"))
                self.seen[comm] = allowed
            except (OSError, StopIteration):
                pass

    def start(self, pid):
        import threading

        def loop():
            while not self._stop.wait(self.interval):
                self._look(pid)
        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()

    def summary(self):
        """{"threads": n, "cpus": sorted distinct masks} of what was seen."""
        return {"threads": len(self.seen), "cpus": sorted(set(self.seen.values()))}


def kworker_cpu_s():
    """CPU seconds used so far by the kernel's kworker threads (the loop driver's work runs in
    them, outside the process that submits): the difference over a run is their share."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            f = open(stat).read()
        except OSError:
            continue
        comm = f[f.index("(") + 1:f.rindex(")")]
        if comm.startswith("kworker"):
            fields = f[f.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def json_out(text):
    """The JSON document in a program's output (fio prints notes before it)."""
    return json.loads(text[text.index("{"):])


def fio_esc(uri):
    return uri.replace(":", "\\:")


def fio_side(job):
    """IOPS and latency of a fio job (read or write side, whichever did I/O)."""
    side = job["read"] if job["read"]["total_ios"] else job["write"]
    pct = side["clat_ns"].get("percentile", {})
    get = lambda k: pct.get(k, 0) / 1e3
    return {"iops": side["iops"], "ios": side["total_ios"], "p50_us": get("50.000000"),
            "p99_us": get("99.000000"), "p99.9_us": get("99.900000"),
            # fio's own CPU figure: the job thread's usr+sys (getrusage RUSAGE_THREAD), which
            # leaves out every other thread working for the job
            "job_thread_cpu_s": (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * job["job_runtime"] / 1e3}


def perf(devices, bs, qd, seconds, workload="randread", cores="0", fill=False, timeout=None):
    """One `unvme perf` run: IOPS, latency, measured CPU per I/O (process CPU time, every
    thread) and its busy time per I/O (polling threads x wall time)."""
    cmd = [UNVME, "perf"]
    for d in devices:
        cmd += ["-d", d]
    cmd += ["-w", workload, "-b", bs, "-q", qd, "-t", seconds, "-c", cores, "-o", "json"]
    if fill:
        cmd.append("--fill")
    out, _ = run(cmd, timeout=timeout or seconds * 10 + 120)
    r = json.loads(out)
    t, lat = r["total"], r["total"]["latency_us"]
    unwritten = sum(n["blocks"] - n["blocks_written"] for n in r["namespaces"])
    return {"iops": t["iops"], "p50_us": lat["p50"], "p99_us": lat["p99"], "p99.9_us": lat["p99.9"],
            "cpu_ns": r["cpu"]["ns_per_io"], "submit_cpu_ns": r["cpu"]["submitting_threads_ns_per_io"],
            "other_cpu_ns": r["cpu"]["other_threads_ns_per_io"], "busy_ns": r["busy_ns_per_io"],
            "unwritten_blocks": unwritten, "cmd": " ".join(str(c) for c in cmd)}


def floor(block, region, buffers=32, seconds=1, cpu=0, seq=False):
    """memcpy_floor: copies per CPU-second one core makes of block-sized pieces of a region
    (random, or consecutive with seq), into as many buffers as I/Os in flight, on the page size
    a memory namespace of that size gets (hugetlbfs pages when the pool has room); the whole
    JSON, or None when the tool is missing."""
    if not MEMCPY_FLOOR.exists():
        return None
    out, _ = run([MEMCPY_FLOOR, *(["--seq"] if seq else []), block, region, seconds, cpu,
                  max(1, min(int(buffers), 4096))], timeout=seconds * 20 + 120)
    return json.loads(out)


def memcpy_floor(block, region, seconds=1, cpu=0, buffers=32, seq=False):
    """floor()'s copies per CPU-second, or None."""
    f = floor(block, region, buffers, seconds, cpu, seq)
    return f["copies_per_s"] if f else None


def floor_on_cpus(block, region, cpus, seconds=1, buffers=1, seq=False):
    """The floor of len(cpus) cores copying at once (one memcpy_floor per CPU, started
    together): the sum of their copies per CPU-second, or None."""
    if not MEMCPY_FLOOR.exists():
        return None
    procs = [subprocess.Popen([str(MEMCPY_FLOOR), *(["--seq"] if seq else []), str(block),
                               str(region), str(seconds), str(c), str(buffers)],
                              stdout=subprocess.PIPE, text=True, env=ENV) for c in cpus]
    total = 0.0
    for p in procs:
        out, _ = p.communicate(timeout=seconds * 20 + 120)
        if p.returncode != 0:
            return None
        total += json.loads(out)["copies_per_s"]
    return total


@contextlib.contextmanager
def loop_device(path):
    """A loop device over path with direct I/O to its backing file (losetup --direct-io), or
    None with the reason when this machine cannot make one (not root, no losetup)."""
    if os.geteuid() != 0 or not shutil.which("losetup"):
        yield None, "a loop device needs root and losetup"
        return
    p = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", path], capture_output=True,
                       text=True)
    if p.returncode != 0:
        yield None, f"losetup: {p.stderr.strip()}"
        return
    dev = p.stdout.strip()
    try:
        yield dev, None
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def core_to_core_ns():
    """One-way cache-line move between CPU 0 and CPU 1 in ns, or None on one CPU."""
    if ncpus() < 2 or not PINGPONG.exists():
        return None
    out, _ = run([PINGPONG, 0, 1, 300000])
    return json.loads(out)["one_way_ns"]


def tmp_file(size, prefix):
    """A file of size bytes on tmpfs, written through (reads then move real data)."""
    fd, path = tempfile.mkstemp(prefix=prefix, dir=TMPFS if os.path.isdir(TMPFS) else None)
    block = bytes((i * 131 + 7) & 0xFF for i in range(1 << 20))
    with os.fdopen(fd, "wb") as f:
        left = size
        while left > 0:
            f.write(block[:min(left, len(block))])
            left -= len(block)
    return path


# ---- rounds: median and spread ----

def stat(values):
    """{"median", "min", "max", "runs"} of the values that exist, or None."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "runs": v}


def ratio(ours, base):
    """The ratio of two stats' medians, with the range of the per-round ratios."""
    if not ours or not base or not base["median"]:
        return None
    per = [o / b for o, b in zip(ours["runs"], base["runs"]) if b]
    return {"median": ours["median"] / base["median"], "min": min(per) if per else None,
            "max": max(per) if per else None, "runs": per}


def collect(runs, key):
    """The stat of one field over a list of per-round result dicts."""
    return stat([r.get(key) if r else None for r in runs])


def si(x, digits=2):
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= div:
            return f"{x / div:.{digits}f}{suffix}"
    return f"{x:.{digits}f}"


def fmt(s, f=si, spread=True):
    """"1.23M (1.20-1.25)": median and the range of the runs."""
    if not s:
        return "n/a"
    if not spread or len(s.get("runs", [])) < 2:
        return f(s["median"])
    return f"{f(s['median'])} ({f(s['min'])}-{f(s['max'])})"


def fmt_ratio(r):
    if not r:
        return "n/a"
    if r.get("min") is None or len(r.get("runs", [])) < 2:
        return f"{r['median']:.2f}x"
    return f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"


def num(digits):
    return lambda x: f"{x:.{digits}f}"


def table(headers, rows, align=None):
    """A markdown table; align: a string of l/r per column (default: first left, rest right)."""
    align = align or "l" + "r" * (len(headers) - 1)
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# ---- plots ----

PLOT = r'''
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
spec = json.load(open(sys.argv[1]))
fig, ax = plt.subplots(figsize=(7, 4.2))
for line in spec["lines"]:
    ax.plot(spec["x"], line["y"], line.get("style", "o-"), label=line["label"])
if spec.get("log2x"):
    ax.set_xscale("log", base=2)
    ax.set_xticks(spec["x"]); ax.set_xticklabels([str(v) for v in spec["x"]])
ax.set_xlabel(spec["xlabel"]); ax.set_ylabel(spec["ylabel"])
ax.set_title(spec["title"]); ax.grid(alpha=0.3); ax.legend(fontsize=8)
fig.tight_layout(); fig.savefig(spec["path"], dpi=110)
'''


def plot_lines(path, title, xlabel, ylabel, x, lines, log2x=True):
    """Draws lines [{"label", "y", "style"}] against x into path with Debian's matplotlib
    (/usr/bin/python3, whatever Python runs this). Returns None, or why nothing was drawn."""
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    spec = {"path": str(path), "title": title, "xlabel": xlabel, "ylabel": ylabel, "x": x,
            "lines": lines, "log2x": log2x}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
    try:
        p = subprocess.run(["/usr/bin/python3", "-c", PLOT, f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        err = p.stderr.strip().splitlines()
        return f"plot not drawn: {err[-1] if err else p.returncode}"
    return None


# ---- the scripts' command line ----

def main(description, run_fn, render_fn, add_args=None):
    """The common main of a section script: runs it, prints its markdown, writes its JSON."""
    import argparse
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--plot-dir", default=str(ROOT / "bench" / "results" / "plots"))
    if add_args:
        add_args(ap)
    a = ap.parse_args()
    data = run_fn(a)
    print(render_fn(data))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(data, indent=2) + "\n")
    return 0


def need(path, what):
    if not pathlib.Path(path).exists():
        sys.exit(f"bench: {path} is not built ({what}); run 'make build' first")
