# SPDX-License-Identifier: BSD-3-Clause
"""blobfs_perf as a user runs it (its options, the results table, verify, reuse, errors) and
the BlobFS benchmark script in its quickest form. Speed is never asserted."""
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

PERF = build_dir() / "tools" / "blobfs" / "blobfs_perf"


def perf(env, *args, timeout=120):
    return subprocess.run([str(PERF), *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def penv(env, tmp_path):
    return dict(env, UNVME_QUIET="1", UNVME_LOCK_DIR=str(tmp_path))


def test_write_then_read_back_with_verify(penv, unvme, tmp_path):
    dev = unvme.file_dev("perf", size="256M")
    r = perf(penv, "-u", dev, "--mkfs", "-w", "write", "-b", "64k", "-s", "16m", "-m", "2", "-v")
    assert r.returncode == 0, r.stderr
    assert "MiB/s" in r.stdout
    # reuse the files: sequential and random reads, dropping the cache, repeated, checked
    for wl in ("read", "randread"):
        r = perf(penv, "-u", dev, "-w", wl, "-b", "4k", "-s", "16m", "-m", "2", "-a", "-e", "-v", "-r", "2",
                 "--json")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert [p["pass"] for p in doc["passes"]] == [1, 2]
        assert all(p["miscompares"] == 0 and p["errors"] == 0 and p["bytes"] == 32 << 20
                   for p in doc["passes"])
    # direct reads move no data through the cache; prefetch and retain switches are taken
    r = perf(penv, "-u", dev, "-w", "read", "-b", "256k", "-s", "16m", "-a", "-d", "-v", "--json")
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)["passes"][0]
    assert p["cache_hits"] == 0 and p["prefetch_pages"] == 0 and p["miscompares"] == 0
    r = perf(penv, "-u", dev, "-w", "read", "-b", "4k", "-s", "16m", "-a", "-e", "-p", "on", "-f", "16k",
             "-t", "off", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["passes"][0]["prefetch_pages"] > 0, r.stderr
    r = perf(penv, "-u", dev, "-w", "read", "-b", "4k", "-s", "16m", "-a", "-e", "-p", "off", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["passes"][0]["prefetch_pages"] == 0, r.stderr


def test_table_and_memory_namespace(penv):
    r = perf(penv, "-u", "emu://p?ns=mem:512M", "--mkfs", "-w", "randread", "-b", "4k", "-s", "8m", "-m", "2",
             "-c", "0,1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].split()[:5] == ["workload", "pass", "MiB", "seconds", "MiB/s"]
    assert lines[2].startswith("prepare") and lines[3].startswith("randread")
    r = perf(penv, "--memcpy", "-b", "256k", "-s", "64m")
    assert r.returncode == 0 and "memcpy floor" in r.stdout


def test_bad_usage(penv):
    assert perf(penv, "-w", "read").returncode == 2
    r = perf(penv, "-u", "emu://x?ns=mem:64M", "-w", "scan")
    assert r.returncode == 2 and "bad value" in r.stderr
    r = perf(penv, "-u", "emu://x?ns=mem:64M", "-b", "1m", "-s", "4k")
    assert r.returncode == 2 and "below the block size" in r.stderr
    r = perf(penv, "-u", "emu://x?ns=mem:64M", "-w", "read")  # no file system there
    assert r.returncode == 3 and "no BlobFS" in r.stderr
    r = perf(penv, "-u", "emu://x?ns=mem:64M", "--mkfs", "-w", "read", "-a", "-s", "1m")
    assert r.returncode == 1 and "does not exist" in r.stderr  # -a with no files written


def test_bench_script_quick(tmp_path):
    env = dict(os.environ, BUILD=str(build_dir()), UNVME_QUIET="1", BLOBFS_BENCH_NUM="3000",
               BLOBFS_BENCH_SIZE=str(4 << 20), BLOBFS_BENCH_ROUNDS="1")
    out_json = tmp_path / "b.json"
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_blobfs.py"), "--quick", "--json",
                        str(out_json)], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "memcpy" in p.stdout and "blobfs_perf" in p.stdout
    r = json.loads(out_json.read_text())
    rows = r["blobfs_perf"]["rows"]
    assert rows and all(x["mib_s"] > 0 and x["memcpy_mib_s"] > 0 for x in rows)
    if "rows" in r["rocksdb"]:
        assert all(r["rocksdb"]["rows"][0]["blobfs"][s] for s in ("fillseq", "readseq", "readrandom"))
    # make bench-doc renders the same markdown from the JSON
    sys.path.insert(0, str(REPO / "scripts"))
    import bench_blobfs
    assert bench_blobfs.render(r).strip() == p.stdout.strip()
