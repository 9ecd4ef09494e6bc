# SPDX-License-Identifier: BSD-3-Clause
"""unvme perf: smoke runs (never asserting speed), JSON shape, verify mode, and the errors it
must name before starting."""
import os
import re

import pytest

NULL_DEV = "emu://p?ns=null:1G:512"


def test_text_output(unvme):
    r = unvme.ok("perf", NULL_DEV, "-w", "randread", "-b", "4k", "-q", "32", "-t", "1")
    lines = r.out.splitlines()
    assert any("IOPS" in l and "p99.99" in l for l in lines)
    total = next(l for l in lines if l.startswith("Total"))
    assert float(total.split()[1]) > 0
    assert any(l.startswith(f"{NULL_DEV} nsid 1") for l in lines)
    assert "ns per I/O (process CPU time" in r.out and "Busy:" in r.out


def test_json_output(unvme):
    j = unvme.ok("perf", NULL_DEV, "-w", "randwrite", "-b", "512", "-q", "8", "-t", "1",
                 "-o", "json").json()
    assert j["workload"] == "randwrite" and j["block_size"] == 512 and j["queue_depth"] == 8
    assert j["total"]["iops"] > 0 and j["total"]["ios"] > 0 and j["total"]["errors"] == 0
    ns = j["namespaces"][0]
    assert ns["device"] == NULL_DEV and ns["nsid"] == 1
    lat = ns["latency_us"]
    assert 0 <= lat["min"] <= lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["p99.99"]
    assert lat["p99.99"] <= lat["max"] * 1.02 + 0.01
    cpu = j["cpu"]
    assert cpu["process_s"] > 0 and cpu["ns_per_io"] > 0
    assert cpu["submitting_threads_ns_per_io"] > 0 and cpu["other_threads_ns_per_io"] >= 0
    assert j["busy_ns_per_io"] > 0
    assert "percentiles" not in ns


def test_latency_table(unvme):
    r = unvme.ok("perf", NULL_DEV, "-t", "1", "-q", "4", "-L")
    assert "99.9999%" in r.out and "1.0000%" in r.out
    j = unvme.ok("perf", NULL_DEV, "-t", "1", "-q", "4", "-L", "-o", "json").json()
    pcts = j["namespaces"][0]["percentiles"]
    assert pcts[0]["percentile"] == 1 and pcts[-1]["percentile"] == 99.9999
    values = [p["latency_us"] for p in pcts]
    assert values == sorted(values)


def test_several_namespaces_devices_and_cores(unvme):
    cores = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2])
    j = unvme.ok("perf", "-d", "emu://a?ns=null:1G:512&ns=mem:8M:4096", "-d", NULL_DEV,
                 "-w", "randrw", "-M", "70", "-b", "4k", "-q", "16", "-t", "1", "-c", cores,
                 "-o", "json").json()
    assert j["threads"] == len(cores.split(","))
    assert [(n["device"], n["nsid"]) for n in j["namespaces"]] == [
        ("emu://a?ns=null:1G:512&ns=mem:8M:4096", 1), ("emu://a?ns=null:1G:512&ns=mem:8M:4096", 2),
        (NULL_DEV, 1)]
    assert all(n["ios"] > 0 for n in j["namespaces"])
    assert j["total"]["ios"] == sum(n["ios"] for n in j["namespaces"])
    # one namespace picked out of two
    j = unvme.ok("perf", "emu://a?ns=null:1G:512&ns=mem:8M:4096", "-n", "2", "-t", "1", "-q", "4",
                 "-o", "json").json()
    assert [n["nsid"] for n in j["namespaces"]] == [2]


def test_thread_mode_with_latency(unvme):
    j = unvme.ok("perf", "emu://t?ns=mem:16M:512&mode=thread&rlat=50us", "-w", "randread",
                 "-q", "4", "-t", "1", "-o", "json").json()
    # four outstanding reads of at least 50 us each
    assert j["namespaces"][0]["latency_us"]["p50"] >= 45
    assert j["total"]["iops"] <= 4 / 45e-6


