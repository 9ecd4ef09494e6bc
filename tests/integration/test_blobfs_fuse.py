# SPDX-License-Identifier: BSD-3-Clause
"""`unvme fuse`: a BlobFS mounted through FUSE, used by real programs (tar and diff, sqlite3,
git, fio with verify, concurrent writers, rename over files, a full file system), persistent
across unmount and remount, and unmounted cleanly by fusermount3 -u, SIGINT and SIGTERM."""
import hashlib
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, TOOL

pytestmark = pytest.mark.skipif(
    not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None,
    reason="needs /dev/fuse and fusermount3 (scripts/deps.d/blobfs.txt)")


def wait_for(cond, what, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Mount:
    def __init__(self, unvme, dev, mnt):
        self.unvme, self.dev, self.mnt = unvme, dev, Path(mnt)

    def up(self, *opts):
        self.mnt.mkdir(exist_ok=True)
        self.unvme.ok("fuse", self.dev, self.mnt, *opts, timeout=60)
        assert os.path.ismount(self.mnt)
        return self.mnt

    def down(self):
        """fusermount3 -u, then wait until the server has unmounted BlobFS (its lock is free)."""
        if os.path.ismount(self.mnt):
            subprocess.run(["fusermount3", "-u", str(self.mnt)], check=True, timeout=30)
        wait_for(lambda: self.unvme.run("fs", self.dev, "df").rc == 0, "the server to exit")


@pytest.fixture
def fuse(unvme, tmp_path):
    unvme.env["UNVME_LOCK_DIR"] = str(tmp_path)
    dev = unvme.file_dev("fuse", size="256M")
    unvme.ok("mkfs", dev)
    m = Mount(unvme, dev, tmp_path / "mnt")
    m.up()
    yield m
    if os.path.ismount(m.mnt):
        subprocess.run(["fusermount3", "-u", str(m.mnt)], timeout=30)
        wait_for(lambda: unvme.run("fs", dev, "df").rc == 0, "the server to exit")


def sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_tarball_extracts_identically_and_survives_remount(fuse, tmp_path):
    tarball = tmp_path / "src.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(tarball), "HEAD"],
                   check=True, timeout=60)
    ref = tmp_path / "ref"
    ref.mkdir()
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(ref)], check=True, timeout=60)
    dst = fuse.mnt / "src"
    dst.mkdir()
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(dst)], check=True, timeout=120)
    subprocess.run(["diff", "-r", str(ref), str(dst)], check=True, timeout=120)
    fuse.down()
    fsck = fuse.unvme.ok("fsck", fuse.dev, "-o", "json").json()
    assert fsck["errors"] == 0 and fsck["clean_unmount"]
    fuse.up()
    subprocess.run(["diff", "-r", str(ref), str(dst)], check=True, timeout=120)


