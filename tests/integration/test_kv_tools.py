# SPDX-License-Identifier: BSD-3-Clause
"""The original SDK's KV tools rebuilt on our SDK: sdk_perf(_async), sdk_iterate(_async) and
kv_perf, driven as a user would. Runs are small; speed is never asserted."""
import json
import re
import subprocess

import pytest

from conftest import build_dir

KV_DIR = build_dir() / "tools" / "kv"
MEM_KV = "emu://kvt?ns=kv:64M"
QOS_KEYS = ["min", "max", "mean"] + [f"p{p}" for p in (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90,
                                                         95, 99, 99.5, 99.9, 99.95, 99.99)]
FIGURES = ["start", "end", "elapsed_s", "latency_per_op_us", "ops_per_sec", "throughput_mb_s",
           "qos_us", "operations", "errors", "verify_errors"]


class Tool:
    def __init__(self, env):
        # the SDK's own reason for a failed start is part of what is checked: not silenced
        self.env = {k: v for k, v in env.items() if k != "UNVME_QUIET"}

    def run(self, prog, *args, timeout=300):
        path = KV_DIR / prog
        assert path.exists(), f"{path} is not built (set UNVME_BUILD to the build directory)"
        args = [str(a) for a in args]
        p = subprocess.run([str(path), *args], env=self.env, capture_output=True, text=True,
                           timeout=timeout)
        assert p.returncode >= 0, f"{prog} crashed with signal {-p.returncode}: {p.stderr}"
        assert p.returncode in (0, 1, 2, 3), f"undocumented exit code {p.returncode}"
        return p

    def ok(self, prog, *args, **kw):
        p = self.run(prog, *args, **kw)
        assert p.returncode == 0, f"{prog} {args}: rc={p.returncode}\n{p.stdout}\n{p.stderr}"
        return p


@pytest.fixture
def tool(env):
    return Tool(env)


def check_phase(ph, n):
    for k in FIGURES:
        assert k in ph, f"{k} missing from {ph}"
    assert ph["operations"] == n and ph["errors"] == 0 and ph["verify_errors"] == 0
    q = ph["qos_us"]
    assert sorted(q) == sorted(QOS_KEYS)
    pct = [q[f"p{p}"] for p in (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9,
                                99.95, 99.99)]
    assert pct == sorted(pct)
    assert q["min"] <= q["p1"] and q["p99.99"] <= q["max"] * 1.02 + 0.01
    assert ph["elapsed_s"] >= 0 and ph["ops_per_sec"] >= 0


@pytest.mark.parametrize("prog,extra", [("sdk_perf", []), ("sdk_perf_async", ["-q", "16"])])
def test_sdk_perf_json(tool, prog, extra):
    j = json.loads(tool.ok(prog, "-n", 2000, "-d", MEM_KV, "-o", "json", *extra).stdout)
    assert j["program"] == prog and j["pairs"] == 2000 and j["key_size"] == 16
    assert j["value_size"] == 4096 and j["verified"] is True
    assert [p["phase"] for p in j["phases"]] == ["store", "retrieve", "delete"]
    for ph in j["phases"]:
        check_phase(ph, 2000)
    assert j["phases"][1]["bytes"] == 2000 * (16 + 4096)
    if prog.endswith("async"):
        assert j["mode"] == "async" and j["queue_depth"] == 16


@pytest.mark.parametrize("prog", ["sdk_perf", "sdk_perf_async"])
def test_sdk_perf_text(tool, prog):
    out = tool.ok(prog, "-n", 2000, "-k", 20, "-v", 1000, "-d", MEM_KV).stdout
    for phase in ("store", "retrieve", "delete"):
        assert re.search(rf"^{phase}: 2000 operations$", out, re.M), out
    for label in ("start time:", "end time:", "elapsed:", "latency per operation:",
                  "operations per second:", "throughput:", "QoS", "min", "max", "mean",
                  "1%", "50%", "99.5%", "99.95%", "99.99%"):
        assert label in out, label
    assert out.count("verify errors: 0") == 3
    assert out.rstrip().endswith("result: PASS")


