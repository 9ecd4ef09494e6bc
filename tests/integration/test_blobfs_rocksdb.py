# SPDX-License-Identifier: BSD-3-Clause
"""RocksDB on BlobFS with Debian's unmodified db_bench and ldb (LD_PRELOAD of the plugin,
--fs_uri): the original run_test.sh sequence, ldb reading what db_bench wrote, options in the
URI, clean errors for bad options and devices, the unregistered-id pitfall, and a kill -9
during a synced fill, and during an unsynced one (kill_safe: the WAL's appends are kept
outside the process), after which every acknowledged key is there."""
import re
import shutil
import signal
import subprocess
import time

import pytest

from blobfs_fixtures import shm  # noqa: F401 (a fixture)
from conftest import REPO, build_dir

PLUGIN = build_dir() / "plugins" / "rocksdb" / "libblobfs_rocksdb.so"

pytestmark = pytest.mark.skipif(
    not PLUGIN.exists() or shutil.which("db_bench") is None or shutil.which("ldb") is None,
    reason="needs the RocksDB plugin and rocksdb-tools (scripts/deps.d/blobfs.txt)")


def uri(dev, **opts):
    return ";".join([f"id=blobfs", f"device={dev}"] + [f"{k}={v}" for k, v in opts.items()])


def rocks(tool, env, fs_uri, *args, timeout=300, check=True):
    e = dict(env, LD_PRELOAD=str(PLUGIN))
    r = subprocess.run([tool, f"--fs_uri={fs_uri}", *args], env=e, capture_output=True, text=True,
                       timeout=timeout)
    if check:
        assert r.returncode == 0, f"{tool} {args}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def ops(out, name):
    m = re.search(rf"^{name}\s*:\s*[\d.]+ micros/op (\d+) ops/sec", out, re.M)
    assert m, f"no {name} line in:\n{out}"
    return int(m.group(1))


