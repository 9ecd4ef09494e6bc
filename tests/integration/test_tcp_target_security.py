# SPDX-License-Identifier: BSD-3-Clause
"""The NVMe/TCP target as an attacker meets it (issue 27): a hostile host written for the tests
(tcp_target_client.py) against `unvme target` exporting two subsystems to two hosts, each host
allowed on its own subsystem only, the second subsystem's namespace full of canary data that
must never appear in a reply to the other host.

Lengths: a read with an SGL longer than its blocks, a write with less in-capsule data than its
blocks, a block count past two pages whose data would have been walked as a PRP list (planted
entries included), admin commands whose SGL disagrees with NUMD / the Identify size, unknown
opcodes with data: each is refused with the status Linux's target gives (Data SGL Length
Invalid, Invalid Opcode), no data moves, and the canary never shows.
Limits: queued 2 MiB reads never read hold at most the configured memory (back-pressure, and
every read completes once the host reads again); a socket that sends no ICReq or never
connects is closed at its deadline; connections beyond the total and per-host limits and
beyond the descriptors are refused while the connections already served go on.
Defaults: no allow-list, no service; discovery shows a key-protected subsystem only to a host
that proved the key; an unknown and a forbidden subsystem answer alike.
"""
import json
import os
import select
import struct
import subprocess
import time

import pytest

from conftest import TOOL
from nvmetcp import DISCOVERY_NQN, ICRESP, SGL_INCAPSULE, Target, dhchap_key, sqe
from tcp_target_client import (ATR, AUTH_REQUIRED, CONNECT_INVALID_HOST, DATA_SGL_LEN_INVALID,
                               INVALID_OPCODE, Host, eventually, rw, served, vm_rss_kib)

NQN_A = "nqn.2024-01.io.unvme.sec:a"
NQN_B = "nqn.2024-01.io.unvme.sec:b"
HOST_A = "nqn.2014-08.io.unvme.sec:host-a"
HOST_B = "nqn.2014-08.io.unvme.sec:host-b"
CANARY = b"\xc4NARY-B-" + os.urandom(8)  # 16 bytes, repeated over B's namespace


def no_canary(*hosts):
    for h in hosts:
        assert CANARY[:8] not in h.seen and CANARY[8:] not in h.seen, \
            "another host's data reached this connection"


@pytest.fixture(scope="module")
def key_b():
    return dhchap_key(1)


