# SPDX-License-Identifier: BSD-3-Clause
"""Discovery over NVMe/RDMA as the tools meet it on a machine without RDMA (the guest runs it on
soft-RoCE: tests/qemu/rdma_guest.sh, section 4):
  - `discover`, `connect` and `connect-all` take nvme-rdma:// ids and nvme-cli's `-t rdma -a
    ADDR -s PORT`; an id without an NQN is the discovery controller (port 4420), reached until
    the missing RDMA device stops it; a wrong -t or a TCP key on RDMA is refused with a message;
  - a discovery log (served over NVMe/TCP by the hostile target) with RDMA records: printed
    with their TSAS (text and JSON, nvme-cli's rdma_* names), followed by connect-all as
    nvme-rdma:// ids with the discovery id's options (NVMe/TCP's own left out), records that
    cannot be followed named; hostile bytes in an RDMA record's address, port, address family
    or TSAS refuse the log with the record and the field named, before anything is printed or
    connected.
"""
import os

import pytest

from hostile_target import TRTYPE_RDMA, disc_record
from test_tcp_hostile import clean, hostile, quiet_env  # noqa: F401 (fixtures)

NQN = "nqn.2024-01.io.unvme.test:rdma-disc"
DISC = "nqn.2014-08.org.nvmexpress.discovery"


def rdma_built(unvme):
    return "nvme-rdma://" in unvme.run("id-ctrl", "nope://x").err


def have_rdma_device():
    return os.path.isdir("/sys/class/infiniband") and bool(os.listdir("/sys/class/infiniband"))


@pytest.fixture
def rdma(unvme):
    if not rdma_built(unvme):
        pytest.skip("this build has no NVMe/RDMA transport (rdma-core's headers were missing)")
    if have_rdma_device():
        pytest.skip("this machine has an RDMA device: the 'no RDMA device' messages do not come")
    return unvme


# ---- arguments ----

@pytest.mark.parametrize("args, reached, port", [
    (["nvme-rdma://127.0.0.1"], "nvme-rdma://127.0.0.1", "4420"),
    (["nvme-rdma://127.0.0.1:4433"], "nvme-rdma://127.0.0.1:4433", "4433"),
    (["-t", "rdma", "-a", "127.0.0.1"], f"nvme-rdma://127.0.0.1:4420/{DISC}", "4420"),
    (["-t", "rdma", "-a", "127.0.0.1", "-s", "4433"], f"nvme-rdma://127.0.0.1:4433/{DISC}", "4433"),
    (["--transport", "rdma", "--traddr", "::1", "--trsvcid", "4433"], f"nvme-rdma://[::1]:4433/{DISC}",
     "4433"),
])
def test_discover_over_rdma_is_attempted(rdma, args, reached, port):
    """The discovery controller's id is accepted (no "no subsystem NQN" any more) and tried, on
    port 4420 unless given: this machine has no RDMA device, and the message says where it went."""
    r = clean(rdma.run("discover", *args, timeout=60))
    assert r.rc == 3, r
    assert f"cannot open {reached}: " in r.err and "no RDMA device" in r.err, r
    assert f":{port}: cannot reach it over RDMA" in r.err, r


def test_connect_and_connect_all_take_rdma(rdma):
    r = clean(rdma.run("connect", f"nvme-rdma://127.0.0.1:4433/{NQN}", timeout=60))
    assert r.rc == 3 and f"cannot open nvme-rdma://127.0.0.1:4433/{NQN}" in r.err, r
    r = clean(rdma.run("connect", "-t", "rdma", "-a", "127.0.0.1", "-n", NQN, timeout=60))
    assert r.rc == 3 and f"cannot open nvme-rdma://127.0.0.1:4420/{NQN}" in r.err, r
    r = clean(rdma.run("connect", "nvme-rdma://127.0.0.1:4433", "-n", NQN, timeout=60))
    assert r.rc == 3 and f"cannot open nvme-rdma://127.0.0.1:4433/{NQN}" in r.err, r
    r = clean(rdma.run("connect-all", "-t", "rdma", "-a", "127.0.0.1", timeout=60))
    assert r.rc == 3 and f"cannot open nvme-rdma://127.0.0.1:4420/{DISC}" in r.err, r