def test_run_test_sequence_and_ldb(env, shm):
    dev = f"emu://rt?ns=file:1G:512:{shm}/rt.img"
    r = subprocess.run([str(REPO / "scripts" / "blobfs" / "run_test.sh"), dev],
                       env=dict(env, NUM="20000", BUILD=str(build_dir())),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    for step in ("fillseq", "readseq", "readrandom", "overwrite", "readwhilewriting", "fillsync"):
        assert ops(r.stdout, step) > 0
    assert "(20000 of 20000 found)" in r.stdout
    assert "clean" in r.stderr  # fsck after the run
    # ldb reads what db_bench left: fillsync (fresh database, num/1000 keys) came last
    out = rocks("ldb", env, uri(dev), "--db=/rocksdb", "scan", "--key_hex").stdout
    assert len(out.splitlines()) == 20


def test_memory_namespace_in_one_process_with_options(env, shm):
    # retain off, direct reads, a small cache, a low prefetch threshold: all accepted
    u = uri("emu://m?ns=mem:2G", format="always", retain_cache="false", direct_read="true",
            prefetch_threshold=65536, cache_size=64 << 20, direct_write="false")
    r = rocks("db_bench", env, u, "--benchmarks=fillseq,readseq,readrandom", "--num=20000",
              "--cache_size=0", "--write_buffer_size=1048576", "--db=/db")
    assert ops(r.stdout, "readrandom") > 0 and "(20000 of 20000 found)" in r.stdout


def test_bad_settings_fail_cleanly(env, shm):
    dev = f"emu://b?ns=file:256M:512:{shm}/b.img"
    # an option BlobFS does not have
    r = rocks("db_bench", env, uri(dev, retain_cash="true"), "--benchmarks=fillseq", "--num=10",
              check=False)
    assert r.returncode != 0 and r.returncode > 0 and "retain_cash" in (r.stdout + r.stderr)
    # a namespace without a file system (and no format=)
    r = rocks("db_bench", env, uri(dev), "--benchmarks=fillseq", "--num=10", check=False)
    assert r.returncode > 0 and "no BlobFS" in (r.stdout + r.stderr)
    # a bad format value and a device that does not exist
    r = rocks("db_bench", env, uri(dev, format="sometimes"), "--benchmarks=fillseq", "--num=10",
              check=False)
    assert r.returncode > 0 and "format must be" in (r.stdout + r.stderr)
    r = rocks("db_bench", env, uri("no-such-device"), "--benchmarks=fillseq", "--num=10", check=False)
    assert r.returncode > 0 and "no-such-device" in (r.stdout + r.stderr)


def test_unregistered_id_pitfall(env, shm):
    """RocksDB 7.8 turns an --fs_uri whose id nobody registered into a null FileSystem and
    db_bench crashes (SIGSEGV) instead of failing. It happens with a misspelled id, or when
    LD_PRELOAD does not name the plugin; run_test.sh checks for the plugin first."""
    dev = f"emu://p?ns=mem:256M"
    r = rocks("db_bench", env, f"id=blobfz;device={dev}", "--benchmarks=fillseq", "--num=10",
              check=False)
    assert r.returncode != 0
    e = dict(env, LD_PRELOAD="")
    r2 = subprocess.run(["db_bench", f"--fs_uri={uri(dev)}", "--benchmarks=fillseq", "--num=10"],
                        env=e, capture_output=True, text=True, timeout=60)
    assert r2.returncode != 0
    # the script refuses up front, with a message, when the plugin is missing
    r3 = subprocess.run([str(REPO / "scripts" / "blobfs" / "run_test.sh"), dev],
                        env=dict(env, BUILD=str(shm)), capture_output=True, text=True, timeout=60)
    assert r3.returncode == 2 and "is not built" in r3.stderr


def killed_fill(env, shm, name, sync, opts):
    """db_bench fillseq (keys 0, 1, 2, ...) killed once it reported 3000 acknowledged writes;
    returns (acknowledged at least, keys recovered: a prefix)."""
    dev = f"emu://{name}?ns=file:1G:512:{shm}/{name}.img"
    u = uri(dev, format="if_empty", **opts)
    e = dict(env, LD_PRELOAD=str(PLUGIN))
    log = shm / f"{name}.out"
    with open(log, "w") as out:
        p = subprocess.Popen(["db_bench", f"--fs_uri={u}", "--benchmarks=fillseq", f"--sync={sync}",
                              "--num=100000000", "--stats_interval=200", f"--db=/{name}",
                              "--value_size=100", "--key_size=16"],
                             env=e, stdout=out, stderr=subprocess.STDOUT)
    acked = 0
    start = time.time()
    buf = ""
    while time.time() - start < 60 and acked < 3000:
        buf = log.read_text(errors="replace")
        # progress lines "thread 0: (200,N) ops": N writes were acknowledged
        for m in re.finditer(r"\(\d+,(\d+)\) ops", buf):
            acked = max(acked, int(m.group(1)))
        if p.poll() is not None:
            break
        time.sleep(0.05)
    assert p.poll() is None, f"db_bench ended early:\n{buf}"
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    assert acked >= 200, f"too little progress before the kill:\n{buf[-2000:]}"
    # The database reopens with ldb (which replays BlobFS's journal and shadow and RocksDB's WAL).
    out = rocks("ldb", env, uri(dev, **opts), f"--db=/{name}", "scan", "--key_hex", timeout=300).stdout
    keys = [int(line.split(" : ")[0][2:18], 16) for line in out.splitlines() if line.startswith("0x")]
    assert keys == list(range(len(keys))), "the recovered keys are not a prefix"
    # and BlobFS itself is consistent
    r = subprocess.run([str(build_dir() / "tools" / "unvme" / "unvme"), "fsck", dev, "-o", "json"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and '"errors": 0' in r.stdout, r.stdout + r.stderr
    return acked, len(keys)


def test_kill_during_synced_fill_keeps_every_acknowledged_key(env, shm):
    acked, got = killed_fill(env, shm, "sync", 1, {"kill_safe": "false"})
    assert got >= acked, f"{got} keys recovered, {acked} were acknowledged"


def test_kill_during_unsynced_fill_keeps_every_acknowledged_key(env, shm):
    """RocksDB acknowledges an unsynced write once it is in the WAL file; on ext4 a kill
    loses none of those (they are in the kernel). With kill_safe (the default) neither does
    BlobFS: the WAL's appends are in the shadow on tmpfs, replayed by the next mount."""
    acked, got = killed_fill(env, shm, "nosync", 0, {"shadow_dir": str(shm)})
    assert got >= acked, f"{got} keys recovered, {acked} were acknowledged"