@pytest.fixture(scope="module")
def two(tmp_path_factory, key_b):
    """The target: A (4 KiB blocks) for HOST_A, B (512-byte blocks, canary) for HOST_B with a
    DH-HMAC-CHAP key; B's canary is written and then read through the target, so that the
    target's buffers held it before any attack."""
    tmp = tmp_path_factory.mktemp("sec")
    env = dict(os.environ, UNVME_QUIET="1", HOME=str(tmp))
    env.pop("UNVME_DEVICES", None)
    cfg = {"threads": 1, "subsystems": [
        {"nqn": NQN_A, "hosts": [HOST_A], "namespaces": ["emu://seca?ns=mem:16M:4096"]},
        {"nqn": NQN_B, "hosts": [{"nqn": HOST_B, "dhchap_secret": key_b}],
         "namespaces": ["emu://secb?ns=mem:8M:512"]}]}
    (tmp / "t.json").write_text(json.dumps(cfg))
    t = Target(env, tmp, ["-c", tmp / "t.json"])
    blob = CANARY * (1 << 16)  # 1 MiB
    (tmp / "canary").write_bytes(blob)
    devb = t.devid(NQN_B, f"hostnqn={HOST_B}&dhchap_secret={key_b}")
    # written, then read back in several sizes: buffers of every size class held canary data
    runs = [["write", devb, "-s", "0", "-c", "2047", "-d", tmp / "canary"]]
    runs += [["read", devb, "-s", "0", "-c", str(n - 1), "-d", tmp / "back"] for n in (2048, 128, 16, 8, 1)]
    for args in runs:
        p = subprocess.run([str(TOOL), *map(str, args)], env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    assert (tmp / "back").read_bytes() == blob[:512]
    yield t
    assert t.stop() == 0, t.log_text()


def host_a(t):
    """HOST_A's admin queue on A and one I/O queue."""
    adm = Host(t.port)
    st, _ = adm.admin(t.port, NQN_A, HOST_A)
    assert st == 0
    return adm, Host.io_queue(t.port, NQN_A, HOST_A, adm.cntlid)


def test_lengths_are_the_commands(two):
    adm, io = host_a(two)
    # a Read of one 4 KiB block with a 64 KiB transport SGL: refused, no data at all
    st, _, data = io.command(rw(0x02, 1, 1, 0, 1, 65536))
    assert st == DATA_SGL_LEN_INVALID and data == b""
    # a Write of 8 blocks carrying 512 bytes in the capsule (SGL of 512, or SGL of 32 KiB)
    st, _, _ = io.command(rw(0x01, 2, 1, 0, 8, 512, SGL_INCAPSULE), b"\x11" * 512)
    assert st == DATA_SGL_LEN_INVALID
    st, _, _ = io.command(rw(0x01, 3, 1, 0, 2, 8192, SGL_INCAPSULE), b"\x11" * 512)
    assert st == DATA_SGL_LEN_INVALID
    # a block count past two pages with the data of two pages: the device would have taken
    # the second page of it as a PRP list. Planted entries point into the target's memory.
    planted = b"".join(struct.pack("<Q", 0x100000 + i * 4096) for i in range(1024))
    st, _, _ = io.command(rw(0x01, 4, 1, 0, 16, 8192), write=planted)
    assert st == DATA_SGL_LEN_INVALID
    st, _, data = io.command(rw(0x02, 5, 1, 0, 16, 8192))
    assert st == DATA_SGL_LEN_INVALID and data == b""
    # ... while the same transfers with a block count that matches work, data intact
    st, _, _ = io.command(rw(0x01, 6, 1, 0, 2, 8192), write=planted[:8192])
    assert st == 0
    st, _, data = io.command(rw(0x02, 7, 1, 0, 2, 8192))
    assert st == 0 and data == planted[:8192]
    big = os.urandom(256 * 1024)
    assert io.command(rw(0x01, 8, 1, 64, 64, len(big)), write=big)[0] == 0
    st, _, data = io.command(rw(0x02, 9, 1, 64, 64, len(big)))
    assert st == 0 and data == big
    # admin commands: NUMD and the Identify size are what count
    st, _, data = adm.command(sqe(0x02, 10, cdw10=(15 << 16) | 2, sgl_len=4096))  # 64 bytes asked
    assert st == DATA_SGL_LEN_INVALID and data == b""
    st, _, data = adm.command(sqe(0x06, 11, cdw10=1, sgl_len=8192))
    assert st == DATA_SGL_LEN_INVALID and data == b""
    st, _, data = adm.command(sqe(0x06, 12, cdw10=1, sgl_len=4096))
    assert st == 0 and len(data) == 4096
    # opcodes the target does not know never reach a device, data or not
    assert adm.command(sqe(0x80, 13, sgl_len=4096))[0] == INVALID_OPCODE
    assert io.command(sqe(0x85, 14, nsid=1, sgl_len=4096, sgl_type=SGL_INCAPSULE), b"\x22" * 4096)[0] \
        == INVALID_OPCODE
    assert io.command(sqe(0x19, 15, nsid=1, cdw12=0, sgl_len=32))[0] == INVALID_OPCODE  # Copy
    # a metadata pointer from the host is ignored (the target clears MPTR): the write works
    cmd = bytearray(rw(0x01, 16, 1, 200, 1, 4096))
    cmd[16:24] = struct.pack("<Q", 0xdeadbeef000)
    assert io.command(bytes(cmd), write=b"\x33" * 4096)[0] == 0
    no_canary(adm, io)
    for h in (io, adm):
        h.close()


def test_no_stale_data_in_any_reply(two):
    """Reads of never-written blocks and short answers (a log page) carry zeros or the
    command's data, never what a buffer held for the other host; a write whose capsule holds
    less than its block (refused now) stored nothing of another host's either."""
    adm, io = host_a(two)
    io.command(rw(0x01, 18, 1, 2900, 1, 512, SGL_INCAPSULE), b"\x44" * 512)
    st, _, data = io.command(rw(0x02, 19, 1, 2900, 1, 4096))
    assert st == 0 and data in (bytes(4096), b"\x44" * 4096)
    for i, (slba, nlb) in enumerate(((3000, 1), (3100, 16), (3200, 256), (3300, 512))):
        st, _, data = io.command(rw(0x02, 20 + i, 1, slba, nlb, nlb * 4096))
        assert st == 0 and data == bytes(nlb * 4096)
    st, _, data = adm.command(sqe(0x02, 30, cdw10=(1023 << 16) | 1, sgl_len=4096))  # error log
    assert st == 0 and data == bytes(4096)
    no_canary(adm, io)
    adm.close()
    io.close()


def test_unread_reads_hold_bounded_memory(tmp_path, env):
    """4 connections x 32 queued 2 MiB reads whose data is not read: without limits the target
    would hold 256 MiB of buffers; with a 16 MiB connection and a 32 MiB total limit it holds
    about that much (receiving stops: TCP pushes back), and every read completes once the host
    reads its queues again."""
    env = dict(env, UNVME_QUIET="1")
    t = Target(env, tmp_path, ["--nqn", NQN_A, "-d", "emu://mem?ns=mem:64M:4096", "--allow-host",
                               HOST_A, "--max-connection-memory", "16", "--max-memory", "32"])
    try:
        adm = Host(t.port)
        assert adm.admin(t.port, NQN_A, HOST_A)[0] == 0
        before = vm_rss_kib(t.proc.pid)
        queues = [Host.io_queue(t.port, NQN_A, HOST_A, adm.cntlid, qid=q + 1, record=False)
                  for q in range(4)]
        for q in queues:
            for cid in range(32):
                q.capsule(rw(0x02, cid, 1, 0, 512, 2 << 20))
        time.sleep(1.5)
        grown = vm_rss_kib(t.proc.pid) - before
        assert grown < 64 * 1024, f"the target grew by {grown} KiB with 4 x 32 unread 2 MiB reads"
        # the host reads its queues again (as a host does, all of them): every read completes
        left = {q: 32 for q in queues}
        while any(left.values()):
            ready, _, _ = select.select([q.s for q in queues if left[q]], [], [], 20)
            assert ready, f"no progress: {list(left.values())} reads left"
            for q in queues:
                if q.s in ready:
                    st, _, data = q.result()
                    assert st == 0 and len(data) == 2 << 20
                    left[q] -= 1
        for q in queues:
            q.close()
        adm.close()
    finally:
        assert t.stop() == 0
    log = t.log_text()
    assert "max_connection_memory_mb (16 MiB)" in log and "max_memory_mb (32 MiB)" in log, log


def test_deadlines_close_idle_sockets(tmp_path, env):
    env = dict(env, UNVME_QUIET="1")
    t = Target(env, tmp_path, ["--nqn", NQN_A, "-d", "emu://dl?ns=mem:16M", "--allow-host", HOST_A,
                               "--icreq-timeout", "300", "--connect-timeout", "2500"])
    try:
        silent = Host(t.port)                      # never sends ICReq
        half = Host(t.port)                        # ICReq, then nothing
        assert half.icreq()[0] == ICRESP
        adm, io = host_a(t)                        # a host that is served
        assert silent.closed(10) and half.closed(10)
        time.sleep(1)
        st, _, data = io.command(rw(0x02, 1, 1, 0, 1, 512))
        assert st == 0 and len(data) == 512, "a connected queue was closed by a deadline"
        adm.close()
        io.close()
    finally:
        assert t.stop() == 0
    log = t.log_text()
    assert "icreq_timeout_ms" in log and "connect_timeout_ms" in log, log


def test_connection_limits(tmp_path, env):
    """Per host address and in total; 127.0.0.2 is another host. A refused connection is
    closed at once; the served ones go on; each limit is logged."""
    env = dict(env, UNVME_QUIET="1")
    t = Target(env, tmp_path, ["--nqn", NQN_A, "-d", "emu://cl?ns=mem:16M", "--allow-host", HOST_A,
                               "--max-connections", "3", "--max-connections-per-host", "2"])
    try:
        adm, io = host_a(t)                        # 2 from 127.0.0.1
        extra = Host(t.port)                       # a third from 127.0.0.1: per-host limit
        assert extra.closed(5)
        other = Host(t.port, source="127.0.0.2")   # another host: allowed (3 in total)
        assert other.icreq()[0] == ICRESP
        fourth = Host(t.port, source="127.0.0.2")  # the total limit
        assert fourth.closed(5)
        assert io.command(rw(0x02, 1, 1, 0, 1, 512))[0] == 0
        for h in (adm, io, other):
            h.close()
        # room again once they are gone
        assert eventually(lambda: served(t.port), 5)
    finally:
        assert t.stop() == 0
    log = t.log_text()  # (once a minute at most: test_tgt_units holds the count)
    assert "max_connections_per_host (2) reached" in log, log
    assert "max_connections (3) reached" in log, log


def test_descriptor_exhaustion_refuses_new_serves_old(tmp_path, env):
    """RLIMIT_NOFILE 64: far more sockets than descriptors. The target refuses what it cannot
    hold (closing each at once with its reserved descriptor) and keeps serving the host that was
    connected; once the sockets go, new hosts connect again."""
    env = dict(env, UNVME_QUIET="1")
    t = Target(env, tmp_path, ["--nqn", NQN_A, "-d", "emu://fd?ns=mem:16M", "--allow-host", HOST_A,
                               "--icreq-timeout", "60000"], wrap=["prlimit", "--nofile=64:64"])
    try:
        adm, io = host_a(t)
        assert io.command(rw(0x02, 1, 1, 0, 8, 4096))[0] == 0
        idle = [Host(t.port) for _ in range(150)]
        closed = set()

        def refused():
            ready, _, _ = select.select([h.s for h in idle if h not in closed], [], [], 0.2)
            for h in idle:
                if h.s in ready:
                    try:
                        if not h.s.recv(4096):
                            closed.add(h)
                    except OSError:
                        closed.add(h)
            return len(closed) > 50
        assert eventually(refused, 30), f"only {len(closed)} of 150 sockets were refused"
        for i in range(20):  # the served host goes on
            st, _, data = io.command(rw(0x02, 2 + i, 1, i, 8, 4096))
            assert st == 0 and len(data) == 4096
        for h in idle:
            h.close()
        assert eventually(lambda: served(t.port), 10)
        adm.close()
        io.close()
    finally:
        assert t.stop() == 0
    assert "out of file descriptors" in t.log_text(), t.log_text()


def test_discovery_and_nqn_probing(two, key_b):
    t = two
    # HOST_A sees A only
    d = Host(t.port)
    st, _ = d.admin(t.port, DISCOVERY_NQN, HOST_A)
    assert st == 0
    st, _, log = d.command(sqe(0x02, 2, cdw10=(1023 << 16) | 0x70, sgl_len=4096))
    assert st == 0 and NQN_A.encode() in log and NQN_B.encode() not in log
    d.close()
    # claiming HOST_B's NQN without its key: authentication required, nothing listed
    d = Host(t.port)
    assert d.icreq()[0] == ICRESP
    _, st, dw0 = d.connect(DISCOVERY_NQN, HOST_B)
    assert st == 0 and dw0 & ATR
    assert d.prop_set(0x14, 0x460001)[1] == 0
    st, _, log = d.command(sqe(0x02, 3, cdw10=(1023 << 16) | 0x70, sgl_len=4096))
    assert st == AUTH_REQUIRED and log == b""
    d.close()
    # HOST_B with its key (our host authenticates to the discovery controller): B is listed
    env = dict(os.environ, UNVME_QUIET="1")
    p = subprocess.run([str(TOOL), "discover", f"nvme-tcp://127.0.0.1:{t.port}?hostnqn={HOST_B}&dhchap_secret={key_b}",
                        "-o", "json"], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert {r["subnqn"] for r in json.loads(p.stdout)["records"]} == {DISCOVERY_NQN, NQN_B}
    # an unknown subsystem and a forbidden one answer the same
    answers = []
    for nqn in (NQN_B, "nqn.2024-01.io.unvme.sec:nothing", DISCOVERY_NQN + "x"):
        h = Host(t.port)
        assert h.icreq()[0] == ICRESP
        answers.append(h.connect(nqn, HOST_A)[1:])
        no_canary(h)
        h.close()
    assert answers[0] == answers[1] == answers[2] and answers[0][0] == CONNECT_INVALID_HOST, answers


def test_no_host_without_an_allow_list(tmp_path, env):
    r = subprocess.run([str(TOOL), "target", "--listen", "127.0.0.1:0", "-d", "emu://n?ns=mem:1M"],
                       env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--allow-host" in r.stderr and "--allow-any-host" in r.stderr, r.stderr
    # any host on an address others reach: served, with a warning
    t = Target(dict(env, UNVME_QUIET="1"), tmp_path, ["--nqn", NQN_A, "-d", "emu://any?ns=mem:1M",
                                                      "--allow-any-host", "--listen", "0.0.0.0:0"])
    try:
        h = Host(t.port)
        assert h.admin(t.port, NQN_A, "nqn.2014-08.io.unvme.sec:anyone")[0] == 0
        h.close()
    finally:
        t.stop()
    assert "serves any host" in t.log_text() and "0.0.0.0" in t.log_text(), t.log_text()
