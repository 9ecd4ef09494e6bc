# SPDX-License-Identifier: BSD-3-Clause
"""`unvme fuse` held to what ext4 does where programs notice: descriptors of unlinked and
renamed-over files (fstat, `cat <&9`, read, write, truncate, fsync), a removed directory
held open, FIFOs, device nodes and sockets, fallocate's modes (and the errors of the ones
it lacks), O_TMPFILE, link(2) refused as on a file system without hard links, small files
taking 4 KiB, `df` exact right after `rm -rf` and `df -i` totals that do not move."""
import ctypes
import errno
import os
import socket
import stat
import subprocess
import tempfile

import pytest

from test_blobfs_fuse import Mount, fuse, wait_for  # noqa: F401  (the fixture)

libc = ctypes.CDLL(None, use_errno=True)
FALLOC_KEEP, FALLOC_PUNCH, FALLOC_COLLAPSE, FALLOC_ZERO = 1, 2, 8, 0x10


def fallocate(fd, mode, off, length):
    if libc.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(length)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def test_descriptors_of_unlinked_and_renamed_over_files(fuse):
    m = fuse.mnt
    (m / "a").write_bytes(b"hello\n")
    fd = os.open(m / "a", os.O_RDWR)
    os.unlink(m / "a")
    st = os.fstat(fd)
    assert (st.st_nlink, st.st_size) == (0, 6)
    r = subprocess.run(["bash", "-c", f"cat <&{fd}"], pass_fds=(fd,), capture_output=True, timeout=30)
    assert r.returncode == 0 and r.stdout == b"hello\n", r
    assert os.pwrite(fd, b"HELLO", 0) == 5
    os.fsync(fd)
    os.ftruncate(fd, 3)
    assert os.fstat(fd).st_size == 3 and os.pread(fd, 10, 0) == b"HEL"
    os.close(fd)

    (m / "b").write_bytes(b"old version")
    (m / "c").write_bytes(b"new")
    fd = os.open(m / "b", os.O_RDONLY)
    os.replace(m / "c", m / "b")
    st = os.fstat(fd)
    assert (st.st_nlink, st.st_size) == (0, 11)
    assert os.pread(fd, 100, 0) == b"old version"
    assert (m / "b").read_bytes() == b"new"
    os.close(fd)

    (m / "d").mkdir()
    dfd = os.open(m / "d", os.O_RDONLY | os.O_DIRECTORY)
    os.rmdir(m / "d")
    assert os.fstat(dfd).st_nlink == 0
    with pytest.raises(FileNotFoundError):
        os.open("x", os.O_CREAT | os.O_WRONLY, dir_fd=dfd)
    os.close(dfd)
    assert sorted(p.name for p in m.iterdir()) == ["b"]


def test_fifo_devices_and_sockets(fuse):
    m = fuse.mnt
    os.mkfifo(m / "fifo", 0o640)
    reader = subprocess.Popen(["cat", str(m / "fifo")], stdout=subprocess.PIPE)
    with open(m / "fifo", "wb") as w:
        w.write(b"through the fifo\n")
    assert reader.communicate(timeout=30)[0] == b"through the fifo\n"
    os.mknod(m / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.mknod(m / "loop", stat.S_IFBLK | 0o600, os.makedev(7, 0))
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(m / "sock"))
    srv.listen(1)
    cli = socket.socket(socket.AF_UNIX)
    cli.connect(str(m / "sock"))
    conn, _ = srv.accept()
    cli.sendall(b"ping")
    assert conn.recv(4) == b"ping"
    for s in (conn, cli, srv):
        s.close()
    mask = os.umask(0)
    os.umask(mask)
    expect = {"fifo": (stat.S_IFIFO, 0o640 & ~mask, 0),
              "null": (stat.S_IFCHR, 0o666 & ~mask, os.makedev(1, 3)),
              "loop": (stat.S_IFBLK, 0o600 & ~mask, os.makedev(7, 0))}

    def check():
        for name, (kind, mode, rdev) in expect.items():
            st = os.lstat(m / name)
            assert (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_rdev) == \
                (kind, mode, rdev), name
        assert stat.S_ISSOCK(os.lstat(m / "sock").st_mode)

    check()
    fuse.down()
    fsck = fuse.unvme.ok("fsck", fuse.dev, "-o", "json").json()
    assert fsck["errors"] == 0
    fuse.up()
    check()