@pytest.mark.parametrize("prog", ["sdk_iterate", "sdk_iterate_async"])
def test_sdk_iterate_sees_every_key_once(tool, prog):
    # 3000 keys of 20 bytes do not fit one 32 KiB buffer: several reads, the last one EOF
    j = json.loads(tool.ok(prog, "-n", 3000, "-k", 20, "-v", 64, "-d", MEM_KV,
                           "-o", "json").stdout)
    it = j["iterate"]
    assert it["keys_seen"] == 3000 and it["missing"] == 0 and it["duplicates"] == 0
    assert it["foreign"] == 0 and it["reads"] >= 2
    assert j["iterate_info_before"] == [] and j["iterate_info_after"] == []
    opened = j["iterate_info_open"]
    assert len(opened) == 1 and opened[0]["handle"] == it["handle"] and opened[0]["type"] == "key"
    assert [p["phase"] for p in j["phases"]] == ["store", "iterate_read", "delete"]
    check_phase(j["phases"][0], 3000)
    assert j["verified"] is True


def test_sdk_iterate_text_and_prefix(tool):
    out = tool.ok("sdk_iterate", "-n", 500, "-p", "0x41424300", "-b", "0xffffff00",
                  "-d", MEM_KV).stdout
    assert "iterate info after open:" in out and "0x41424300  0xffffff00" in out
    assert "500 of 500 keys seen, 0 missing, 0 seen more than once" in out


def test_sdk_perf_bad_options(tool):
    for args, opt in ((["-n", "x"], "-n"), (["-k", "3"], "-k"), (["-k", "256"], "-k"),
                      (["-o", "xml"], "-o"), (["-v", "3000000"], "-v")):
        p = tool.run("sdk_perf", *args)
        assert p.returncode == 2 and opt in p.stderr, (args, p.stderr)
    p = tool.run("sdk_perf", "-Z")
    assert p.returncode == 2 and "-Z" in p.stderr
    p = tool.run("sdk_perf_async", "-q", "0")
    assert p.returncode == 2 and "-q" in p.stderr
    p = tool.run("sdk_perf", "-q", "4")  # only the async program keeps a queue depth
    assert p.returncode == 2
    p = tool.run("sdk_perf", "-k", 4, "-n", 20)
    assert p.returncode == 2 and "too small" in p.stderr
    assert tool.ok("sdk_perf", "-h").stdout.startswith("usage: sdk_perf")


def test_sdk_perf_bad_device_and_config(tool, tmp_path):
    p = tool.run("sdk_perf", "-n", 10, "-d", "emu://bad?ns=kv:3Q")
    assert p.returncode == 3, p.stderr
    assert "3Q" in p.stderr and "cannot initialize the SDK" in p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"device_description": [{"dev_id": "emu://j?ns=kv:64M"}], ')
    p = tool.run("sdk_perf", "-n", 10, "-j", bad)
    assert p.returncode == 3 and str(bad) in p.stderr


def test_sdk_perf_json_config(tool, tmp_path):
    cfg = tmp_path / "kv.json"
    cfg.write_text(json.dumps({"device_description": [
        {"dev_id": f"emu://cfg?ns=kv:64M::{tmp_path / 'kv.img'}", "core_mask": "1",
         "sync_mask": "1", "queue_depth": 64}]}))
    j = json.loads(tool.ok("sdk_perf", "-n", 300, "-j", cfg, "-o", "json").stdout)
    assert j["verified"] is True and j["device"] == str(cfg)


def kv_perf_json(tool, *args):
    p = tool.ok("kv_perf", *args, "-J")
    return json.loads(p.stdout)


