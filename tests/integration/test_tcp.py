# SPDX-License-Identifier: BSD-3-Clause
"""NVMe/TCP as a user meets it: `unvme target` serving emulated devices on 127.0.0.1 (ports
the system picks, so parallel runs do not collide), and the tools, the KV SDK and fio on the
remote namespaces unchanged: identify, I/O and verify, digests, discovery and named
connections, the host allow-list and DH-HMAC-CHAP refusals, and a target that must survive
hosts sending malformed PDUs without disturbing the others.

Data digests that do not match fail their command (Transient Transport Error) and keep the
connection; every other bad PDU ends that one connection with a C2HTermReq naming the fatal
error status and the offset of the field in error (FEI).
"""
import json
import shutil
import struct
import subprocess

import pytest

from conftest import build_dir
from nvmetcp import (C2H_DATA, C2H_TERM, CAPSULE_RESP, F_LAST, H2C_DATA, H2C_TERM, ICRESP, R2T,
                     SGL_INCAPSULE, DISCOVERY_NQN, RawHost, Target, dhchap_key, sqe, term_of)

NQN = "nqn.2024-01.io.unvme.test:remote"
HOST = "nqn.2014-08.io.unvme.test:host-1"
SDK_PERF = build_dir() / "tools" / "kv" / "sdk_perf"
SDK_PERF_ASYNC = build_dir() / "tools" / "kv" / "sdk_perf_async"
ENGINE = build_dir() / "plugins" / "fio" / "unvme-fio.so"


@pytest.fixture
def quiet_env(env):
    return dict(env, UNVME_QUIET="1", UNVME_HOSTNQN=HOST)


@pytest.fixture
def block_target(unvme, quiet_env, tmp_path):
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", unvme.file_dev("rb", size="64M"),
                                     "-d", "emu://rm?ns=mem:32M:4096", "--allow-any-host"])
    yield t
    assert t.stop() == 0, t.log_text()


@pytest.fixture
def kv_target(quiet_env, tmp_path):
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", f"emu://rkv?ns=kv:512M::{tmp_path / 'kv.log'}",
                                     "--allow-any-host"], name="kv")
    yield t
    assert t.stop() == 0, t.log_text()


def test_tools_on_a_remote_subsystem(unvme, quiet_env, block_target):
    unvme.env = quiet_env
    dev = block_target.devid(NQN)
    ctrl = unvme.ok("id-ctrl", dev, "-o", "json").json()
    assert ctrl["subnqn"] == NQN
    assert ctrl["cntrltype"] == 1
    assert "2" in unvme.ok("list-ns", dev).out
    unvme.ok("id-ns", dev, "-n", "2")
    unvme.ok("show-regs", dev)
    unvme.ok("smart-log", dev)
    unvme.ok("write", dev, "-n", "1", "-s", "100", "-c", "63", "-p", "0xa5")
    unvme.ok("read", dev, "-n", "1", "-s", "100", "-c", "63", "-d", unvme.tmp / "back")
    assert (unvme.tmp / "back").read_bytes() == b"\xa5" * 64 * 512
    unvme.ok("compare", dev, "-n", "1", "-s", "100", "-c", "63", "-d", unvme.tmp / "back")
    r = unvme.run("read", dev, "-n", "1", "-s", str(64 * 2048), "-c", "0", "-d", unvme.tmp / "x")
    assert r.rc == 1 and "LBA Out of Range" in r.err, r
    # an alias names the remote subsystem like a local device
    unvme.env = dict(quiet_env, UNVME_DEVICES=f"far={dev}")
    unvme.ok("id-ctrl", "far")


@pytest.mark.parametrize("digests", ["", "hdgst=1", "hdgst=1&ddgst=1"])
def test_perf_verify_with_and_without_digests(unvme, quiet_env, block_target, digests):
    unvme.env = quiet_env
    dev = block_target.devid(NQN, digests)
    for bs in ("4k", "64k", "1m"):
        r = unvme.ok("perf", dev, "-w", "randrw", "-q", "8", "-b", bs, "-t", "1", "-V", timeout=120)
        assert "verify: 0 blocks failed" in r.out + r.err, r


