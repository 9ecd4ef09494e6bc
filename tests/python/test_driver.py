# SPDX-License-Identifier: BSD-3-Clause
"""The driver API from Python: controllers, namespaces, identify and logs as objects, sync and
async I/O into buffer-protocol objects, errors as exceptions named by the NVMe status."""
import array
import json
import subprocess

import pytest

import unvme_env  # noqa: F401 (first: the library and the environment)
import unvme
from unvme_env import BUILD

DEV = "emu://pyt?ns=mem:16M:512&ns=mem:8M:4096"


@pytest.fixture
def ctrl():
    with unvme.Controller(DEV) as c:
        yield c


def test_version_matches_the_tool():
    out = subprocess.run([str(BUILD / "tools/unvme/unvme"), "--version"], capture_output=True,
                         text=True).stdout
    assert f"library: libunvme {unvme.version()}" in out
    opts = unvme.build_options()
    assert "build: " + " ".join(f"{k}={v}" for k, v in opts.items()) in out


def test_identify_as_objects(ctrl):
    idc = ctrl.identify()
    assert idc.mn == "uNVMe Emulated Controller"
    # the same fields the tool prints for the same device
    tool = json.loads(subprocess.run([str(BUILD / "tools/unvme/unvme"), "id-ctrl", DEV, "-o",
                                      "json"], capture_output=True, text=True).stdout)
    assert idc.to_dict() == tool
    assert idc.sn == tool["sn"] and idc["nn"] == tool["nn"] >= 2
    assert len(idc.raw) == 4096 and idc.raw[24:24 + len(idc.mn)] == idc.mn.encode()
    with pytest.raises(AttributeError, match="no field 'nosuch'"):
        idc.nosuch
    # a named emulated device outlives its openers: a device process runs it, this process is
    # its client (docs/multi-process.md)
    assert ctrl.transport == "client" and ctrl.devid == DEV


def test_namespaces(ctrl):
    nss = ctrl.namespaces
    assert [n.nsid for n in nss] == [1, 2]
    assert [n.lba_size for n in nss] == [512, 4096]
    assert nss[0].nlbas == 16 * 2**20 // 512 and nss[1].size == 8 * 2**20
    ident = nss[1].identify()
    assert ident.nsze == nss[1].nlbas
    assert ident.lbaf[ident.flbas & 0xF]["lbads"] == 12
    with pytest.raises(unvme.HostError):
        ctrl.namespace(7)


def test_sync_io_into_any_buffer(ctrl):
    ns = ctrl.namespace(1)
    with ctrl.queue_pair() as qp:
        data = bytes(range(256)) * 4
        qp.write(ns, 10, data)
        assert bytes(qp.read(ns, 10, 2)) == data
        ba = bytearray(1024)
        assert qp.read(ns, 10, 2, ba) is ba and ba == data
        arr = array.array("I", [0] * 256)
        qp.read(ns, 10, 2, arr)
        assert arr.tobytes() == data
        mv = memoryview(bytearray(2048))
        qp.read(ns, 10, 2, mv[512:1536])
        assert mv[512:1536].tobytes() == data and mv[:512].tobytes() == bytes(512)
        dma = unvme.DmaBuffer(1024)
        qp.read(ns, 10, 2, dma)
        assert bytes(dma) == data
        qp.write(ns, 12, array.array("B", data))  # any buffer goes out too
        assert qp.compare(ns, 12, data) is True
        assert qp.compare(ns, 12, bytes(1024)) is False
        qp.write_zeroes(ns, 12, 2)
        assert bytes(qp.read(ns, 12, 2)) == bytes(1024)
        qp.deallocate(ns, 10, 2)
        qp.flush(ns)
        with pytest.raises(TypeError, match="read-only"):
            qp.read(ns, 0, 1, b"\0" * 512)
        with pytest.raises(ValueError, match="512 needed"):
            qp.read(ns, 0, 1, bytearray(100))
        with pytest.raises(ValueError, match="whole number of 512-byte blocks"):
            qp.write(ns, 0, b"abc")


def test_nvme_errors_are_named(ctrl):
    ns = ctrl.namespace(1)
    qp = ctrl.queue_pair()
    with pytest.raises(unvme.NvmeError) as e:
        qp.read(ns, ns.nlbas, 1)
    assert e.value.name == "LBA Out of Range" and (e.value.sct, e.value.sc) == (0, 0x80)
    assert e.value.status == 0x80 and "read: LBA Out of Range (SCT 0h, SC 80h)" == str(e.value)
    assert isinstance(e.value, unvme.UnvmeError)
    with pytest.raises(unvme.NvmeError) as e:
        ctrl.get_features(0x7F)
    assert e.value.name == "Invalid Field in Command"
    qp.close()
    with pytest.raises(unvme.HostError):
        qp.read(ns, 0, 1)


def test_host_errors_carry_errno_and_reason():
    with pytest.raises(unvme.HostError) as e:
        unvme.Controller("emu://bad?ns=kv:3Q")
    assert e.value.errno > 0 and "3Q" in str(e.value)
    assert isinstance(e.value, OSError)


def test_async_io(ctrl):
    ns = ctrl.namespace(2)
    with ctrl.queue_pair(depth=64) as qp:
        src = unvme.DmaBuffer(4096 * 16)
        for i in range(16):
            src[i * 4096] = i + 1
        qp.write(ns, 0, src)
        bufs = [unvme.DmaBuffer(4096) for _ in range(16)]
        done = []
        for i, b in enumerate(bufs):
            qp.read_async(ns, i, 1, b, lambda st, i=i: done.append((i, st)))
        assert qp.outstanding == 16
        while len(done) < 16:
            qp.poll()
        assert sorted(done) == [(i, 0) for i in range(16)]
        assert [b[0] for b in bufs] == list(range(1, 17))
        # a failed command reports its status to its callback
        st = []
        qp.read_async(ns, ns.nlbas, 1, bufs[0], st.append)
        while not st:
            qp.poll()
        assert st == [0x80]
        with pytest.raises(TypeError, match="DmaBuffer"):
            qp.read_async(ns, 0, 1, bytearray(4096))


def test_logs_and_features(ctrl):
    smart = ctrl.smart_log()
    assert smart.temperature > 0 and "percent_used" in smart and len(smart.raw) == 512
    fw = ctrl.fw_slot_log()
    assert "afi" in fw
    nq = ctrl.get_features(0x07)
    assert nq & 0xFFFF >= 1
    assert len(ctrl.get_log_page(0x02, 512)) == 512
