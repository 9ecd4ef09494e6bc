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

    def run(self, prog, *args, timeout=300, cwd=None, devices=None):
        path = KV_DIR / prog
        assert path.exists(), f"{path} is not built (set UNVME_BUILD to the build directory)"
        args = [str(a) for a in args]
        env = dict(self.env)
        if devices:
            env["UNVME_DEVICES"] = devices
        p = subprocess.run([str(path), *args], env=env, capture_output=True, text=True,
                           timeout=timeout, cwd=cwd)
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


def kv_perf_json(tool, *args, **kw):
    p = tool.ok("kv_perf", *args, "-J", **kw)
    return json.loads(p.stdout)


@pytest.mark.parametrize("dist", [0, 1, 4])
def test_kv_perf_write_read_verify_delete(tool, dist):
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", 1000, "-p", dist, "-d", MEM_KV)
    assert j["result"] == "PASS" and j["distribution"] == dist and j["calls"] == "driver"
    phases = j["tests"][0]
    assert [p["phase"] for p in phases] == ["store", "retrieve", "delete"]
    for p in phases:
        assert p["devices"][0]["device"] == MEM_KV
        check_phase(p["devices"][0], 1000)
        check_phase(p["total"], 1000)
        assert p["devices"][0]["not_found"] == 0


def test_kv_perf_sdk_level_calls(tool):
    j = kv_perf_json(tool, "-x", "-e", "-L", "-n", 500, "-d", MEM_KV)
    assert j["result"] == "PASS" and j["calls"] == "sdk"
    assert [p["phase"] for p in j["tests"][0]] == ["store", "retrieve", "delete"]


def test_kv_perf_blend_of_counts_and_tests(tool):
    """-n W R D with -b: the blend is W stores, R retrieves and D deletes shuffled together."""
    j = kv_perf_json(tool, "-z", "-w", "-r", "-x", "-b", "-e", "-n", 800, 400, 200, "-t", 2,
                     "-p", 2, 4, 0, "-o", 0, 100, 5000, "-g", 42, "-k", "DEADBEEF", "-O", 512,
                     "-d", MEM_KV)
    assert j["result"] == "PASS" and len(j["tests"]) == 2
    for test in j["tests"]:
        assert [p["phase"] for p in test] == ["store", "retrieve", "blend", "delete"]
        for p in test:
            assert p["total"]["errors"] == 0 and p["total"]["verify_errors"] == 0
        assert test[2]["total"]["operations"] == 1400
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
    for rng in ("50-99", "50"):
        j = kv_perf_json(tool, "-w", "-r", "-x", "-n", 500, "-p", 3, "-y", rng, "-F", f,
                         "-v", 2048, "-d", MEM_KV)
        assert j["result"] == "PASS"


def test_kv_perf_several_value_sizes(tool):
    """-v 4096 2048: key i gets the (i mod 2)-th size, as the original chose them."""
    j = kv_perf_json(tool, "-x", "-n", 400, "-v", 4096, 2048, "-d", MEM_KV)
    assert j["result"] == "PASS" and j["value_sizes"] == [4096, 2048]
    store = j["tests"][0][0]["total"]
    assert store["bytes"] == 400 * 16 + 200 * 4096 + 200 * 2048
    out = tool.ok("kv_perf", "-x", "-n", 400, "-v", 4096, 2048, "-d", MEM_KV).stdout
    assert "[WRITE] operations: 200, Key size: 16, Value size: 4096" in out
    assert "[WRITE] operations: 200, Key size: 16, Value size: 2048" in out
    assert "[READ] Total Value Size: 1228800" in out and "Miscompare count: 0" in out


def test_kv_perf_lba(tool):
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", 2000, "-m", "lba",
                     "-d", "emu://lba?ns=mem:64M:512")
    assert j["ssd_type"] == "lba" and j["result"] == "PASS"
    for p in j["tests"][0]:
        check_phase(p["total"], 2000)
    # the original's numbers: 0 block SSD, 1 KV SSD
    j = kv_perf_json(tool, "-x", "-n", 100, "-m", 0, "-d", "emu://lba?ns=mem:64M:512")
    assert j["ssd_type"] == "lba" and j["result"] == "PASS"
    j = kv_perf_json(tool, "-x", "-n", 100, "-m", 1, "-d", MEM_KV)
    assert j["ssd_type"] == "kv" and j["result"] == "PASS"


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
    assert j["devices"][1]["queue_depth"] == 8
    for p in j["tests"][0]:
        assert [d["device"] for d in p["devices"]] == [a, b]
        assert p["total"]["operations"] == 2000
        assert all(d["errors"] == 0 and d["verify_errors"] == 0 for d in p["devices"])
        assert all("log_reads" in d for d in p["devices"])


