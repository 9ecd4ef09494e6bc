# SPDX-License-Identifier: BSD-3-Clause
"""kv_db_bench: db_bench's workloads over the KV SDK, run as a user (or a db_bench script)
would, its output parsed with the regex make bench parses db_bench with. The found and
not-found counts are checked exactly: the key draws are recomputed here from --seed."""
import json
import re
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

sys.path.insert(0, str(REPO / "scripts"))
from bench_common import DB_BENCH_RESULT  # noqa: E402

PROG = build_dir() / "tools" / "kv_db_bench" / "kv_db_bench"
DEV = "emu://kvdb?ns=kv:256M"
MASK = (1 << 64) - 1


def run(env, *args, timeout=300):
    assert PROG.exists(), f"{PROG} is not built (set UNVME_BUILD to the build directory)"
    p = subprocess.run([str(PROG), *map(str, args)], env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode >= 0, f"kv_db_bench crashed with signal {-p.returncode}: {p.stderr}"
    assert p.returncode in (0, 1, 2, 3), f"undocumented exit code {p.returncode}"
    return p


def ok(env, *args):
    p = run(env, *args)
    assert p.returncode == 0, f"rc={p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def results(out):
    """[(name, micros/op, ops/sec, found, of)] as a db_bench parser sees them."""
    return [(n, float(us), int(ops), int(f) if f else None, int(of) if of else None)
            for n, us, ops, f, of in re.findall(DB_BENCH_RESULT, out, re.M)]


def operations(out):
    return [int(n) for n in re.findall(r" seconds (\d+) operations;", out)]


def draws(seed, run_no, thread, count, num):
    """The keys kv_db_bench's thread draws in its run_no-th benchmark (splitmix64)."""
    s = (seed + run_no * 1000003 + thread) & MASK
    out = []
    for _ in range(count):
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append((z ^ (z >> 31)) % num)
    return out


def test_readrandom_after_fillseq_finds_every_key(env):
    out = ok(env, "--benchmarks=fillseq,readrandom,readseq", "--num=3000", "--seed=5",
             f"--device={DEV}")
    r = results(out)
    assert [x[0] for x in r] == ["fillseq", "readrandom", "readseq"]
    assert r[1][3:] == (3000, 3000)
    assert operations(out) == [3000, 3000, 3000]
    assert all(x[1] > 0 and x[2] > 0 for x in r)
    # db_bench's exact line: name padded to 12, rate after "operations;"
    assert re.search(r"^fillseq      : +[\d.]+ micros/op \d+ ops/sec [\d.]+ seconds 3000 "
                     r"operations; +[\d.]+ MB/s$", out, re.M), out


def test_found_counts_follow_the_random_keys(env):
    num, seed = 2000, 11
    out = ok(env, "--benchmarks=fillrandom,readseq,deleterandom,readrandom", f"--num={num}",
             f"--seed={seed}", f"--device={DEV}", "--reads=1500")
    written = set(draws(seed, 1, 0, num, num))
    deleted = set(draws(seed, 3, 0, num, num))
    reads = draws(seed, 4, 0, 1500, num)
    found = sum(1 for k in reads if k in written and k not in deleted)
    r = results(out)
    # readseq reads what the iterator lists, up to --reads: every key fillrandom wrote
    assert operations(out)[1] == min(len(written), 1500)
    assert r[3][3:] == (found, 1500), (found, r[3])
    assert 0 < found < 1500


def test_fills_start_fresh(env):
    """db_bench starts fillseq and fillrandom on an empty database: after fillseq,fillrandom
    only fillrandom's keys are there."""
    num, seed = 1500, 21
    out = ok(env, "--benchmarks=fillseq,fillrandom,readrandom,fillseq,readseq", f"--num={num}",
             f"--seed={seed}", f"--device={DEV}")
    written = set(draws(seed, 2, 0, num, num))
    found = sum(1 for k in draws(seed, 3, 0, num, num) if k in written)
    assert results(out)[2][3:] == (found, num)
    assert found < num
    assert operations(out)[4] == num


def test_histogram_block(env):
    out = ok(env, "--benchmarks=fillseq,deleterandom", "--num=1000", "--histogram=1",
             "--seed=3", f"--device={DEV}")
    blocks = re.findall(
        r"^Microseconds per (\w+):\n"
        r"Count: (\d+) Average: [\d.]+  StdDev: [\d.]+\n"
        r"Min: (\d+)  Median: ([\d.]+)  Max: (\d+)\n"
        r"Percentiles: P50: ([\d.]+) P75: ([\d.]+) P99: ([\d.]+) P99\.9: ([\d.]+) "
        r"P99\.99: ([\d.]+)\n-{54}\n((?:[\[(] +\d+, +\d+ \] +\d+ +[\d.]+% +[\d.]+% #*\n)+)",
        out, re.M)
    assert [b[0] for b in blocks] == ["write", "delete"], out
    for b in blocks:
        count, lo, hi = int(b[1]), int(b[2]), int(b[4])
        assert count == 1000
        pct = [float(x) for x in b[5:10]]
        assert pct == sorted(pct) and lo <= pct[0] and pct[-1] <= hi
        rows = re.findall(r"^[\[(] +(\d+), +(\d+) \] +(\d+) +[\d.]+% +([\d.]+)%", b[10], re.M)
        assert sum(int(x[2]) for x in rows) == count
        assert float(rows[-1][3]) == pytest.approx(100.0)
    assert "MB/s" not in out.split("deleterandom :")[1].splitlines()[0]


def test_threads_and_readwhilewriting(env):
    out = ok(env, "--benchmarks=fillseq,readwhilewriting,readseq", "--num=1500", "--threads=2",
             "--seed=9", f"--device={DEV}")
    r = results(out)
    assert [x[0] for x in r] == ["fillseq", "readwhilewriting", "readseq"]
    # every thread does the whole count, as db_bench's; the readers share one scan
    assert operations(out) == [3000, 3000, 1500]
    # the writer only overwrites keys that exist: every read finds its key
    assert r[1][3:] == (3000, 3000)


def test_gflags_forms(env):
    out = ok(env, "-benchmarks", "fillseq", "-num", "500", "--histogram", "--nohistogram",
             "--seed", "2", "--device", DEV)
    assert "Microseconds per" not in out and operations(out) == [500]
    assert "Set seed to" in ok(env, "--benchmarks=fillseq", "--num=10", f"--device={DEV}")
    assert ok(env, "--help").startswith("usage: kv_db_bench")
    assert "kv_db_bench (uNVMe" in ok(env, "--version")


def test_json_config_spreads_keys_over_devices(env, tmp_path):
    cfg = tmp_path / "two.json"
    cfg.write_text(json.dumps({"device_description": [
        {"dev_id": "emu://kvdba?ns=kv:64M"}, {"dev_id": "emu://kvdbb?ns=kv:64M"}]}))
    out = ok(env, "--benchmarks=fillseq,readseq,readrandom", "--num=1200", "--seed=4",
             f"--json={cfg}")
    assert "Devices:    2" in out
    assert operations(out) == [1200, 1200, 1200]
    assert results(out)[2][3:] == (1200, 1200)


@pytest.mark.parametrize("args,needle", [
    (["--nosuch=1"], "unknown flag '--nosuch'"),
    (["--num=abc"], "invalid value 'abc' for --num"),
    (["--num=0"], "invalid value '0' for --num"),
    (["--threads=100"], "invalid value '100' for --threads: expected an integer 1..64"),
    (["--histogram=maybe"], "invalid value 'maybe' for --histogram"),
    (["--benchmarks=fillseq,readrandomm"], "unknown benchmark 'readrandomm'"),
    (["--key_size=5", "--num=100"], "--key_size=5 with --num=100"),
    (["--num"], "flag '--num' needs a value"),
    (["fillseq"], "unexpected argument 'fillseq'"),
])
def test_flag_errors(env, args, needle):
    p = run(env, *args)
    assert p.returncode == 2 and needle in p.stderr, p.stderr
    assert p.stdout == ""


def test_bad_device(env, tmp_path):
    p = run(env, "--num=10", "--device=emu://bad?ns=kv:3Q")
    assert p.returncode == 3 and "3Q" in p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    p = run(env, "--num=10", f"--json={bad}")
    assert p.returncode == 3 and str(bad) in p.stderr