def test_kv_sdk_remote(quiet_env, kv_target):
    dev = kv_target.devid(NQN)
    for tool, key, value in ((SDK_PERF, 16, 4096), (SDK_PERF, 200, 65536), (SDK_PERF_ASYNC, 40, 4096)):
        p = subprocess.run([str(tool), "-n", "2000", "-k", str(key), "-v", str(value), "-d", dev],
                           capture_output=True, text=True, env=quiet_env, timeout=300)
        assert p.returncode == 0 and "result: PASS" in p.stdout, p.stdout + p.stderr


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_kv_engine_remote(quiet_env, kv_target, tmp_path):
    assert ENGINE.exists()
    cfg = tmp_path / "kv.json"
    # the SDK's JSON names the remote subsystem by an alias, as it names a local device
    cfg.write_text(json.dumps({"ssd_type": "kv", "log_file": str(tmp_path / "kvsdk.log"),
                               "device_description": [{"dev_id": "remotekv", "core_mask": 1,
                                                       "sync_mask": 1}]}))
    env = dict(quiet_env, UNVME_DEVICES=f"remotekv={kv_target.devid(NQN)}")
    args = ["fio", f"--ioengine=external:{ENGINE}", f"--json_path={cfg}", "--filename=remotekv",
            "--thread=1", "--size=4M", "--iodepth=16", "--bs=4k", "--rw=randwrite", "--verify=crc32c",
            "--randrepeat=1", "--ks=40"]
    for phase in (["--name=w", "--do_verify=0"], ["--name=v", "--verify_only=1"]):
        p = subprocess.run(args + phase, capture_output=True, text=True, env=env, timeout=300,
                           cwd=tmp_path)
        assert p.returncode == 0 and " err= 0" in p.stdout, p.stdout + p.stderr


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_block_engine_remote(quiet_env, block_target, tmp_path):
    """fio's block jobs through the engine on a remote namespace named by an alias: written in one
    process, verified in another (the data crossed the fabric twice and sits on the target)."""
    assert ENGINE.exists()
    env = dict(quiet_env, UNVME_DEVICES=f"remoteblk={block_target.devid(NQN)}")
    args = ["fio", f"--ioengine=external:{ENGINE}", "--filename=remoteblk", "--thread=1",
            "--size=8M", "--iodepth=16", "--bsrange=4k-128k", "--rw=randwrite", "--verify=crc32c",
            "--randrepeat=1"]
    for phase in (["--name=w", "--do_verify=0"], ["--name=v", "--verify_only=1"]):
        p = subprocess.run(args + phase, capture_output=True, text=True, env=env, timeout=300,
                           cwd=tmp_path)
        assert p.returncode == 0 and " err= 0" in p.stdout, p.stdout + p.stderr


def test_discover_connect_and_names(unvme, quiet_env, block_target):
    unvme.env = quiet_env
    port = block_target.port
    log = unvme.ok("discover", f"nvme-tcp://127.0.0.1:{port}", "-o", "json").json()
    subs = {r["subnqn"]: r for r in log["records"]}
    assert subs[DISCOVERY_NQN]["subtype"] == "current discovery subsystem"
    assert subs[NQN]["subtype"] == "nvme subsystem"
    assert subs[NQN]["traddr"] == "127.0.0.1" and subs[NQN]["trsvcid"] == str(port)
    text = unvme.ok("discover", "-a", "127.0.0.1", "-s", port).out
    assert f"subnqn:  {NQN}" in text and "trtype:  tcp" in text
    r = unvme.ok("connect", "-a", "127.0.0.1", "-s", port, "-n", NQN, "--alias", "remote0")
    assert "connected to " + NQN in r.out
    unvme.ok("write", "remote0", "-s", "8", "-c", "0", "-p", "0x11")
    devices = unvme.ok("devices", "-o", "json").out
    assert "remote0" in devices
    r = unvme.ok("connect-all", f"nvme-tcp://127.0.0.1:{port}", "--alias", "disc")
    unvme.ok("read", "disc0", "-s", "8", "-c", "0", "-d", unvme.tmp / "b")
    assert (unvme.tmp / "b").read_bytes() == b"\x11" * 512
    unvme.ok("disconnect", "remote0")
    r = unvme.run("id-ctrl", "remote0")
    assert r.rc == 3, r
    r = unvme.run("disconnect", "remote0")
    assert r.rc == 3 and "not in" in r.err, r


