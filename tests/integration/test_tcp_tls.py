# SPDX-License-Identifier: BSD-3-Clause
"""NVMe/TCP with TLS 1.3 and pre-shared keys (NVMe TCP Transport 1.1 section 3.6) between our
host and `unvme target`, as a user runs them: keys as nvme-cli's gen-tls-key prints them, I/O
with the data verified, the discovery log saying TLS is required, and the refusals: another
key, a host without a key, a host in the clear against a target that requires TLS, and a TLS
host against a target in the clear, each with a message on both sides."""
import base64
import json
import os
import shutil
import struct
import subprocess
import zlib

import pytest

from nvmetcp import DISCOVERY_NQN, Target

NQN = "nqn.2024-01.io.unvme.test:tls"
HOST = "nqn.2014-08.io.unvme.test:tls-host"
OTHER = "nqn.2014-08.io.unvme.test:tls-other"


def tls_key(hmac=1):
    """A configured PSK as `nvme gen-tls-key -m HMAC` prints it (made by nvme-cli when it is
    installed, else the same format here: base64 of the key and its CRC-32)."""
    if shutil.which("nvme"):
        p = subprocess.run(["nvme", "gen-tls-key", "-m", str(hmac)], capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.startswith("NVMeTLSkey-1:"):
            return p.stdout.strip()
    key = os.urandom(48 if hmac == 2 else 32)
    raw = key + struct.pack("<I", zlib.crc32(key) & 0xFFFFFFFF)
    return f"NVMeTLSkey-1:{hmac:02d}:{base64.b64encode(raw).decode()}:"


@pytest.fixture
def quiet_env(env):
    return dict(env, UNVME_QUIET="1", UNVME_HOSTNQN=HOST)


def test_tls_io_discovery_and_refusals(unvme, quiet_env, tmp_path):
    key = tls_key(1)
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", "emu://tls?ns=mem:32M", "--allow-host",
                                     f"{HOST},{OTHER}", "--tls", "--tls-key", key])
    try:
        unvme.env = quiet_env
        dev = t.devid(NQN, f"tls_key={key}")
        unvme.ok("write", dev, "-s", "10", "-c", "127", "-p", "0xc3")  # 64 KiB: by R2T
        unvme.ok("read", dev, "-s", "10", "-c", "127", "-d", unvme.tmp / "back")
        assert (unvme.tmp / "back").read_bytes() == b"\xc3" * 128 * 512
        unvme.ok("compare", dev, "-s", "10", "-c", "127", "-d", unvme.tmp / "back")
        # identity version 1 (the PSK digest in it), and the key from the environment
        unvme.ok("id-ctrl", t.devid(NQN, f"tls_key={key}&tls_identity=1"))
        unvme.env = dict(quiet_env, UNVME_TLS_KEY=key)
        unvme.ok("id-ctrl", t.devid(NQN, "tls=1"))
        unvme.env = quiet_env
        # the discovery log says TLS 1.3 is required
        log = unvme.ok("discover", f"nvme-tcp://127.0.0.1:{t.port}", "--tls-key", key, "-o", "json").json()
        rec = {r["subnqn"]: r for r in log["records"]}
        assert rec[NQN]["sectype"] == "tls13" and rec[NQN]["treq"] == "required", log
        assert DISCOVERY_NQN in rec

        # another key: the target refuses it, and says so
        r = unvme.run("id-ctrl", t.devid(NQN, f"tls_key={tls_key(1)}"))
        assert r.rc == 3 and "refused the TLS PSK" in r.err and "another key" in r.err, r
        # an allowed host without a key
        r = unvme.run("id-ctrl", t.devid(NQN, f"tls_key={key}&hostnqn={OTHER}x"))
        assert r.rc == 3 and "no key for this host" in r.err, r
        # a host in the clear
        r = unvme.run("id-ctrl", t.devid(NQN))
        assert r.rc == 3 and "the target closed the connection" in r.err and "tls=1" in r.err, r
        # tls=1 without a key says how to give one
        r = unvme.run("id-ctrl", t.devid(NQN, "tls=1"))
        assert r.rc == 3 and "tls_key=NVMeTLSkey-1" in r.err, r
        r = unvme.run("id-ctrl", t.devid(NQN, "tls_key=NVMeTLSkey-1:01:bad:"))
        assert r.rc == 3 and "tls_key" in r.err, r
    finally:
        assert t.stop() == 0, t.log_text()
    log = t.log_text()
    assert "its TLS PSK is not the one configured for it" in log, log
    assert "no TLS key is configured for this host" in log, log
    assert "speaks NVMe/TCP without TLS" in log, log


def test_tls_host_against_a_target_in_the_clear(unvme, quiet_env, tmp_path):
    t = Target(quiet_env, tmp_path, ["--nqn", NQN, "-d", "emu://clear?ns=mem:16M", "--allow-any-host"],
               name="clear")
    try:
        unvme.env = quiet_env
        r = unvme.run("id-ctrl", t.devid(NQN, f"tls_key={tls_key(2)}"))
        assert r.rc == 3 and "the target speaks NVMe/TCP without TLS" in r.err, r
        unvme.ok("id-ctrl", t.devid(NQN))
    finally:
        assert t.stop() == 0, t.log_text()


def test_tls_configuration_file_keys_per_host(unvme, quiet_env, tmp_path):
    """Two hosts with keys of their own (SHA-256 and SHA-384 suites): each works with its own,
    neither with the other's; perf verifies its data across the TLS sessions."""
    k1, k2 = tls_key(1), tls_key(2)
    cfg = {"listen": ["127.0.0.1:0"], "tls": True,
           "subsystems": [{"nqn": NQN, "hosts": [{"nqn": HOST, "tls_key": k1},
                                                 {"nqn": OTHER, "tls_key": k2}],
                           "namespaces": ["emu://tlscfg?ns=mem:64M:4096"]}]}
    path = tmp_path / "target.json"
    path.write_text(json.dumps(cfg))
    t = Target(quiet_env, tmp_path, ["-c", path], name="cfg")
    try:
        unvme.env = quiet_env
        r = unvme.ok("perf", t.devid(NQN, f"tls_key={k1}"), "-w", "randrw", "-q", "8", "-b", "64k",
                     "-t", "1", "-V", timeout=120)
        assert "verify: 0 blocks failed" in r.out + r.err, r
        unvme.ok("id-ctrl", t.devid(NQN, f"tls_key={k2}&hostnqn={OTHER}"))
        r = unvme.run("id-ctrl", t.devid(NQN, f"tls_key={k2}"))  # HOST with OTHER's key
        assert r.rc == 3 and "refused the TLS PSK" in r.err, r
    finally:
        assert t.stop() == 0, t.log_text()
    # a key that is not one is named with its host
    cfg["subsystems"][0]["hosts"][0]["tls_key"] = "NVMeTLSkey-1:01:xyz:"
    path.write_text(json.dumps(cfg))
    r = unvme.run("target", "-c", path)
    assert r.rc == 2 and HOST in r.err and "tls_key" in r.err, r