def test_kv_perf_a_thread_per_core(tool):
    """-d A B -c F F0: an I/O thread per core of each mask, each with its keys; cores this
    machine lacks get their queues and unpinned threads."""
    a, b = "emu://kvc?ns=kv:64M", "emu://kvd?ns=kv:64M"
    j = kv_perf_json(tool, "-x", "-e", "-n", 50, "-d", a, b, "-c", "F", "F0")
    assert j["result"] == "PASS"
    assert [[t["core"] for t in d["threads"]] for d in j["devices"]] == [[0, 1, 2, 3],
                                                                        [4, 5, 6, 7]]
    for p in j["tests"][0]:
        assert [d["operations"] for d in p["devices"]] == [200, 200]
        assert p["total"]["not_found"] == 0


def test_kv_perf_text_report(tool):
    p = tool.ok("kv_perf", "-w", "-r", "-x", "-n", 300, "-d", MEM_KV)
    assert f"test 1 store on {MEM_KV}: 300 operations" in p.stdout
    assert "test 1 retrieve total (1 device): 300 operations" in p.stdout
    assert "latency per operation:" in p.stdout and "99.99%" in p.stdout
    # the original's lines, which its scripts parse
    assert "[WRITE] Total Key Size: 4800" in p.stdout
    assert re.search(r"^OPS/sec: [\d.]+, Throughput: [\d.]+ KB$", p.stdout, re.M)
    assert re.search(r"^Test time: \d+ usec$", p.stdout, re.M)
    assert re.search(rf"^{re.escape(MEM_KV)} Device's Read OPS/sec: [\d.]+$", p.stdout, re.M)
    assert p.stdout.rstrip().endswith("result: PASS")


def test_kv_perf_read_of_missing_keys_fails(tool):
    p = tool.run("kv_perf", "-r", "-n", 10, "-d", MEM_KV)
    assert p.returncode == 1
    assert "KV_ERR_NOT_EXIST_KEY (0x10)" in p.stderr


@pytest.mark.parametrize("args,opt", [
    (["-w", "-n", "abc"], "-n"), (["-w", "-p", "6"], "-p"), (["-w", "-m", "zns"], "-m"),
    (["-w", "-m", "2"], "-m"), (["-w", "-c", "xyz"], "-c"), (["-w", "-a", "0"], "-a"),
    (["-w", "-K", "300"], "-K"), (["-w", "-O", "100"], "-O"), (["-w", "-Q"], "-Q"),
    (["-w", "-n"], "-n"), (["-w", "-d", "A", "-c", "1", "2"], "-c"),
    (["-w", "-v", *"123456789"], "-v"), (["-w", "-y", "9-3"], "-y"),
    (["-b", "-n", "1", "2", "3", "4"], "-n"), (["-w", "--num_keyz", "3"], "--num_keyz"),
])
def test_kv_perf_bad_options(tool, args, opt):
    p = tool.run("kv_perf", *args)
    assert p.returncode == 2 and opt in p.stderr, (args, p.stderr)


def test_kv_perf_long_names(tool):
    j = kv_perf_json(tool, "--write", "--read", "--verify", "--num_keys", 100, "--value_size=512",
                     "--device", MEM_KV, "--workload", 4)
    assert j["result"] == "PASS" and j["value_sizes"] == [512] and j["distribution"] == 4


def test_kv_perf_nothing_to_do_and_help(tool):
    p = tool.run("kv_perf")
    assert p.returncode == 2 and "nothing to do" in p.stderr
    out = tool.ok("kv_perf", "-h").stdout
    for letter in "wrxebzntvpjilumcsqaogkfyLdhKOFJ":
        assert f"-{letter}" in out, letter


def test_kv_perf_bad_device(tool):
    p = tool.run("kv_perf", "-w", "-n", 10, "-d", "emu://nope?ns=kv:64M&qeues=8")
    assert p.returncode == 3
    assert "qeues" in p.stderr and "cannot initialize the SDK" in p.stderr


def test_kv_perf_blend_then_delete(tool):
    # the blend deletes keys at random: the delete phase after it must not count them as errors
    j = kv_perf_json(tool, "-w", "-b", "-e", "-n", 600, 300, 300, "-p", 0, 2, 2, "-d", MEM_KV)
    assert j["result"] == "PASS"
    blend, delete = j["tests"][0][1], j["tests"][0][2]
    assert blend["phase"] == "blend" and blend["total"]["errors"] == 0
    assert delete["total"]["errors"] == 0 and delete["total"]["not_found"] > 0


