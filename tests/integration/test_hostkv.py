# SPDX-License-Identifier: BSD-3-Clause
"""The KV API on any SSD: the host KV engine (hostkv://) under the original SDK's tools, the
KV commands of unvme and the fio KV engine, on zoned and on conventional namespaces, its keys
outliving the process."""
import json
import shutil

import pytest

from test_kv_tools import Tool, check_phase, kv_perf_json


@pytest.fixture
def tool(env):
    return Tool(env)


def hkv(tmp, name="hk", kind="zns", size="256M", disk=True):
    """The engine on a zoned or conventional namespace, in a file or (disk False: for tests of
    the API rather than of persistence, where each durable store's sync would only cost time)
    in memory."""
    path = f":{tmp / (name + '.img')}" if disk else ""
    if kind == "zns":
        return f"hostkv://emu://{name}?ns=zns,zone=8M:{size}:4096{path}?op=25"
    # a conventional namespace is taken only when told to: format=1 (a new store each time)
    return f"hostkv://emu://{name}?ns={'file' if disk else 'mem'}:{size}:4096{path}?op=25&zone=8M&format=1"


@pytest.mark.parametrize("kind", ["zns", "conventional"])
@pytest.mark.parametrize("prog,extra", [("sdk_perf", []), ("sdk_perf_async", ["-q", "16"])])
def test_sdk_perf(tool, tmp_path, kind, prog, extra):
    # in a file where the calls are async: their stores share the engine's commits
    dev = hkv(tmp_path, kind=kind, disk=prog == "sdk_perf_async")
    j = json.loads(tool.ok(prog, "-n", 1500, "-d", dev, "-o", "json", *extra).stdout)
    assert j["verified"] is True
    for ph in j["phases"]:
        check_phase(ph, 1500)


def test_sdk_iterate(tool, tmp_path):
    j = json.loads(tool.ok("sdk_iterate", "-n", 2000, "-k", 20, "-v", 64, "-d",
                           hkv(tmp_path, disk=False), "-o", "json").stdout)
    it = j["iterate"]
    assert it["keys_seen"] == 2000 and it["missing"] == 0 and it["duplicates"] == 0


def test_kv_perf(tool, tmp_path):
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", 800, "-d",
                     hkv(tmp_path, kind="conventional", disk=False))
    assert j is not None


def test_keys_outlive_the_process(unvme, tmp_path):
    dev = hkv(tmp_path, "keep")
    value = tmp_path / "v.bin"
    value.write_bytes(bytes(range(256)) * 40)
    unvme.ok("kv-write", dev, "-k", "persist-me", "-v", value)
    unvme.ok("kv-write", dev, "-k", "gone-soon", "-s", 100)
    unvme.ok("kv-delete", dev, "-k", "gone-soon")
    out = tmp_path / "out.bin"
    unvme.ok("kv-read", dev, "-k", "persist-me", "-s", 16384, "-v", out)
    assert out.read_bytes() == value.read_bytes()
    r = unvme.run("kv-exist", dev, "-k", "gone-soon")
    assert r.rc == 1 and "NOT_EXIST" in r.err, r
    # the namespace reports itself as a KV SSD would
    doc = unvme.ok("list-ns", dev, "--csi", 1, "-o", "json").json()
    assert doc["nsid_list"] == [{"nsid": 1}]
    # bad options name what is wrong
    r = unvme.run("kv-exist", dev.replace("op=25", "op=25&gc=fifo"), "-k", "x")
    assert r.rc == 3, r


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_kv_engine(tmp_path, env):
    from test_fio_engine import Fio, esc
    fio = Fio(dict(env, UNVME_QUIET="1"), tmp_path)
    dev = hkv(tmp_path, "fio")
    cfg = fio.config("kv.json", [{"dev_id": dev, "core_mask": "1", "queue_depth": 64}])
    # every store is durable when fio sees it complete (a sync of the file per batch): 4 MiB
    args = [f"--filename={esc(dev)}", f"--json_path={cfg}", "--thread=1", "--size=4M",
            "--iodepth=16", "--bs=4k", "--verify=crc32c", "--randrepeat=1"]
    fio.ok("--name=w", *args, "--rw=randwrite", "--do_verify=0")
    fio.ok("--name=v", *args, "--rw=randwrite", "--verify_only=1")