@pytest.mark.parametrize("args, says", [
    (["-t", "fc", "-a", "127.0.0.1"], "--transport fc: expected tcp or rdma"),
    (["-t", "rdma", "nvme-tcp://127.0.0.1:4420"], "--transport rdma does not match nvme-tcp://127.0.0.1:4420"),
    (["-t", "tcp", "nvme-rdma://127.0.0.1"], "--transport tcp does not match nvme-rdma://127.0.0.1"),
    (["emu://x"], "is not an nvme-tcp:// or nvme-rdma:// address"),
    ([], "give the target: nvme-tcp://HOST:PORT, nvme-rdma://HOST:PORT or [-t tcp|rdma] -a ADDRESS"),
])
def test_wrong_arguments_are_named(unvme, args, says):
    for cmd in ("discover", "connect-all"):
        r = clean(unvme.run(cmd, *args))
        assert r.rc == 2 and says in r.err, r


@pytest.mark.parametrize("args, says", [
    (["nvme-rdma://127.0.0.1?tls=1"], "nvme-rdma option tls: NVMe/RDMA has no TLS"),
    (["-t", "rdma", "-a", "127.0.0.1", "--tls"], "nvme-rdma option tls: NVMe/RDMA has no TLS"),
    (["nvme-rdma://127.0.0.1?hdgst=1"], "nvme-rdma option hdgst: NVMe/RDMA has no digests"),
    (["nvme-rdma://127.0.0.1:0"], "port 0 is outside 1..65535"),
])
def test_rdma_refusals_before_anything_is_sent(rdma, args, says):
    r = clean(rdma.run("discover", *args))
    assert r.rc == 3 and says in r.err, r


# ---- a discovery log with RDMA records ----

def rdma_rec(**kw):
    kw.setdefault("traddr", "10.0.0.5")
    kw.setdefault("trsvcid", "4420")
    kw.setdefault("nqn", NQN)
    return disc_record(TRTYPE_RDMA, **kw)


def test_rdma_records_are_printed_with_their_tsas(unvme, quiet_env, hostile):
    t = hostile(extra=[rdma_rec(prtype=4, pkey=0x1234),
                       rdma_rec(traddr="fe80::1%eth0", adrfam=2, trsvcid="4421", prtype=5)])
    unvme.env = quiet_env
    j = clean(unvme.ok("discover", f"nvme-tcp://127.0.0.1:{t.port}", "-o", "json")).json()
    recs = j["records"]
    assert [r["trtype"] for r in recs] == ["tcp", "rdma", "rdma"], j
    assert "rdma_qptype" not in recs[0], recs[0]
    r = recs[1]
    assert (r["traddr"], r["trsvcid"], r["subnqn"], r["adrfam"]) == ("10.0.0.5", "4420", NQN, "ipv4"), r
    assert (r["rdma_qptype"], r["rdma_prtype"], r["rdma_cms"], r["rdma_pkey"]) == \
        ("connected", "roce-v2", "rdma-cm", 0x1234), r
    assert (recs[2]["adrfam"], recs[2]["rdma_prtype"], recs[2]["traddr"]) == ("ipv6", "iwarp", "fe80::1%eth0")
    text = clean(unvme.ok("discover", f"nvme-tcp://127.0.0.1:{t.port}")).out
    assert "trtype:  rdma" in text and "rdma_qptype: connected" in text, text
    assert "rdma_prtype: roce-v2" in text and "rdma_cms:    rdma-cm" in text, text
    assert "rdma_pkey: 0x1234" in text, text


@pytest.mark.skipif(have_rdma_device(), reason="this machine has an RDMA device")
def test_connect_all_follows_rdma_records(rdma, quiet_env, hostile, tmp_path):
    """The TCP record is connected as before; the RDMA ones are followed as nvme-rdma:// ids
    with the discovery id's options but NVMe/TCP's (hdgst here): this machine has no RDMA
    device, so each is tried and fails with the id named. Records that cannot be followed
    (reliable datagram, an InfiniBand address) are said so and skipped."""
    t = hostile(extra=[rdma_rec(), rdma_rec(traddr="fe80::2", adrfam=2, trsvcid="4422"),
                       rdma_rec(qptype=2, trsvcid="4423"),
                       rdma_rec(adrfam=3, traddr="fe80:0000:0000:0000:0002:c903:0003:1234", trsvcid="4424")])
    env = dict(quiet_env, UNVME_CONFIG=str(tmp_path / "devices.json"))
    rdma.env = env
    r = clean(rdma.run("connect-all", f"nvme-tcp://127.0.0.1:{t.port}?kato=0&hdgst=0", "--alias", "d",
                       timeout=120))
    assert r.rc == 3, r  # the RDMA records could not be reached
    assert f"connected to {t.nqn}" in r.out and "device 'd0'" in r.out, r
    assert f"cannot open nvme-rdma://10.0.0.5:4420/{NQN}?kato=0:" in r.err, r
    assert f"cannot open nvme-rdma://[fe80::2]:4422/{NQN}?kato=0:" in r.err, r
    assert not [line for line in r.err.splitlines() if "nvme-rdma://" in line and "hdgst" in line], r
    assert "record 3 not followed: reliable datagram queue pairs" in r.err, r
    assert "record 4 not followed: an InfiniBand address (AF_IB)" in r.err, r
    assert "4423" not in r.err and "4424" not in r.err, r