def test_kv_perf_json_config_and_overrides(tool, tmp_path):
    cfg = tmp_path / "lba.json"
    cfg.write_text(json.dumps({"ssd_type": "lba", "device_description": {
        "dev_id": "emu://jl?ns=mem:64M:512", "core_mask": "1", "sync_mask": "0",
        "cq_thread_mask": "2", "queue_depth": 16}}))
    j = kv_perf_json(tool, "-w", "-r", "-x", "-e", "-n", 1000, "-j", cfg)
    assert j["ssd_type"] == "lba" and j["result"] == "PASS"
    assert j["devices"] == [{"device": "emu://jl?ns=mem:64M:512", "mode": "async",
                             "queue_depth": 15, "threads": [{"core": 0, "mode": "async"}]}]
    # the command line over the file: -s 0 -> sync 1, another device, its type
    j = kv_perf_json(tool, "-x", "-n", 200, "-j", cfg, "-s", 1)
    assert j["devices"][0]["mode"] == "sync" and j["result"] == "PASS"
    j = kv_perf_json(tool, "-x", "-n", 200, "-j", cfg, "-d", MEM_KV, "-m", "kv", "-a", 4)
    assert j["devices"][0]["device"] == MEM_KV and j["ssd_type"] == "kv"
    assert j["devices"][0]["queue_depth"] == 4 and j["result"] == "PASS"
    p = tool.run("kv_perf", "-w", "-j", cfg, "-c", 1, 2)
    assert p.returncode == 2 and "name the others with -d" in p.stderr
    p = tool.run("kv_perf", "-w", "-r", "-O", 512, "-m", "lba", "-d", "emu://l?ns=mem:8M:512")
    assert p.returncode == 2 and "-O" in p.stderr


def test_kv_perf_dump_of_retrieved_pairs(tool, tmp_path):
    out = tmp_path / "pairs.txt"
    tool.ok("kv_perf", "-w", "-r", "-n", 3, "-v", 8, "-k", "abcd", "-f", out, "-d", MEM_KV)
    text = out.read_bytes()
    assert text.count(b"KEY:\n") == 3 and text.count(b"VALUE:\nabcdabcd\n=========\n") == 3


# ---- the original's command lines: its scripts (io/kv_perf_scripts/*.py), its test script
# (script/test.sh: kv_perf -w, -r, -e, -b, -i with the default configuration), run on a
# file-backed KV namespace aliased to their 0000:02:00.0 ----

# the original's io/kv_perf_scripts/kv_perf_default_config.json
from test_kv_original_idioms import KV_PERF_DEFAULT_CONFIG as ORIG_DEFAULT_CONFIG  # noqa: E402


@pytest.fixture
def orig_dir(tmp_path):
    """The original's io/ directory: kv_perf_scripts/kv_perf_default_config.json, and the
    alias of its 0000:02:00.0 (a file-backed KV namespace: pairs outlive each run)."""
    d = tmp_path / "io"
    (d / "kv_perf_scripts").mkdir(parents=True)
    (d / "kv_perf_scripts" / "kv_perf_default_config.json").write_text(
        json.dumps(ORIG_DEFAULT_CONFIG))
    return d, f"0000:02:00.0=emu://orig?ns=kv:256M::{tmp_path / 'kv.img'}"


def test_original_test_script_kv_perf(tool, orig_dir):
    cwd, alias = orig_dir
    for flags, phases in ((["-w"], ["Write"]), (["-r"], ["Read"]), (["-e"], ["Delete"]),
                          (["-b"], ["Blend"])):
        p = tool.run("kv_perf", *flags, cwd=cwd, devices=alias)
        assert p.returncode == 0, (flags, p.stdout[-2000:], p.stderr)
        assert "configuration ./kv_perf_scripts/kv_perf_default_config.json" in p.stdout
        for ph in phases:
            m = re.search(rf"^0000:02:00.0 Device's {ph} OPS/sec: ([\d.]+)$", p.stdout, re.M)
            assert m and float(m.group(1)) > 0, (ph, p.stdout[-1500:])
    # -r in its own process found the 1000 keys -w stored: the namespace is a file
    p = tool.run("kv_perf", "-i", cwd=cwd, devices=alias)
    assert p.returncode == 0 and "log page 0xc0 of 0000:02:00.0" in p.stdout, p.stderr