def test_allow_list_refuses_and_logs(unvme, quiet_env, tmp_path):
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", "emu://acl?ns=mem:16M", "--allow-host", HOST])
    try:
        unvme.env = quiet_env
        unvme.ok("id-ctrl", t.devid(NQN))
        r = unvme.run("id-ctrl", t.devid(NQN, "hostnqn=nqn.2014-08.io.unvme.test:stranger"))
        assert r.rc == 3 and "does not allow host" in r.err and "Connect Invalid Host" in r.err, r
        # a subsystem that does not exist answers like one the host may not use
        r = unvme.run("id-ctrl", t.devid("nqn.2024-01.io.unvme.test:other"))
        assert r.rc == 3 and "does not allow host" in r.err, r
        log = t.log_text()
        assert "stranger" in log and "refused" in log and "Connect Invalid Host" in log, log
    finally:
        t.stop()


@pytest.mark.parametrize("dhgroup", ["null", "ffdhe2048"])
def test_dhchap_right_and_wrong_secrets(unvme, quiet_env, tmp_path, dhgroup):
    key, ckey, wrong = dhchap_key(1), dhchap_key(0), dhchap_key(1)
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", "emu://auth?ns=mem:16M", "--allow-host", HOST,
                                     "--dhchap-secret", key, "--dhchap-ctrl-secret", ckey,
                                     "--dhchap-dhgroup", dhgroup])
    try:
        unvme.env = quiet_env
        unvme.ok("write", t.devid(NQN, f"dhchap_secret={key}&dhchap_ctrl_secret={ckey}"),
                 "-s", "0", "-c", "1", "-p", "7")
        r = unvme.run("id-ctrl", t.devid(NQN, f"dhchap_secret={wrong}"))
        assert r.rc == 3 and "refused the host" in r.err, r
        r = unvme.run("id-ctrl", t.devid(NQN))
        assert r.rc == 3 and "requires DH-HMAC-CHAP" in r.err, r
        r = unvme.run("id-ctrl", t.devid(NQN, f"dhchap_secret={key}&dhchap_ctrl_secret={wrong}"))
        assert r.rc == 3 and "did not prove" in r.err, r
        assert "failed" in t.log_text()
    finally:
        t.stop()


def test_target_configuration_file(unvme, quiet_env, tmp_path):
    key = dhchap_key(0)
    cfg = {"listen": ["127.0.0.1:0"], "threads": 2,
           "subsystems": [
               {"nqn": NQN, "serial": "SN-REMOTE-1", "allow_any_host": True,
                "namespaces": ["emu://c1?ns=mem:16M", {"device": "emu://c2?ns=mem:8M:4096", "nsid": 5}]},
               {"nqn": NQN + "-secure", "hosts": [{"nqn": HOST, "dhchap_secret": key,
                                                  "dhchap_dhgroup": "ffdhe3072", "dhchap_hash": "sha384"}],
                "namespaces": [{"device": "emu://c3?ns=mem:8M", "device_nsid": 1}]}]}
    path = tmp_path / "target.json"
    path.write_text(json.dumps(cfg))
    t = Target(quiet_env, tmp_path, ["-c", path])
    try:
        unvme.env = quiet_env
        ctrl = unvme.ok("id-ctrl", t.devid(NQN), "-o", "json").json()
        assert ctrl["sn"].strip() == "SN-REMOTE-1"
        assert unvme.ok("id-ns", t.devid(NQN), "-n", "5", "-o", "json").json()["nsze"] == 2048
        unvme.ok("id-ctrl", t.devid(NQN + "-secure", f"dhchap_secret={key}"))
        # the host has a key: it proves it to the discovery controller, which then lists the
        # subsystem that wants that key too
        log = unvme.ok("discover", f"nvme-tcp://127.0.0.1:{t.port}?dhchap_secret={key}", "-o", "json").json()
        assert {r["subnqn"] for r in log["records"]} == {DISCOVERY_NQN, NQN, NQN + "-secure"}
    finally:
        t.stop()
    # mistakes in the file are named
    path.write_text(json.dumps({"subsystems": [{"nqn": NQN, "namespaces": ["emu://x"], "colour": 1}]}))
    r = unvme.run("target", "-c", path)
    assert r.rc == 2 and "colour" in r.err, r
    path.write_text(json.dumps({"subsystems": [{"nqn": NQN, "namespaces": ["emu://x"],
                                                "hosts": [{"nqn": HOST, "dhchap_secret": "DHHC-1:00:bad:"}]}]}))
    r = unvme.run("target", "-c", path)
    assert r.rc == 2 and "dhchap_secret" in r.err, r