# hostile RDMA records: (record fields, what the message names)
HOSTILE = [
    (dict(traddr="10.0.0.5/evil"), "RDMA traddr '10.0.0.5/evil': not a host name or an IPv4 address"),
    (dict(traddr="10.0.0.5?kato=0"), "RDMA traddr '10.0.0.5?kato=0': not a host name"),
    (dict(traddr="10.0.0.5:99"), "RDMA traddr '10.0.0.5:99': not a host name or an IPv4 address"),
    (dict(traddr="[::1]", adrfam=2), "RDMA traddr '[::1]': not a host name or an IPv6 address"),
    (dict(traddr=""), "RDMA traddr '': not a host name"),
    (dict(traddr=b"10.0.0.5\x01"), "traddr: control characters in the address"),
    (dict(trsvcid="0"), "RDMA trsvcid '0': not a port number in 1..65535"),
    (dict(trsvcid="65536"), "RDMA trsvcid '65536': not a port number in 1..65535"),
    (dict(trsvcid="44a0"), "RDMA trsvcid '44a0': not a port number"),
    (dict(trsvcid="4420&x=1"), "RDMA trsvcid '4420&x=1': not a port number"),
    (dict(trsvcid=""), "RDMA trsvcid '': not a port number"),
    (dict(trsvcid=b"\x7f4420"), "trsvcid: control characters in the port"),
    (dict(adrfam=0), "RDMA adrfam 0: not 1 (IPv4) or 2 (IPv6)"),
    (dict(adrfam=9), "RDMA adrfam 9: not 1 (IPv4) or 2 (IPv6)"),
    (dict(qptype=0), "RDMA tsas.qptype 0: not 1 (reliable connected) or 2 (reliable datagram)"),
    (dict(qptype=3), "RDMA tsas.qptype 3: not 1"),
    (dict(prtype=0), "RDMA tsas.prtype 0: not 1..5"),
    (dict(prtype=6), "RDMA tsas.prtype 6: not 1..5"),
    (dict(cms=0), "RDMA tsas.cms 0: not 1 (the RDMA IP connection manager)"),
    (dict(cms=2), "RDMA tsas.cms 2: not 1"),
    (dict(tsas=bytes(256)), "RDMA tsas.qptype 0"),
    (dict(nqn="nqn.x y"), "subnqn: no subsystem NQN, or one with spaces"),
]


@pytest.mark.parametrize("fields, says", HOSTILE, ids=[h[1][:40] for h in HOSTILE])
def test_hostile_rdma_record_refuses_the_log(unvme, quiet_env, hostile, fields, says):
    t = hostile(extra=[rdma_rec(**fields)])
    unvme.env = quiet_env
    for cmd, fmt in (("discover", []), ("discover", ["-o", "json"]), ("connect-all", [])):
        r = clean(unvme.run(cmd, f"nvme-tcp://127.0.0.1:{t.port}", *fmt))
        assert r.rc == 3, r
        assert f"discovery log record 1 of 2 is malformed ({says}" in r.err, r
        assert "Entry" not in r.out and "connected to" not in r.out and "records" not in r.out, r
        assert "nvme-rdma://" not in r.err, r  # nothing of it was followed


def test_tcp_record_with_an_ipv4_address_holding_a_port(unvme, quiet_env, hostile):
    """The address check is shared: a TCP record's IPv4 address may not carry a ':' either."""
    t = hostile(extra=[disc_record(3, "127.0.0.1:1", "4420", NQN)])
    unvme.env = quiet_env
    r = clean(unvme.run("connect-all", f"nvme-tcp://127.0.0.1:{t.port}"))
    assert r.rc == 3 and "record 1 of 2 is malformed (TCP traddr '127.0.0.1:1'" in r.err, r