def test_sqlite_database_passes_integrity_check(fuse):
    db = fuse.mnt / "test.db"
    script = ("PRAGMA journal_mode=WAL;\n"
              "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);\n"
              "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<20000)\n"
              "INSERT INTO t(v) SELECT hex(randomblob(40)) FROM c;\n"
              "CREATE INDEX tv ON t(v);\n"
              "DELETE FROM t WHERE id % 7 = 0;\n"
              "PRAGMA integrity_check;\n"
              "SELECT count(*) FROM t;\n")
    r = subprocess.run(["sqlite3", str(db)], input=script, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "ok" in r.stdout.split() and "17143" in r.stdout
    fuse.down()
    fuse.up()
    r = subprocess.run(["sqlite3", str(db), "PRAGMA integrity_check; SELECT count(*) FROM t;"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.split() == ["ok", "17143"], r


def test_git_init_add_commit_log(fuse):
    repo = fuse.mnt / "repo"
    repo.mkdir()
    for sub in ("lib/blobfs", "include/unvme"):
        shutil.copytree(REPO / sub, repo / sub)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com", HOME=str(fuse.mnt))

    def git(*args):
        r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                           env=env, timeout=120)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r.stdout

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "first")
    (repo / "lib/blobfs/bfs.h").write_text("changed\n")
    git("commit", "-q", "-am", "second")
    assert git("log", "--format=%s").split() == ["second", "first"]
    git("fsck", "--strict")
    fuse.down()
    fuse.up()
    assert git("log", "--format=%s").split() == ["second", "first"]
    assert git("status", "--porcelain") == ""


def test_fio_verify(fuse):
    r = subprocess.run(["fio", "--name=v", f"--directory={fuse.mnt}", "--rw=randwrite", "--bs=4k",
                        "--size=16m", "--numjobs=2", "--ioengine=psync", "--verify=crc32c",
                        "--verify_fatal=1", "--do_verify=1", "--fsync=64",
                        "--verify_state_save=0"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verify" not in r.stderr.lower()


def test_concurrent_writers_and_rename_over(fuse):
    errors = []

    def writer(i):
        try:
            for k in range(20):
                data = os.urandom(50_000 + i * 1000 + k)
                tmp = fuse.mnt / f"w{i}.tmp"
                tmp.write_bytes(data)
                os.replace(tmp, fuse.mnt / f"w{i}")  # rename over the previous version
                if (fuse.mnt / f"w{i}").read_bytes() != data:
                    errors.append(f"writer {i} round {k}")
        except OSError as e:
            errors.append(f"writer {i}: {e}")

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    names = sorted(p.name for p in fuse.mnt.iterdir())
    assert names == [f"w{i}" for i in range(6)]
    sums = {n: sha(fuse.mnt / n) for n in names}
    fuse.down()
    fuse.up()
    assert {n: sha(fuse.mnt / n) for n in names} == sums


def test_full_file_system_says_enospc(unvme, tmp_path):
    unvme.env["UNVME_LOCK_DIR"] = str(tmp_path)
    dev = unvme.file_dev("small", size="16M")
    unvme.ok("mkfs", dev)
    m = Mount(unvme, dev, tmp_path / "small")
    m.up()
    try:
        chunk = os.urandom(1 << 20)
        free_before = os.statvfs(m.mnt).f_bfree
        with pytest.raises(OSError) as e:
            with open(m.mnt / "fill", "wb") as f:
                for _ in range(64):
                    f.write(chunk)
                    f.flush()
                os.fsync(f.fileno())
        assert e.value.errno == 28  # ENOSPC
        (m.mnt / "fill").unlink()
        # The kernel sends FUSE's RELEASE of the closed file after close() has returned, and
        # an unlinked file keeps its clusters while a handle is open (POSIX): the space comes
        # back when that release arrives, which a loaded machine may deliver after the unlink.
        wait_for(lambda: os.statvfs(m.mnt).f_bfree >= free_before, "the unlinked file's space")
        (m.mnt / "after").write_bytes(chunk)
        assert (m.mnt / "after").read_bytes() == chunk
    finally:
        m.down()
    assert unvme.ok("fsck", dev, "-o", "json").json()["errors"] == 0


def threads_taking(pid, sig):
    """The threads of pid that do not block sig: a signal sent to the process goes to one of
    them. The library's own threads (device engines, watchers, completion threads) must not
    be among them, or the handler runs there and the FUSE loop's thread never wakes."""
    out = []
    for t in sorted(Path(f"/proc/{pid}/task").iterdir(), key=lambda t: int(t.name)):
        status = (t / "status").read_text()
        blocked = int(status.split("SigBlk:")[1].split()[0], 16)
        if not blocked & (1 << (int(sig) - 1)):
            out.append(int(t.name))
    return out


def threads_state(pid):
    """Each thread's name, wait channel and kernel stack: where a process that should have
    ended waits."""
    out = []
    for t in sorted(Path(f"/proc/{pid}/task").iterdir(), key=lambda t: int(t.name)):
        def read(name):
            try:
                return (t / name).read_text().strip()
            except OSError as e:
                return f"({e.strerror})"
        out.append(f"{t.name} {read('comm')} wchan={read('wchan')}\n{read('stack')}")
    return "\n".join(out)


def test_signals_unmount_cleanly_and_second_mount_is_refused(unvme, tmp_path):
    unvme.env["UNVME_LOCK_DIR"] = str(tmp_path)
    dev = unvme.file_dev("sig", size="64M")
    unvme.ok("mkfs", dev)
    mnt = tmp_path / "sig"
    mnt.mkdir()
    for sig in (signal.SIGTERM, signal.SIGINT):
        # As from a terminal: a shell's background job (make test started with '&') ignores
        # SIGINT, its children inherit that, and libfuse then leaves SIGINT ignored as asked.
        p = subprocess.Popen([str(TOOL), "fuse", dev, str(mnt), "-f"], env=unvme.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            wait_for(lambda: os.path.ismount(mnt), "the mount")
            (mnt / f"file{sig}").write_text("x" * 10000)
            # A second user is turned away: the emulated device keeps its backing file to
            # one process (a real device: the BlobFS namespace lock, which names the pid).
            r = unvme.run("fs", dev, "ls")
            assert r.rc == 3 and ("in use by another process" in r.err or
                                  f"mounted already by process {p.pid}" in r.err), r
            r = unvme.run("fuse", dev, tmp_path)
            assert r.rc == 3 and ("in use" in r.err or "mounted already" in r.err), r
            assert threads_taking(p.pid, sig) == [p.pid]  # the session's loop wakes for it
            p.send_signal(sig)
            try:
                rc = p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                raise AssertionError(f"unvme fuse still runs 30 s after {sig!r}:\n"
                                     + threads_state(p.pid)) from None
            assert rc == 0, p.stderr.read()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
                # a killed server leaves its mount dead: gone, or it outlives the test run
                subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)
        assert not os.path.ismount(mnt)
        fsck = unvme.ok("fsck", dev, "-o", "json").json()
        assert fsck["clean_unmount"] and fsck["errors"] == 0
        assert unvme.ok("fs", dev, "cat", f"/file{sig}").out == "x" * 10000
