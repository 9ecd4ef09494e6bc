# SPDX-License-Identifier: BSD-3-Clause
"""BlobFS tools as a user drives them: unvme mkfs, fsck and the fs commands (ls, tree, stat,
cat, get, put, cp, mv, rm, mkdir, df), their errors, and repairs."""
import os

import pytest


@pytest.fixture
def fsdev(unvme, tmp_path):
    """A fresh BlobFS on a file-backed namespace (the data outlives each command)."""
    unvme.env["UNVME_LOCK_DIR"] = str(tmp_path)
    dev = unvme.file_dev("bfs", size="64M")
    unvme.ok("mkfs", dev, "--label", "tools")
    return dev


def test_mkfs_reports_and_refuses_to_overwrite(unvme, tmp_path):
    unvme.env["UNVME_LOCK_DIR"] = str(tmp_path)
    dev = unvme.file_dev("m", size="2G")
    j = unvme.ok("mkfs", dev, "-c", "1m", "-L", "big", "-o", "json").json()
    assert j["cluster_size"] == 1 << 20 and j["label"] == "big"
    assert j["clusters"] * j["cluster_size"] > (1900 << 20)
    r = unvme.run("mkfs", dev)
    assert r.rc == 2 and "already holds a BlobFS (label 'big')" in r.err and "force" in r.err
    r = unvme.ok("mkfs", dev, "--force")
    assert "clusters of 4 KiB" in r.out  # the default cluster (up to 1 TiB)
    r = unvme.run("mkfs", dev, "--force", "-c", "3000")
    assert r.rc == 2 and "power of two" in r.err
    small = unvme.file_dev("s", size="4M")
    r = unvme.run("mkfs", small)
    assert r.rc == 2 and "at least 8 MiB" in r.err


def test_put_get_and_friends(unvme, fsdev, tmp_path):
    data = os.urandom(3 * 1024 * 1024 + 123)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    unvme.ok("fs", fsdev, "mkdir", "-p", "/a/b/c")
    unvme.ok("fs", fsdev, "put", src, "/a/b/")
    unvme.ok("fs", fsdev, "get", "/a/b/src.bin", tmp_path / "back.bin")
    assert (tmp_path / "back.bin").read_bytes() == data
    out = unvme.run("fs", fsdev, "cat", "/a/b/src.bin", binary=True)
    assert out.rc == 0 and out.out == data
    unvme.ok("fs", fsdev, "put", "-", "/stdin.txt", input="from stdin\n")
    assert unvme.ok("fs", fsdev, "cat", "/stdin.txt").out == "from stdin\n"
    unvme.ok("fs", fsdev, "cp", "/a/b/src.bin", "/copy.bin")
    unvme.ok("fs", fsdev, "mv", "/copy.bin", "/a/moved.bin")
    st = unvme.ok("fs", fsdev, "stat", "/a/moved.bin", "-o", "json").json()
    assert st["size"] == len(data) and st["type"] == "file"
    names = {e["name"]: e for e in unvme.ok("fs", fsdev, "ls", "/a", "-o", "json").json()}
    assert set(names) == {"b", "moved.bin"} and names["b"]["type"] == "directory"
    assert "moved.bin" in unvme.ok("fs", fsdev, "ls", "-l", "/a").out
    tree = [e["path"] for e in unvme.ok("fs", fsdev, "tree", "-o", "json").json()]
    assert "/a/b/c" in tree and "/a/b/src.bin" in tree and "/stdin.txt" in tree
    df = unvme.ok("fs", fsdev, "df", "-o", "json").json()
    assert df["label"] == "tools" and df["files"] == 7
    used = df["clusters"] - df["free_clusters"]
    assert used * df["cluster_size"] >= 2 * len(data)
    # rm needs -r for directories; afterwards the space is back
    r = unvme.run("fs", fsdev, "rm", "/a")
    assert r.rc == 2 and "use -r" in r.err
    unvme.ok("fs", fsdev, "rm", "-r", "/a")
    unvme.ok("fs", fsdev, "rm", "/stdin.txt")
    df2 = unvme.ok("fs", fsdev, "df", "-o", "json").json()
    assert df2["free_clusters"] == df2["clusters"] and df2["files"] == 1
    fsck = unvme.ok("fsck", fsdev, "-o", "json").json()
    assert fsck["errors"] == 0 and fsck["clean_unmount"]


def test_errors_name_what_is_wrong(unvme, fsdev, tmp_path):
    r = unvme.run("fs", fsdev, "cat", "/missing")
    assert r.rc == 3 and "'/missing' does not exist" in r.err
    r = unvme.run("fs", fsdev, "mkdir", "/" + "x" * 256)
    assert r.rc == 3 and "at most 255" in r.err
    unvme.ok("fs", fsdev, "mkdir", "/" + "x" * 255)
    r = unvme.run("fs", fsdev, "frobnicate")
    assert r.rc == 2 and "unknown fs command" in r.err
    r = unvme.run("fs", fsdev, "stat")
    assert r.rc == 2
    # no file system at all
    bare = unvme.file_dev("bare", size="16M")
    r = unvme.run("fs", bare, "ls")
    assert r.rc == 3 and "no BlobFS" in r.err and "unvme mkfs" in r.err
    r = unvme.run("fsck", bare)
    assert r.rc == 3 and "no BlobFS" in r.err
    # a full file system: the put fails and the file system stays consistent
    tiny = unvme.file_dev("tiny", size="12M")
    unvme.ok("mkfs", tiny)
    big = tmp_path / "big"
    big.write_bytes(os.urandom(16 << 20))
    r = unvme.run("fs", tiny, "put", big, "/big")
    assert r.rc == 3 and "no space left" in r.err
    assert unvme.ok("fsck", tiny, "-o", "json").json()["errors"] == 0


def test_damaged_superblock_is_repaired_by_fsck(unvme, fsdev, tmp_path):
    payload = tmp_path / "p"
    payload.write_bytes(os.urandom(100000))
    unvme.ok("fs", fsdev, "put", payload, "/p")
    # flip a byte of the superblock's geometry through the raw block interface
    unvme.ok("write", fsdev, "-s", 0, "--pattern", "0x00")
    r = unvme.run("fs", fsdev, "ls")
    assert r.rc == 3 and "no BlobFS" in r.err  # block 0 is gone: no magic
    r = unvme.run("fsck", fsdev)
    assert r.rc == 1 and "copy in block" in r.out and "errors remain" in r.out
    r = unvme.ok("fsck", fsdev, "--repair")
    assert "restored from its copy" in r.out and "all errors repaired" in r.out
    unvme.ok("fs", fsdev, "get", "/p", tmp_path / "p2")
    assert (tmp_path / "p2").read_bytes() == payload.read_bytes()


def test_memory_namespace_in_one_batch(unvme, tmp_path):
    unvme.env["UNVME_LOCK_DIR"] = str(tmp_path)
    src = tmp_path / "hello.txt"
    src.write_text("hello, BlobFS\n")
    script = f"mkfs\nfs put {src} /hello.txt\nfs cat /hello.txt\nfsck\n"
    r = unvme.batch("emu://mem?ns=mem:64M", script)
    assert r.rc == 0, r
    assert "hello, BlobFS" in r.out and "clean" in r.out