def test_fallocate_modes_and_refusals(fuse):
    m = fuse.mnt
    p = m / "f"
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fallocate(fd, 0, 0, 1 << 20)
        st = os.fstat(fd)
        assert st.st_size == 1 << 20 and st.st_blocks == 2048
        assert os.pread(fd, 1 << 20, 0) == bytes(1 << 20)
        fallocate(fd, FALLOC_KEEP, 1 << 20, 1 << 20)
        assert os.fstat(fd).st_size == 1 << 20
        data = os.urandom(1 << 20)
        os.pwrite(fd, data, 0)
        os.fsync(fd)
        fallocate(fd, FALLOC_KEEP | FALLOC_PUNCH, 4096, 65536)
        fallocate(fd, FALLOC_ZERO, 100000, 5000)
        expect = bytearray(data)
        expect[4096:4096 + 65536] = bytes(65536)
        expect[100000:105000] = bytes(5000)
        assert os.pread(fd, 1 << 20, 0) == bytes(expect)
        with pytest.raises(OSError) as e:
            fallocate(fd, FALLOC_COLLAPSE, 0, 4096)
        assert e.value.errno == errno.EOPNOTSUPP
        with pytest.raises(OSError) as e:
            fallocate(fd, FALLOC_PUNCH, 0, 4096)  # punch-hole without keep-size
        assert e.value.errno == errno.EOPNOTSUPP
        os.fsync(fd)
    finally:
        os.close(fd)
    r = subprocess.run(["fallocate", "-p", "-o", "8192", "-l", "4096", str(p)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    expect[8192:12288] = bytes(4096)
    fuse.down()
    fuse.up()
    assert p.read_bytes() == bytes(expect)


def test_tmpfile_and_link(fuse):
    m = fuse.mnt
    # libfuse 3.14 has no tmpfile operation: the kernel says what any file system without
    # O_TMPFILE says, and programs (tempfile, glibc's tmpfile) take their named fallback
    with pytest.raises(OSError) as e:
        os.open(m, os.O_TMPFILE | os.O_RDWR, 0o600)
    assert e.value.errno == errno.EOPNOTSUPP
    with tempfile.TemporaryFile(dir=m) as t:
        t.write(b"x" * 10000)
        t.seek(0)
        assert t.read() == b"x" * 10000
    (m / "orig").write_bytes(b"1")
    with pytest.raises(PermissionError):  # EPERM: no hard links
        os.link(m / "orig", m / "hard")
    assert sorted(p.name for p in m.iterdir()) == ["orig"]


def test_df_exact_after_rm_and_small_files(fuse):
    m = fuse.mnt
    base = os.statvfs(m)
    (m / "small").mkdir()
    for i in range(1000):
        (m / "small" / f"f{i}").write_bytes(b"y" * 100)
    (m / "big").mkdir()
    for i in range(50):
        (m / "big" / f"g{i}").write_bytes(os.urandom(40960))
    sv = os.statvfs(m)
    used = (base.f_bfree - sv.f_bfree) * sv.f_frsize
    assert used == 1000 * 4096 + 50 * 40960, used   # a 100-byte file takes one 4 KiB block
    assert sv.f_files == base.f_files                 # df -i totals stay
    assert sv.f_files - sv.f_ffree == base.f_files - base.f_ffree + 1052
    subprocess.run(["rm", "-rf", str(m / "small"), str(m / "big")], check=True, timeout=60)
    after = os.statvfs(m)
    assert (after.f_bfree, after.f_files, after.f_ffree) == (base.f_bfree, base.f_files, base.f_ffree)
