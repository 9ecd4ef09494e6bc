# SPDX-License-Identifier: BSD-3-Clause
"""The crash harness's BlobFS workloads as users drive them (tests/crash/crash_blobfs_user.py:
FUSE programs and RocksDB), in short: one round of each, killed at random or at a crash
point, sometimes with a power cut (`make crash` runs a thousand). And the proof that the
checker can fail: an acknowledged file removed behind its back, and a file's acknowledged
bytes changed, are both reported."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import REPO, build_dir

CRASH = REPO / "tests" / "crash"
sys.path.insert(0, str(CRASH))
import crash  # noqa: E402

BUILD = build_dir()
USER = CRASH / "crash_blobfs_user.py"
UNVME = BUILD / "tools" / "unvme" / "unvme"

pytestmark = pytest.mark.skipif(
    not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None or
    shutil.which("db_bench") is None or shutil.which("sqlite3") is None,
    reason="needs /dev/fuse, fusermount3, rocksdb-tools and sqlite3 (scripts/deps.d/blobfs.txt)")


@pytest.mark.parametrize("component", ["bfs-bulk", "bfs-tar", "bfs-rmrf", "bfs-rename",
                                       "bfs-large", "bfs-sqlite", "bfs-rocksdb"])
def test_one_round_of_each_workload(component, tmp_path, monkeypatch):
    monkeypatch.setenv("UNVME_CRASH_BLOBFS_SHORT", "1")  # a smaller tree, smaller files
    rc = crash.main(["--build", str(BUILD), "--component", component, "--rounds", "1", "--seed", "28",
                     "--seconds", "120", "--json", str(tmp_path / "crash.json"),
                     "--keep", str(tmp_path / "failed")])
    assert rc == 0, (tmp_path / "crash.json").read_text()


def test_checker_reports_what_a_crash_must_not_do(tmp_path):
    """A rename round's writer killed after its first acknowledgement; then the checker on
    the real result (clean), on it with an acknowledged file removed, and with one's bytes
    changed."""
    env = dict(os.environ, UNVME_QUIET="1", UNVME_LOCK_DIR=str(tmp_path))
    img = tmp_path / "fs.img"
    dev = f"emu://plantbfs?ns=file:256M:512:{img}"
    subprocess.run([UNVME, "mkfs", dev], env=env, check=True, capture_output=True)
    log, mnt = tmp_path / "r.log", tmp_path / "mnt"
    common = ["--workload", "rename", "--unvme", str(UNVME), "--dev", dev, "--mnt", str(mnt),
              "--log", str(log), "--seed", "42"]
    w = subprocess.Popen([sys.executable, str(USER), "write", *common], env=env,
                         start_new_session=True)
    end = time.monotonic() + 120
    while time.monotonic() < end and "ACK\n" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.05)
    os.killpg(w.pid, 9)
    w.wait()
    crash.wait_group_gone(w.pid)
    assert "ACK\n" in log.read_text()

    def check():
        r = subprocess.run([sys.executable, str(USER), "check", "--component", "bfs-rename",
                            "--tree", str(BUILD / "tests" / "integration" / "blobfs_tree"),
                            "--state", str(tmp_path / "st"), *common], env=env,
                           capture_output=True, text=True, timeout=300)
        return r.returncode, json.loads(r.stdout.splitlines()[-1])

    rc, v = check()
    assert rc == 0 and v["violations"] == 0 and v["durable"] >= 20, v
    acked = "r/f7"  # made before the first ACK; renames over it leave a version, never none
    subprocess.run([UNVME, "fs", dev, "rm", "/" + acked], env=env, check=True, capture_output=True)
    rc, v = check()
    assert rc == 1 and v["lost"] >= 1 and acked in v["first"], v
    other = "r/f3"
    (tmp_path / "x").write_bytes(b"not what was written")
    subprocess.run([UNVME, "fs", dev, "put", str(tmp_path / "x"), "/" + other], env=env,
                   check=True, capture_output=True)
    rc, v = check()
    assert rc == 1 and other in v["first"], v