def test_original_scripts_kv_perf_command_lines(tool, orig_dir):
    cwd, alias = orig_dir
    scripts = cwd / "kv_perf_scripts"
    cfg = "./kv_perf_default_config.json"
    # kv_perf_async_multiq.py, with fewer keys
    p = tool.run("kv_perf", "-d", "0000:02:00.0", "-m", 1, "-c", "0x3", "-s", 0, "-n", 500, "-w",
                 "-r", "-e", "-t", 1, "-p", 0, "-v", 4096, "-j", cfg, cwd=scripts, devices=alias)
    assert p.returncode == 0, p.stderr
    assert "device 0: 0000:02:00.0: core 0 async core 1 async" in p.stdout
    # kv_perf_format.py and kv_perf_basic_value_size_test.py: format, then -x runs whose
    # output the script takes apart by ':' as it does
    p = tool.run("kv_perf", "-z", "-d", "0000:02:00.0", "-m", 1, "-j", cfg, cwd=scripts,
                 devices=alias)
    assert p.returncode == 0 and "Successfully formatted the device: 0000:02:00.0" in p.stdout
    for extra in ([], ["-e"]):
        p = tool.run("kv_perf", "-x", *extra, "-d", "0000:02:00.0", "-s", 0, "-a", 128, "-v",
                     4160, "-n", 300, "-j", cfg, cwd=scripts, devices=alias)
        assert p.returncode == 0, p.stderr
        found = {}
        for line in p.stdout.split("\n"):
            parts = line.split(":")
            if len(parts) == 4 and parts[0] == "0000":
                found[parts[2]] = float(parts[3])
            elif len(parts) == 2 and parts[0] == "Miscompare count":
                found["miscompare"] = int(parts[1])
        assert found["00.0 Device's Write OPS/sec"] > 0 and found["miscompare"] == 0
        assert found["00.0 Device's Read OPS/sec"] > 0
        assert (found["00.0 Device's Delete OPS/sec"] > 0) == bool(extra)
    # kv_perf_make_sustain2.py: several value sizes, key offsets, then blends of put and del
    sizes = ["8192", "5120", "4096", "3072"]
    p = tool.run("kv_perf", "-w", "-d", "0000:02:00.0", "-s", 0, "-a", 128, "-v", *sizes,
                 "-n", 400, "-p", 0, "-o", 400, "-j", cfg, cwd=scripts, devices=alias)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("\n")
    assert "[WRITE] Total Key Size: 6400" in lines
    assert "[WRITE] Total Value Size: %d" % (100 * sum(map(int, sizes))) in lines
    assert any(l.startswith("Test time: ") and int(l.split(":")[-1].split()[0]) > 0
               for l in lines)
    p = tool.run("kv_perf", "-b", "-d", "0000:02:00.0", "-s", 0, "-a", 128, "-v", *sizes,
                 "-n", 200, 0, 200, "-p", 4, 0, 4, "-o", 800, 0, 400, "-g", 1, "-j", cfg,
                 cwd=scripts, devices=alias)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("\n")
    assert "[WRITE]:[READ]:[DEL] = 200:0:200" in lines
    assert any(len(l.split(":")) == 3 and l.startswith("OPS/sec: ") for l in lines)
    assert "[DEL] Total Key Size: 3200" in lines


# ---- sdk_perf and sdk_perf_async: the original's defaults and shipped configurations ----

# io/kv_sdk_sync_config.json, io/kv_sdk_async_config.json (v20.05: a block SSD at
# 0000:0a:00.0; before it a KV SSD at 0000:02:00.0), io/kv_sdk_simple_config.json
ORIG_SDK_CONFIGS = {
    "kv_sdk_sync_config.json": {
        "cache": "off", "cache_algorithm": "radix", "cache_reclaim_policy": "lru",
        "slab_size": 44, "slab_alloc_policy": "huge", "ssd_type": "kv", "log_level": 0,
        "log_file": "/tmp/kvsdk.log", "device_description": [
            {"dev_id": "0000:02:00.0", "core_mask": 1, "sync_mask": 1, "cq_thread_mask": 2,
             "queue_depth": 64}]},
    "kv_sdk_async_config.json": {
        "cache": "off", "cache_algorithm": "radix", "cache_reclaim_policy": "lru",
        "slab_size": 44, "slab_alloc_policy": "huge", "submit_retry_interval": 1,
        "ssd_type": "lba", "log_level": 0, "log_file": "/tmp/kvsdk.log", "device_description": [
            {"dev_id": "0000:0a:00.0", "core_mask": 1, "sync_mask": 0, "cq_thread_mask": 2,
             "queue_depth": 128}]},
    "kv_sdk_async_config_kv.json": {
        "cache": "off", "cache_algorithm": "radix", "cache_reclaim_policy": "lru",
        "slab_size": 24, "polling_interval": 1, "slab_alloc_policy": "huge", "ssd_type": "kv",
        "log_level": 0, "log_file": "/tmp/kvsdk.log", "device_description": [
            {"dev_id": "0000:02:00.0", "core_mask": 1, "sync_mask": 0, "cq_thread_mask": 2,
             "queue_depth": 128}]},
    "kv_sdk_simple_config.json": {"device_description": [{"dev_id": "0000:02:00.0"}]},
}
# the PCI addresses they name, as emulated devices (docs/devices.md, aliases)
ORIG_ALIASES = "0000:02:00.0=emu://kv?ns=kv:1G;0000:0a:00.0=emu://lba?ns=mem:2G"