def test_verify_write_then_read(unvme):
    dev = unvme.file_dev("v", size="2M", lba=512)
    unvme.ok("perf", dev, "-w", "write", "-b", "4k", "-q", "8", "-t", "1", "--verify")
    j = unvme.ok("perf", dev, "-w", "read", "-b", "4k", "-q", "8", "-t", "1", "--verify",
                 "-o", "json").json()
    assert j["total"]["verify_errors"] == 0 and j["total"]["ios"] > 0
    # corrupt one block behind perf's back: a sequential verify read finds it
    unvme.ok("write", dev, "-s", 9, "--pattern", "0xab")
    r = unvme.run("perf", dev, "-w", "read", "-b", "4k", "-q", "8", "-t", "1", "--verify")
    assert r.rc == 1, r
    assert "failed verification" in r.err and "LBA 9" in r.err
    # a pattern is no stamp: told apart from a stamp in the wrong place, with the way out
    # (a sequential run may pass block 9 more than once)
    m = re.search(r"(\d+) blocks failed verification.*; (\d+) of them hold no stamp", r.err)
    assert m and m.group(1) == m.group(2) and "--fill" in r.err, r.err


def test_verify_tells_misplaced_stamps_from_foreign_data(unvme, tmp_path):
    dev = unvme.file_dev("vm2", size="2M", lba=512)
    unvme.ok("perf", dev, "-w", "write", "-b", "4k", "-q", "8", "-t", "1", "--verify")
    # block 10's stamped data copied over block 9: data in the wrong place, not foreign
    unvme.ok("read", dev, "-s", 10, "-d", tmp_path / "b10")
    unvme.ok("write", dev, "-s", 9, "-d", tmp_path / "b10")
    r = unvme.run("perf", dev, "-w", "read", "-b", "4k", "-q", "8", "-t", "1", "--verify",
                  "-o", "json")
    assert r.rc == 1, r
    j = r.json()
    assert j["total"]["verify_errors"] >= 1 and j["total"]["verify_foreign"] == 0, j
    assert "0 of them hold no stamp" in r.err and "--fill" not in r.err


def test_verify_after_other_data_needs_fill(unvme):
    # a namespace that held other data: --verify refuses it until --fill wrote zeroes over it
    dev = unvme.file_dev("vf", size="1M", lba=512)
    unvme.ok("write", dev, "-s", 0, "-c", 2047, "--pattern", "0x5a")
    r = unvme.run("perf", dev, "-w", "randread", "-b", "4k", "-q", "4", "-t", "1", "--verify")
    assert r.rc == 1 and "--fill" in r.err, r
    j = unvme.ok("perf", dev, "--fill", "-w", "randrw", "-b", "4k", "-q", "4", "-t", "1",
                 "--verify", "-o", "json").json()
    assert j["total"]["verify_errors"] == 0 and j["total"]["ios"] > 0


def test_verify_in_one_process_on_memory(unvme):
    r = unvme.batch("emu://vm?ns=mem:1M:4096",
                    "perf -w write -t 1 -q 4 --verify -o json\nperf -w randread -t 1 -q 4 --verify -o json\n")
    assert r.rc == 0, r


@pytest.mark.parametrize("args, words", [
    (["-b", "1024", "-d", "emu://x?ns=null:1G:4096"], ["--block-size", "4096-byte LBA"]),
    (["-b", "64M"], ["--block-size", "at most"]),
    (["-q", "5000", "-d", "emu://x?ns=null:1G:512&mqes=1024"], ["--queue-depth", "1023"]),
    (["-n", "7", "-d", NULL_DEV], ["--namespace-id", "namespace 7", "active: 1"]),
    (["-n", "1,x", "-d", NULL_DEV], ["--namespace-id", "1,x"]),
    (["-d", NULL_DEV, "-d", NULL_DEV], ["given twice"]),
    (["-c", "0,0", "-d", NULL_DEV], ["--cores", "twice"]),
])
def test_errors_named_before_starting(unvme, args, words):
    r = unvme.run("perf", "-t", "1", *args)
    assert r.rc == 2, r
    for w in words:
        assert w in r.err, (w, r)


