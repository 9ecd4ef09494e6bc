# SPDX-License-Identifier: BSD-3-Clause
"""The NVMe/RDMA host (nvme-rdma:// device ids) as a user meets it on a machine without RDMA:
the tools refuse a bad id with a message naming the part in error (TLS and digests, which
NVMe/RDMA does not have, an unknown key, a port out of range) and a well-formed one with what
is missing (no RDMA device), exit 3, before anything is sent; an id without a subsystem NQN is
the discovery controller's (tests/integration/test_rdma_discovery.py). The
transport against a target runs in tests/unit/rdma/test_rdma_host.c (fake verbs) and in the
QEMU guest over soft-RoCE (tests/qemu/rdma_guest.sh).
"""
import os

import pytest

NQN = "nqn.2024-01.io.unvme.test:rdma"


def have_rdma_device():
    return os.path.isdir("/sys/class/infiniband") and bool(os.listdir("/sys/class/infiniband"))


def rdma_built(unvme):
    r = unvme.run("id-ctrl", "nope://x")
    return "nvme-rdma://" in r.err


@pytest.mark.parametrize("query,says", [
    ("tls=1", "nvme-rdma option tls: NVMe/RDMA has no TLS"),
    ("tls_key=NVMeTLSkey-1:01:AAAA:", "nvme-rdma option tls_key: NVMe/RDMA has no TLS"),
    ("hdgst=1", "nvme-rdma option hdgst: NVMe/RDMA has no digests"),
    ("ddgst=1", "nvme-rdma option ddgst: NVMe/RDMA has no digests"),
    ("colour=blue", "nvme-rdma option 'colour' is unknown (known: hostnqn, hostid, kato,"),
    ("kato=soon", "nvme-rdma option kato=soon: expected a number"),
])
def test_bad_keys_are_named(unvme, query, says):
    if not rdma_built(unvme):
        pytest.skip("this build has no NVMe/RDMA transport (rdma-core's headers were missing)")
    devid = f"nvme-rdma://10.0.0.5/{NQN}?{query}"
    r = unvme.run("id-ctrl", devid)
    assert r.rc == 3, r
    assert f"cannot open {devid}: {says}" in r.err, r


def test_bad_addresses_are_named(unvme):
    if not rdma_built(unvme):
        pytest.skip("this build has no NVMe/RDMA transport")
    r = unvme.run("id-ctrl", f"nvme-rdma://10.0.0.5:99999/{NQN}")
    assert r.rc == 3, r
    assert "port 99999 is outside 1..65535" in r.err, r
    r = unvme.run("id-ctrl", f"nvme-rdma://:4420/{NQN}")
    assert r.rc == 3, r
    assert "no host (nvme-rdma://HOST:PORT/NQN)" in r.err, r


@pytest.mark.skipif(have_rdma_device(), reason="this machine has an RDMA device")
def test_no_rdma_device_is_said_so(unvme):
    if not rdma_built(unvme):
        pytest.skip("this build has no NVMe/RDMA transport")
    r = unvme.run("id-ctrl", f"nvme-rdma://10.0.0.5/{NQN}", timeout=30)
    assert r.rc == 3, r
    assert "10.0.0.5:4420: cannot reach it over RDMA: no RDMA device" in r.err, r
    assert "rdma_rxe" in r.err, r  # and how to get one
    # no NQN: the discovery controller, on the NVMe/RDMA port
    r = unvme.run("id-ctrl", "nvme-rdma://10.0.0.5/", timeout=30)
    assert r.rc == 3, r
    assert "10.0.0.5:4420: cannot reach it over RDMA: no RDMA device" in r.err, r


def test_the_scheme_is_listed(unvme):
    r = unvme.run("id-ctrl", "nope://x")
    assert r.rc != 0, r
    assert "nvme-tcp://" in r.err, r
    if rdma_built(unvme):
        assert "nvme-tcp://, nvme-rdma://" in r.err, r