# ---- malformed PDUs: one connection ends, the target and other hosts go on ----

def other_host_still_served(unvme, target):
    unvme.ok("write", target.devid(NQN), "-s", "0", "-c", "7", "-p", "0x3c")
    unvme.ok("read", target.devid(NQN), "-s", "0", "-c", "7", "-d", unvme.tmp / "other")


def expect_term(h, fes, fei=None):
    typ, _, _, _, p = h.recv_pdu()
    assert typ == C2H_TERM, f"expected C2HTermReq, got PDU type {typ}"
    got_fes, got_fei = term_of(p)
    assert got_fes == fes, f"FES {got_fes} != {fes}"
    if fei is not None:
        assert got_fei == fei, f"FEI {got_fei} != {fei}"
    assert h.closed(), "the target did not close the connection"


def test_bad_pdus_end_only_their_connection(unvme, quiet_env, tmp_path):
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", "emu://bad?ns=mem:16M", "--allow-any-host"])
    unvme.env = quiet_env
    try:
        # a version we do not speak: Unsupported Parameter at PFV (byte 8)
        h = RawHost(t.port)
        typ, p = h.icreq(pfv=1)
        assert typ == C2H_TERM and term_of(p) == (6, 8), p.hex()
        assert h.closed()
        # an unknown PDU type: Invalid PDU Header Field at byte 0
        h = RawHost(t.port)
        h.establish(t.port, NQN, HOST)
        h.send(struct.pack("<BBBBI", 0x0B, 0, 24, 0, 24) + bytes(16))
        expect_term(h, 1, 0)
        # a capsule whose header length is wrong: byte 2
        h = RawHost(t.port)
        h.establish(t.port, NQN, HOST)
        h.send(struct.pack("<BBBBI", 4, 0, 64, 0, 72) + bytes(64))
        expect_term(h, 1, 2)
        # a PDU length shorter than the header: byte 4
        h = RawHost(t.port)
        h.establish(t.port, NQN, HOST)
        h.send(struct.pack("<BBBBI", 4, 0, 72, 0, 40) + bytes(64))
        expect_term(h, 1, 4)
        # a header digest that does not match: Header Digest Error
        h = RawHost(t.port)
        h.establish(t.port, NQN, HOST, dgst=1)
        h.capsule(sqe(0x18, 5), bad_hdgst=True)
        expect_term(h, 3)
        # more in-capsule data than the controller takes: Data Transfer Limit Exceeded
        h = RawHost(t.port)
        h.establish(t.port, NQN, HOST)
        h.capsule(sqe(0x09, 5, sgl_len=9000, sgl_type=SGL_INCAPSULE), bytes(9000))
        expect_term(h, 5)
        # a termination request of impossible length: closed without an answer
        h = RawHost(t.port)
        h.establish(t.port, NQN, HOST)
        h.send(struct.pack("<BBBBI", H2C_TERM, 0, 24, 0, 400) + bytes(16))
        assert h.closed()
        other_host_still_served(unvme, t)
    finally:
        assert t.stop() == 0, t.log_text()
    log = t.log_text()
    assert "protocol error" in log and "Header Digest Error" in log, log


def io_queue(t, cntlid):
    """An I/O queue connection of controller cntlid."""
    h = RawHost(t.port)
    assert h.icreq()[0] == ICRESP
    _, st, _ = h.connect(NQN, HOST, qid=1, cntlid=cntlid, sqsize=31)
    assert st == 0, f"I/O Connect failed: {st:#x}"
    return h