def test_unopenable_device(unvme):
    r = unvme.run("perf", "-t", "1", "emu://x?ns=null:1G:513")
    assert r.rc == 3 and "513" in r.err


def test_io_errors_are_counted_and_reported(unvme):
    r = unvme.batch("emu://e?ns=mem:1M:512", "inject-fault --media-error 3\n"
                                              "perf -w randread -q 4 -t 1 -o json\n")
    assert r.rc == 1, r
    assert "3 I/Os failed" in r.err


def test_fill_writes_every_block_before_the_run(unvme):
    """--fill: the whole namespace holds data (not zeroes) after the run, up to its last
    block, and reads then verify; verify mode fills with zeroes it can tell from corruption."""
    dev = unvme.file_dev("fill", size="3M", lba=512)
    unvme.ok("perf", dev, "--fill", "-w", "randread", "-b", "4k", "-q", "8", "-t", "1")
    nblocks = 3 * 2048
    for slba in (0, nblocks // 2, nblocks - 1):
        out = unvme.tmp / f"b{slba}.bin"
        unvme.ok("read", dev, "-s", slba, "-c", 0, "-d", out)
        assert out.read_bytes() != bytes(512), f"block {slba} was not filled"
    dev2 = unvme.file_dev("fillv", size="1M", lba=512)
    r = unvme.ok("perf", dev2, "--fill", "-V", "-w", "randrw", "-b", "4k", "-q", "8", "-t", "1")
    assert "0 blocks failed" in r.out


def test_cpu_counts_the_engine_threads(unvme):
    """In thread mode the device's engine thread works for the I/O: the measured CPU per I/O
    includes it (process CPU time), next to the submitting thread's own."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("the engine thread needs a second CPU")
    unvme.env = dict(unvme.env, UNVME_MP="0")  # the device (its engine) in perf's process
    j = unvme.ok("perf", "emu://eng?ns=null:1G:512&mode=thread&cpu=1", "-w", "randread", "-b",
                 "512", "-q", "16", "-t", "1", "-c", "0", "-o", "json").json()
    cpu = j["cpu"]
    # the engine thread executes every command on CPU 1: its CPU time is in the figure
    assert cpu["other_threads_ns_per_io"] > 0.05 * cpu["submitting_threads_ns_per_io"], cpu
    assert cpu["ns_per_io"] >= cpu["submitting_threads_ns_per_io"]


def test_warns_about_never_written_blocks(unvme):
    """Reads of a memory namespace nobody wrote come from the zero page: perf says so, counts
    the written blocks (Identify NUSE), and --fill makes the warning go away."""
    dev = "emu://unw?ns=mem:8M:512"
    r = unvme.ok("perf", dev, "-w", "randread", "-b", "4k", "-q", "4", "-t", "1", "-o", "json")
    assert "0 of its 16384 blocks were ever written" in r.err and "--fill" in r.err
    assert r.json()["namespaces"][0]["blocks_written"] == 0
    r = unvme.ok("perf", dev, "--fill", "-w", "randread", "-b", "4k", "-q", "4", "-t", "1",
                 "-o", "json")
    assert "warning" not in r.err
    ns = r.json()["namespaces"][0]
    assert ns["blocks_written"] == ns["blocks"] == 16384
    # writes are not warned about, and neither is a device that reports no utilization
    r = unvme.ok("perf", dev, "-w", "randwrite", "-b", "4k", "-q", "4", "-t", "1")
    assert "warning" not in r.err
    r = unvme.ok("perf", "emu://n?ns=null:8M:512", "-w", "randread", "-q", "4", "-t", "1")
    assert "warning" not in r.err
