# SPDX-License-Identifier: BSD-3-Clause
"""The target's NVMe/RDMA listener as a user meets it on a machine without RDMA: `unvme target
--listen rdma:ADDR:PORT` (and the "listen" entry of the configuration file) refusing what it
cannot serve with a message naming what is wrong and a nonzero exit: an address that is not
one, a port out of range, no RDMA device, TLS asked for on an RDMA listener. Serving Linux's
nvme-rdma host is tested in the QEMU guest over soft-RoCE (tests/qemu/rdma_guest.sh).
"""
import json
import os

import pytest

NQN = "nqn.2024-01.io.unvme.test:rdma"


def have_rdma_device():
    return os.path.isdir("/sys/class/infiniband") and bool(os.listdir("/sys/class/infiniband"))


def target(unvme, listen, name, *extra):
    return unvme.run("target", "--listen", listen, "--nqn", NQN, "-d", f"emu://{name}?ns=mem:16M",
                     "--allow-any-host", *extra, timeout=60)


def test_an_address_that_is_not_one_is_named(unvme):
    r = target(unvme, "rdma:300.1.2.3:4420", "rbad")
    assert r.rc != 0, r
    assert "listen address rdma:300.1.2.3:4420" in r.err, r


def test_a_port_out_of_range_is_named(unvme):
    r = target(unvme, "rdma:127.0.0.1:70000", "rport")
    assert r.rc != 0, r
    assert "'rdma:127.0.0.1:70000': port must be 0..65535" in r.err, r


@pytest.mark.skipif(have_rdma_device(), reason="this machine has an RDMA device")
def test_no_rdma_device_is_said_so(unvme):
    r = target(unvme, "rdma:127.0.0.1:0", "rnodev")
    assert r.rc != 0, r
    assert "cannot listen on rdma:127.0.0.1:0: no RDMA device" in r.err, r
    assert "rdma_rxe" in r.err, r  # and how to get one


@pytest.mark.skipif(have_rdma_device(), reason="this machine has an RDMA device")
def test_the_configuration_file_takes_rdma_listeners_too(unvme, tmp_path):
    cfg = tmp_path / "t.json"
    cfg.write_text(json.dumps({
        "listen": ["127.0.0.1:0", "rdma:127.0.0.1:0"],
        "subsystems": [{"nqn": NQN, "allow_any_host": True, "namespaces": ["emu://rcfg?ns=mem:16M"]}],
    }))
    r = unvme.run("target", "-c", cfg, timeout=60)
    assert r.rc != 0, r
    assert "cannot listen on rdma:127.0.0.1:0: no RDMA device" in r.err, r


def test_tls_is_refused_on_an_rdma_listener(unvme, tmp_path):
    cfg = tmp_path / "t.json"
    cfg.write_text(json.dumps({
        "listen": ["rdma:127.0.0.1:0"],
        "tls": True,
        "subsystems": [{"nqn": NQN, "allow_any_host": True, "namespaces": ["emu://rtls?ns=mem:16M"]}],
    }))
    r = unvme.run("target", "-c", cfg, timeout=60)
    assert r.rc != 0, r
    assert "\"tls\" is NVMe/TCP's: the RDMA listener 127.0.0.1:0 cannot require it" in r.err, r