@pytest.mark.parametrize("dist", [0, 1, 3])
def test_kv_perf_write_read_verify_delete(tool, dist):
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", 1000, "-p", dist, "-d", MEM_KV)
    assert j["result"] == "PASS" and j["distribution"] == dist
    phases = j["tests"][0]
    assert [p["phase"] for p in phases] == ["store", "retrieve", "delete"]
    for p in phases:
        assert p["devices"][0]["device"] == MEM_KV
        check_phase(p["devices"][0], 1000)
        check_phase(p["total"], 1000)
        assert p["devices"][0]["not_found"] == 0


def test_kv_perf_random_blend_and_tests(tool):
    j = kv_perf_json(tool, "-z", "-w", "-r", "-x", "-b", "-e", "-n", 800, "-t", 2, "-p", 2,
                     "-g", 42, "-k", 0x5a, "-o", 512, "-d", MEM_KV)
    assert j["result"] == "PASS" and len(j["tests"]) == 2
    for test in j["tests"]:
        assert [p["phase"] for p in test] == ["store", "retrieve", "blend", "delete"]
        for p in test:
            assert p["total"]["errors"] == 0 and p["total"]["verify_errors"] == 0
        # random keys repeat: some deletes find their key already gone
        assert test[3]["total"]["not_found"] > 0


def test_kv_perf_db_bench_order(tool):
    """-p 5: every phase draws its own uniform keys, as db_bench's fillrandom, readrandom and
    deleterandom do: about 1/e of the reads after one fill miss, and misses are no error."""
    n = 4000
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", n, "-t", 2, "-p", 5, "-d", MEM_KV)
    assert j["result"] == "PASS" and j["distribution"] == 5
    for test in j["tests"]:
        store, retrieve, delete = (p["total"] for p in test)
        assert store["operations"] == retrieve["operations"] == delete["operations"] == n
        assert store["not_found"] == 0 and retrieve["errors"] == 0 and delete["errors"] == 0
        assert retrieve["verify_errors"] == 0
    # the first round's reads find the keys its fill happened to draw: 1 - 1/e of them
    miss = j["tests"][0][1]["total"]["not_found"] / n
    assert 0.30 < miss < 0.45, miss
    # each phase draws anew: the second round's reads are not the first round's
    assert j["tests"][1][1]["total"]["not_found"] != j["tests"][0][1]["total"]["not_found"]


def test_kv_perf_range_random_and_value_file(tool, tmp_path):
    f = tmp_path / "value.bin"
    f.write_bytes(bytes(range(256)) * 3)
    j = kv_perf_json(tool, "-w", "-r", "-x", "-n", 500, "-p", 4, "-y", 50, "-f", f,
                     "-v", 2048, "-d", MEM_KV)
    assert j["result"] == "PASS"


def test_kv_perf_lba(tool):
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", 2000, "-m", "lba",
                     "-d", "emu://lba?ns=mem:64M:512")
    assert j["ssd_type"] == "lba" and j["result"] == "PASS"
    for p in j["tests"][0]:
        check_phase(p["total"], 2000)


def test_kv_perf_lba_capacity_and_alignment(tool):
    p = tool.run("kv_perf", "-w", "-n", 100000, "-m", "lba", "-d", "emu://lba?ns=mem:64M:512")
    assert p.returncode == 2 and "do not fit" in p.stderr
    p = tool.run("kv_perf", "-w", "-n", 10, "-v", 1000, "-m", "lba",
                 "-d", "emu://lba?ns=mem:64M:512")
    assert p.returncode == 2 and "sector size" in p.stderr


def test_kv_perf_several_devices(tool):
    a, b = "emu://kva?ns=kv:64M", "emu://kvb?ns=kv:64M"
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", 1000, "-d", a, b, "-c", "1", "1",
                     "-s", "1", "0", "-q", "2", "2", "-a", "8", "-i")
    assert [d["device"] for d in j["devices"]] == [a, b]
    assert [d["mode"] for d in j["devices"]] == ["sync", "async"]
    for p in j["tests"][0]:
        assert [d["device"] for d in p["devices"]] == [a, b]
        assert p["total"]["operations"] == 2000
        assert all(d["errors"] == 0 and d["verify_errors"] == 0 for d in p["devices"])
        assert all("log_reads" in d for d in p["devices"])