@pytest.fixture
def io_dir(tmp_path):
    d = tmp_path / "io"
    d.mkdir()
    for name, cfg in ORIG_SDK_CONFIGS.items():
        (d / name).write_text(json.dumps(cfg))
    return d


def test_sdk_perf_without_d_or_j_reads_the_originals_files(tool, io_dir):
    """As the original: sdk_perf reads ./kv_sdk_sync_config.json and sdk_perf_async
    ./kv_sdk_async_config.json (v20.05's: a block SSD, 0000:0a:00.0; every store used to
    fail with KV_ERR_DD_INVALID_PARAM, its KV keys taken for LBAs out of range)."""
    # fewer pairs than the original's 100000 (seconds on a loaded machine): neither -d nor -j,
    # so the configuration is still the one the program finds
    for prog, args, n, cfg, ssd in (
            ("sdk_perf", ["-n", 5000], 5000, "kv_sdk_sync_config.json", "kv"),
            ("sdk_perf_async", ["-n", 5000], 5000, "kv_sdk_async_config.json", "lba")):
        p = tool.run(prog, *args, cwd=io_dir, devices=ORIG_ALIASES)
        assert p.returncode == 0, (prog, p.stderr)
        assert p.stdout.rstrip().endswith("result: PASS")
        assert f"on ./{cfg}" in p.stdout
        j = json.loads(tool.ok(prog, *args, "-o", "json", "-n", 500, cwd=io_dir,
                               devices=ORIG_ALIASES).stdout)
        assert j["device"] == f"./{cfg}" and j["ssd_type"] == ssd and j["verified"] is True
        for ph in j["phases"]:
            check_phase(ph, 500)
        assert f"{n} pairs" in p.stdout
    assert j["queue_depth"] == 127 and j["key_size"] == 8  # the file's queue, LBA keys


def test_sdk_perf_every_shipped_configuration(tool, io_dir, tmp_path):
    for prog in ("sdk_perf", "sdk_perf_async"):
        for name in ORIG_SDK_CONFIGS:
            p = tool.run(prog, "-n", 500, "-j", name, "-o", "json", cwd=io_dir,
                         devices=ORIG_ALIASES)
            assert p.returncode == 0, (prog, name, p.stderr)
            assert json.loads(p.stdout)["verified"] is True
    for prog in ("sdk_iterate", "sdk_iterate_async"):
        for name in ("kv_sdk_sync_config.json", "kv_sdk_async_config_kv.json"):
            tool.ok(prog, "-n", 500, "-j", name, cwd=io_dir, devices=ORIG_ALIASES)
        p = tool.run(prog, "-n", 10, "-j", "kv_sdk_async_config.json", cwd=io_dir,
                     devices=ORIG_ALIASES)
        assert p.returncode == 2 and "iterators need a KV SSD" in p.stderr
    # without the files, or with -d, the built-in emulated device
    p = tool.ok("sdk_perf", "-n", 100, cwd=tmp_path)
    assert "on emu://sdkperf?ns=kv:1G" in p.stdout
    p = tool.ok("sdk_perf", "-n", 100, "-d", MEM_KV, cwd=io_dir)
    assert f"on {MEM_KV}" in p.stdout
    p = tool.run("sdk_perf", "-d", MEM_KV, "-j", "kv_sdk_sync_config.json", cwd=io_dir)
    assert p.returncode == 2 and "choose one" in p.stderr
    p = tool.run("sdk_perf_async", "-n", 10, "-v", 1000, "-j", "kv_sdk_async_config.json",
                 cwd=io_dir, devices=ORIG_ALIASES)
    assert p.returncode == 2 and "sector size" in p.stderr
