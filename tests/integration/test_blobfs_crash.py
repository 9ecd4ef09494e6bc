# SPDX-License-Identifier: BSD-3-Clause
"""BlobFS under kill -9: a writer runs random metadata and data operations (create, append,
overwrite, truncate, rename over, unlink, mkdir, rmdir) with frequent background commits and
a blobfs_sync every ten operations; it is killed with SIGKILL at a random moment. Then fsck
must find no error, the mount must replay by itself, the namespace must be the one after
some operation between the last sync and the kill (atomic, ordered metadata), and every file
untouched since the last sync must hold exactly its synced content.

Rounds: $BLOBFS_CRASH_ROUNDS (default 6; `make crash` style long runs set more)."""
import os
import random
import signal
import subprocess
import time

from blobfs_fixtures import shm  # noqa: F401 (a fixture)
from conftest import TOOL, build_dir

WRITER = build_dir() / "tests" / "integration" / "blobfs_crash_writer"
ROUNDS = int(os.environ.get("BLOBFS_CRASH_ROUNDS", "6"))


def run_round(env, dev, seed, kill_after_ops):
    subprocess.run([str(TOOL), "mkfs", dev, "--force"], env=env, check=True, capture_output=True,
                   timeout=60)
    p = subprocess.Popen([str(WRITER), "run", dev, str(seed)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, bufsize=1)
    synced, started, lines = 0, 0, []
    deadline = time.monotonic() + 60
    try:
        for line in p.stdout:
            lines.append(line)
            if line.startswith("OP "):
                started = int(line.split()[1])
            elif line.startswith("SYNCED "):
                synced = int(line.split()[1])
            elif line.startswith("FAIL"):
                raise AssertionError(f"the writer failed before the kill: {line}")
            if started >= kill_after_ops:
                os.kill(p.pid, signal.SIGKILL)
                break
            assert time.monotonic() < deadline, "the writer is too slow"
    finally:
        if p.poll() is None:
            p.kill()
        # The writer ran on while we read: what it printed before dying counts too.
        for line in p.stdout:
            if line.startswith("OP "):
                started = int(line.split()[1])
            elif line.startswith("SYNCED "):
                synced = int(line.split()[1])
        p.wait(timeout=30)
    # fsck before anything mounts: the state exactly as the crash left it
    r = subprocess.run([str(TOOL), "fsck", dev, "-o", "json"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and '"errors": 0' in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(WRITER), "verify", dev, str(seed), str(synced), str(started)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"seed {seed}, killed after op {started} (synced {synced}):\n{r.stdout}{r.stderr}"
    # after the mount's replay the file system is clean again
    r = subprocess.run([str(TOOL), "fsck", dev, "-o", "json"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert '"clean_unmount": true' in r.stdout and '"errors": 0' in r.stdout, r.stdout
    return synced, started


def test_kill_minus_nine_at_random_moments(env, shm):
    rng = random.Random(int(os.environ.get("BLOBFS_CRASH_SEED", "1234")))
    dev = f"emu://crash?ns=file:128M:512:{shm}/crash.img"
    for _ in range(ROUNDS):
        seed = rng.randrange(1, 1 << 30)
        synced, started = run_round(env, dev, seed, rng.randrange(5, 400))
        assert started >= synced


def test_running_file_system_matches_the_model(env, shm):
    """The same operations without a crash, the cache dropped after each one so that every
    check reads the device: separates a bug of the running file system from one of recovery."""
    dev = f"emu://self?ns=file:128M:512:{shm}/self.img"
    subprocess.run([str(TOOL), "mkfs", dev], env=env, check=True, capture_output=True, timeout=60)
    r = subprocess.run([str(WRITER), "selfcheck", dev, "4242", "400"], env=dict(env, SELFCHECK_DROP="1"),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