def test_kv_perf_text_report(tool):
    p = tool.ok("kv_perf", "-w", "-r", "-x", "-n", 300, "-d", MEM_KV)
    assert f"test 1 store on {MEM_KV}: 300 operations" in p.stdout
    assert "test 1 retrieve total (1 device): 300 operations" in p.stdout
    assert "latency per operation:" in p.stdout and "99.99%" in p.stdout
    assert p.stdout.rstrip().endswith("result: PASS")


def test_kv_perf_read_of_missing_keys_fails(tool):
    p = tool.run("kv_perf", "-r", "-n", 10, "-d", MEM_KV)
    assert p.returncode == 1
    assert "KV_ERR_NOT_EXIST_KEY (0x10)" in p.stderr


@pytest.mark.parametrize("args,opt", [
    (["-w", "-n", "abc"], "-n"), (["-w", "-p", "6"], "-p"), (["-w", "-m", "zns"], "-m"),
    (["-w", "-c", "xyz"], "-c"), (["-w", "-a", "0"], "-a"), (["-w", "-k", "300"], "-k"),
    (["-w", "-o", "100"], "-o"), (["-w", "-Q"], "-Q"), (["-w", "-n"], "-n"),
    (["-w", "-d", "A", "-c", "1", "2"], "-c"), (["-x", "-w"], "-x"),
])
def test_kv_perf_bad_options(tool, args, opt):
    p = tool.run("kv_perf", *args)
    assert p.returncode == 2 and opt in p.stderr, (args, p.stderr)


def test_kv_perf_nothing_to_do_and_help(tool):
    p = tool.run("kv_perf")
    assert p.returncode == 2 and "nothing to do" in p.stderr
    out = tool.ok("kv_perf", "-h").stdout
    for letter in "wrxebzntvpjilumcsqaogkfyLdh":
        assert f"-{letter} " in out, letter


def test_kv_perf_bad_device(tool):
    p = tool.run("kv_perf", "-w", "-n", 10, "-d", "emu://nope?ns=kv:64M&qeues=8")
    assert p.returncode == 3
    assert "qeues" in p.stderr and "cannot initialize the SDK" in p.stderr


def test_kv_perf_blend_then_delete(tool):
    # the blend deletes keys at random: the delete phase after it must not count them as errors
    j = kv_perf_json(tool, "-w", "-b", "-e", "-n", 600, "-d", MEM_KV)
    assert j["result"] == "PASS"
    blend, delete = j["tests"][0][1], j["tests"][0][2]
    assert blend["phase"] == "blend" and blend["total"]["errors"] == 0
    assert delete["total"]["errors"] == 0 and delete["total"]["not_found"] > 0


def test_kv_perf_json_config_lba_async(tool, tmp_path):
    cfg = tmp_path / "lba.json"
    cfg.write_text(json.dumps({"ssd_type": "lba", "device_description": {
        "dev_id": "emu://jl?ns=mem:64M:512", "core_mask": "1", "sync_mask": "0",
        "cq_thread_mask": "2", "queue_depth": 16}}))
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", 1000, "-j", cfg)
    assert j["ssd_type"] == "lba" and j["result"] == "PASS"
    assert j["devices"] == [{"device": f"{cfg} device 0", "mode": "async", "queue_depth": 15}]
    p = tool.run("kv_perf", "-w", "-j", cfg, "-d", MEM_KV)
    assert p.returncode == 2 and "-j" in p.stderr
    p = tool.run("kv_perf", "-w", "-r", "-o", 512, "-m", "lba", "-d", "emu://l?ns=mem:8M:512")
    assert p.returncode == 2 and "-o" in p.stderr