def test_bad_data_transfers(unvme, quiet_env, tmp_path):
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", "emu://dt?ns=mem:16M", "--allow-any-host"])
    unvme.env = quiet_env
    try:
        admin = RawHost(t.port)
        cntlid = admin.establish(t.port, NQN, HOST)
        write = sqe(0x01, 9, nsid=1, cdw12=15, sgl_len=8192)  # 16 blocks, data by R2T

        # H2CData that no R2T asked for (unknown transfer tag): byte 10 (TTAG)
        h = io_queue(t, cntlid)
        h.send(h.header(H2C_DATA, F_LAST, struct.pack("<HHIII", 9, 77, 0, 512, 0), bytes(512)))
        expect_term(h, 1, 10)

        # data beyond what the R2T asked for: Data Transfer Out of Range
        h = io_queue(t, cntlid)
        h.capsule(write)
        typ, _, _, _, p = h.recv_pdu()
        assert typ == R2T
        cccid, ttag, r2to, r2tl = struct.unpack_from("<HHII", p, 8)
        assert (cccid, r2to, r2tl) == (9, 0, 8192)
        h.send(h.header(H2C_DATA, F_LAST, struct.pack("<HHIII", 9, ttag, 0, 16384, 0), bytes(16384)))
        expect_term(h, 4)

        # data out of order within the transfer: PDU Sequence Error at DATAO (byte 12)
        h = io_queue(t, cntlid)
        h.capsule(write)
        _, _, _, _, p = h.recv_pdu()
        ttag = struct.unpack_from("<H", p, 10)[0]
        h.send(h.header(H2C_DATA, 0, struct.pack("<HHIII", 9, ttag, 512, 512, 0), bytes(512)))
        expect_term(h, 2, 12)

        # a data digest that does not match fails the command, not the connection
        h = RawHost(t.port)
        h.icreq(dgst=2)
        assert h.dd
        _, st, _ = h.connect(NQN, HOST, qid=1, cntlid=cntlid)
        assert st == 0
        h.capsule(sqe(0x01, 11, nsid=1, cdw12=0, sgl_len=512, sgl_type=SGL_INCAPSULE), bytes(512),
                  bad_ddgst=True)
        cid, st, _ = h.response()
        assert cid == 11 and st == 0x22, f"status {st:#x}"  # Transient Transport Error
        h.capsule(sqe(0x01, 12, nsid=1, cdw12=0, sgl_len=512, sgl_type=SGL_INCAPSULE), bytes(512))
        assert h.response()[:2] == (12, 0)
        # a read on the same connection: C2HData then the response
        h.capsule(sqe(0x02, 13, nsid=1, cdw12=0, sgl_len=512))
        typ, _, _, _, p = h.recv_pdu()
        assert typ == C2H_DATA
        assert h.response()[:2] == (13, 0)
        h.close()
        other_host_still_served(unvme, t)
    finally:
        assert t.stop() == 0, t.log_text()


def test_commands_before_connect_and_refusals(quiet_env, tmp_path):
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", "emu://seq?ns=mem:16M", "--allow-host", HOST])
    try:
        h = RawHost(t.port)
        h.icreq()
        h.capsule(sqe(0x06, 3, cdw10=1, sgl_len=4096))  # Identify before Connect
        assert h.response()[:2] == (3, (0 << 8) | 0x0C)  # Command Sequence Error
        cid, st, dw0 = h.connect(NQN, "nqn.2014-08.io.unvme.test:stranger")
        assert st == (1 << 8) | 0x84  # Connect Invalid Host
        cid, st, dw0 = h.connect("nqn.none", HOST)
        assert st == (1 << 8) | 0x84  # an unknown subsystem answers as a forbidden one
        cid, st, dw0 = h.connect(NQN, HOST, qid=1, cntlid=0x1234)
        assert st == (1 << 8) | 0x82 and dw0 == (1 << 16) | 16  # ... at CNTLID
        h.close()
    finally:
        t.stop()
