# SPDX-License-Identifier: BSD-3-Clause
"""make bench in its quick form (BENCH_QUICK=1: short runs, few points, 2 rounds), then
make bench-doc on a copy of docs/performance.md. Speed is never asserted (machines are noisy);
what is checked is that every section runs both sides, keeps every round and reports medians
with their range, that the comparisons do the same work on both sides where the figures can
tell (the same share of keys found by the KV reads on both sides, every block written before a
memory-namespace read), and that the document is regenerated from the results."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

QUICK_ROUNDS = 2
SECTIONS = ("per_io", "fio", "qd", "kv", "kvdbbench", "devthread", "blobfs", "zns", "tcp", "shared",
            "poll")


def quick_env():
    return dict(os.environ, BUILD=str(build_dir()), UNVME_QUIET="1", BENCH_QUICK="1",
                BENCH_ROUNDS=str(QUICK_ROUNDS))


def check_stat(s, runs=QUICK_ROUNDS):
    assert s is not None
    assert len(s["runs"]) == runs, s
    assert s["min"] <= s["median"] <= s["max"], s
    return s["median"]


@pytest.fixture(scope="module")
def quick_bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "bench.py"), "--out", str(out)],
                       env=quick_env(), capture_output=True, text=True, timeout=3600)  # a hang guard
    results = sorted(out.glob("*.json"))
    assert results, f"no results: rc={p.returncode}\n{p.stdout}\n{p.stderr}"
    return out, results[-1], json.loads(results[-1].read_text()), p


needs_tools = pytest.mark.skipif(
    not (shutil.which("fio") and shutil.which("db_bench") and (os.cpu_count() or 1) >= 2),
    reason="the quick bench needs fio, db_bench and 2 CPUs")


@needs_tools
def test_every_section_runs(quick_bench):
    out, path, res, p = quick_bench
    assert p.returncode == 0, p.stderr + p.stdout
    assert not res["failed"]
    assert set(res["sections"]) == set(SECTIONS)
    assert res["meta"]["quick"] and res["meta"]["rounds"] == QUICK_ROUNDS
    md = path.with_suffix(".md").read_text()
    for title in ("Driver + emulated device per I/O", "fio with our engine", "Queue-depth sweep",
                  "KV SDK", "kv_db_bench against db_bench", "Device-thread mode", "BlobFS", "Host-managed flash", "NVMe over TCP",
                  "Shared devices and hot-plug", "Pollers sharing cores"):
        assert f"## {title}" in md


@needs_tools
def test_per_io_and_fio_measure_cpu(quick_bench):
    res = quick_bench[2]["sections"]
    for row in res["per_io"]["rows"]:
        assert check_stat(row["iops"]) > 0 and check_stat(row["cpu_ns"]) > 0
    fio = res["fio"]
    null, mem = fio["null"], fio["mem"]
    for side in ("ours", "base"):
        assert check_stat(null[side]["iops"]) > 0
        # the whole process's CPU, measured
        assert check_stat(null[side]["cpu_ns"]) > 0
    assert check_stat(null["ratio"]) > 0
    for side in ("ours", "uring"):
        assert check_stat(mem[side]["iops"]) > 0 and check_stat(mem[side]["cpu_ns"]) > 0
    assert check_stat(mem["vs_uring"]) > 0 and check_stat(mem["cpu_vs_uring"]) > 0
    # the floor per CPU-second, measured in every round
    assert check_stat(mem["floor"]) > 0 and check_stat(mem["vs_floor"]) > 0
    # every fio process pinned to CPU 0, io_uring tuned and batched like ours
    for run in fio["runs"]["uring"] + fio["runs"]["ours"]:
        assert run["cmd"].startswith("taskset -c 0 fio"), run["cmd"]
        assert "--iodepth_batch_submit=16" in run["cmd"], run["cmd"]
    assert "registerfiles=1" in fio["runs"]["uring"][0]["cmd"]
    # io_uring's workers, when it used any, could only run on CPU 0
    for w in mem["workers"]:
        assert w is None or all(c == "0" for c in w["cpus"]), w
    # the O_DIRECT loop-device baseline ran with its kworkers counted, or says why not
    if os.geteuid() == 0 and shutil.which("losetup"):
        assert mem["direct"] and check_stat(mem["direct"]["iops"]) > 0
        assert all("kworker_cpu_s" in r for r in fio["runs"]["direct"])
    else:
        assert mem["direct_skipped"]


@needs_tools
def test_qd_sweep_sides_and_limit(quick_bench):
    qd = quick_bench[2]["sections"]["qd"]
    assert {r["bs"] for r in qd["rows"]} == {4096, 512}
    for r in qd["rows"]:
        for side in ("perf", "engine", "io_uring"):
            assert check_stat(r[side]["iops"]) > 0, (r["bs"], r["qd"], side)
        assert check_stat(r["engine_vs_uring"]) > 0
        # the floor per CPU-second, at this queue depth, in every round
        assert check_stat(r["limit_iops"]) > 0
        assert all(f["buffers"] == r["qd"] for f in r["runs"]["floor"])
        assert check_stat(r["perf_vs_floor"]) > 0
        # perf read only written blocks
        assert all(run["unwritten_blocks"] == 0 for run in r["runs"]["perf"])
    for png in qd["plots"].values():
        if png:
            assert os.path.getsize(png) > 0


@needs_tools
def test_kv_same_work_on_both_sides(quick_bench):
    kv = quick_bench[2]["sections"]["kv"]
    rows = {(r["mode"], r["round"], r["phase"]): r for r in kv["rows"]}
    assert {r["round"] for r in kv["rows"]} == {"cold", "warm"}
    assert rows[("sync", "cold", "store")]["threads"] == 1
    assert rows[("async", "cold", "store")]["threads"] == 2
    for r in kv["rows"]:
        check_stat(r["ours"])
        check_stat(r["rocksdb"])
    # the same key distribution: after one fill of N random draws over N keys, about 1 - 1/e
    # of the random reads find their key, on both sides
    for mode in ("sync", "async"):
        r = rows[(mode, "cold", "retrieve")]
        ours, theirs = r["ours_found"]["median"], r["rocksdb_found"]["median"]
        assert 0.55 < ours < 0.72 and 0.55 < theirs < 0.72, (mode, ours, theirs)
    place = {(r["device"], r["phase"]): r for r in kv["placement"]}
    assert len(place) == 6
    for r in place.values():
        for col in ("same core, QD 1", "separate cores, QD 1", "separate cores, QD 64"):
            check_stat(r[col])
        check_stat(r["separate_vs_same_qd1"])


@needs_tools
def test_kvdbbench_same_flags_both_sides(quick_bench):
    d = quick_bench[2]["sections"]["kvdbbench"]
    assert "--num=2000" in d["flags"] and "--threads=1" in d["flags"]
    rows = {r["benchmark"]: r for r in d["rows"]}
    assert list(rows) == ["fillseq", "fillrandom", "overwrite", "readrandom", "readseq",
                          "readwhilewriting", "deleterandom"]
    for r in rows.values():
        check_stat(r["ours"])
        check_stat(r["rocksdb"])
        check_stat(r["ratio"])
    # both sides start fillrandom on an empty store and overwrite with repeats: the same share
    # of random reads finds its key (1 - 1/e^2 in expectation)
    r = rows["readrandom"]
    ours, theirs = r["ours_found"]["median"], r["rocksdb_found"]["median"]
    assert 0.8 < ours < 0.92 and 0.8 < theirs < 0.92, (ours, theirs)


@needs_tools
def test_devthread_fills_and_follows_the_model(quick_bench):
    dt = quick_bench[2]["sections"]["devthread"]
    # the model's line: min(QD, 48 units) / 80 us
    assert [round(x["theory"]) for x in dt["sweep"]] == [12500, 600000]
    assert [x["layout"] for x in dt["layouts"]] == ["1:1", "1:4", "N:N (2:2)"]
    assert [round(x["theory"]) for x in dt["layouts"]] == [600000, 1600000, 1200000]
    for x in dt["sweep"] + dt["layouts"]:
        check_stat(x["iops"])
        assert all(run["unwritten_blocks"] == 0 for run in x["runs"])
    # reads of the SSD model take at least its 80 us
    assert dt["sweep"][0]["p50_us"]["median"] >= 80


@needs_tools
def test_tcp_local_and_remote_with_the_floor(quick_bench):
    tcp = quick_bench[2]["sections"]["tcp"]
    assert set(tcp["qd1"]) == {"latency model", "memory namespace"}
    for res in tcp["qd1"].values():
        for wl in ("randread", "randwrite"):
            r = res[wl]
            for side in ("local", "remote"):
                check_stat(r[side]["iops"])
                assert len(r["runs"][side]) == QUICK_ROUNDS
            check_stat(r["added_p50_us"])
    # reads of the SSD model take at least its 80 us on both sides
    lat = tcp["qd1"]["latency model"]["randread"]
    assert lat["local"]["p50_us"]["median"] >= 80 and lat["remote"]["p50_us"]["median"] >= 80
    for sweep in tcp["sweep"].values():
        assert [r["qd"] for r in sweep] == [1, 32]
        for r in sweep:
            check_stat(r["local"]["iops"])
            check_stat(r["remote"]["iops"])
            check_stat(r["ratio"])
    # the floor: a loopback round trip takes time, and the report names it
    assert all(tcp["floor"][wl]["p50_us"] > 0 for wl in ("randread", "randwrite"))
    assert "Floor (tcp_pingpong" in quick_bench[1].with_suffix(".md").read_text()
    # TLS against plain TCP in the same rounds
    assert [(r["workload"], r["qd"]) for r in tcp["tls"]] == [("randread", 1), ("randwrite", 1),
                                                              ("randread", 32)]
    for r in tcp["tls"]:
        check_stat(r["plain"]["iops"])
        check_stat(r["tls"]["iops"])
        check_stat(r["iops_ratio"])
    assert "TLS 1.3 (TLS_AES_128_GCM_SHA256" in quick_bench[1].with_suffix(".md").read_text()


@needs_tools
def test_blobfs_and_zns_sections_measure_both_sides(quick_bench):
    sec = quick_bench[2]["sections"]
    for row in sec["blobfs"]["rocksdb"]["rows"]:
        for side in ("blobfs", "tmpfs"):
            assert all(row[side][s] for s in ("fillseq", "readseq", "readrandom")), row
    assert all(r["mib_s"] > 0 and r["memcpy_mib_s"] > 0 for r in sec["blobfs"]["blobfs_perf"]["rows"])
    zns = sec["zns"]
    assert all(r["waf"] >= 1.0 and r["model"] >= 1.0 for r in zns["waf"])
    for r in zns["cpu"]:
        assert r["plain"]["ns_per_io"] > 0 and r["ftl"]["ns_per_io"] > 0
    assert zns["kv"]["hostkv_zns"]["retrieve"]["ops"] > 0 and zns["kv"]["kv_ssd"]["retrieve"]["ops"] > 0


@needs_tools
def test_bench_doc_regenerates_the_tables(quick_bench, tmp_path):
    out, path, res, _ = quick_bench
    doc = tmp_path / "performance.md"
    doc.write_text((REPO / "docs" / "performance.md").read_text())
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_doc.py"), str(path),
                        "--doc", str(doc), "--img", str(tmp_path / "img")],
                       env=quick_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "BENCH_QUICK" in p.stderr  # says these are not figures to publish
    text = doc.read_text()
    assert "Pending the first full run" not in text
    for name in ("meta", *SECTIONS):
        start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
        assert text.count(start) == 1 and text.count(end) == 1
        assert len(text[text.index(start):text.index(end)]) > 100
    assert res["meta"]["started"] in text
    assert (tmp_path / "img" / "qd-randread-4096.png").exists()
    # the same again changes nothing: the markers survive a regeneration
    before = doc.read_text()
    subprocess.run([sys.executable, str(REPO / "scripts" / "bench_doc.py"), str(path), "--doc",
                    str(doc), "--img", str(tmp_path / "img")], env=quick_env(), check=True,
                   capture_output=True, timeout=120)
    assert doc.read_text() == before


def test_performance_md_has_every_marker():
    text = (REPO / "docs" / "performance.md").read_text()
    for name in ("meta", *SECTIONS):
        assert text.count(f"<!-- bench:{name} -->") == 1 and text.count(f"<!-- /bench:{name} -->") == 1


def test_core_pingpong_reports_and_refuses_bad_cpus():
    exe = build_dir() / "tools" / "bench" / "core_pingpong"
    assert exe.exists()
    if (os.cpu_count() or 1) >= 2:
        p = subprocess.run([str(exe), "0", "1", "2000"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        assert r["cpu_a"] == 0 and r["cpu_b"] == 1 and r["one_way_ns"] > 0
    p = subprocess.run([str(exe), "0", "0"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "two different CPU" in p.stderr
    p = subprocess.run([str(exe), "0", "1000"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "cannot run on CPU 1000" in p.stderr


def test_memcpy_floor_reports_and_refuses_bad_input():
    exe = build_dir() / "tools" / "bench" / "memcpy_floor"
    p = subprocess.run([str(exe), "4096", str(16 << 20), "1", "0"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["block"] == 4096 and r["region"] == 16 << 20 and r["copies_per_s"] > 0
    assert r["gib_per_s"] > 0 and r["pattern"] == "random" and r["page_bytes"] >= 4096
    # per CPU-second: a second of the copier's CPU time (or five of wall time on a machine so
    # busy that it never got one)
    assert r["cpu_s"] >= 1.0 or r["wall_s"] >= 5.0
    assert r["copies_per_s"] >= r["copies_per_wall_s"] * 0.99
    p = subprocess.run([str(exe), "--seq", "65536", str(16 << 20), "1", "0", "1"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["pattern"] == "sequential" and r["buffers"] == 1 and r["copies_per_s"] > 0
    for args in (["0"], ["4"], ["abc"], ["4096", "100"], ["4096", "1M", "0"], []):
        p = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and ("usage" in p.stderr or "must" in p.stderr), (args, p.stderr)
    p = subprocess.run([str(exe), "4096", str(1 << 20), "1", "5000"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode in (1, 2) and "CPU" in p.stderr


def test_shared_devices_client_reinsertion_and_cli(quick_bench):
    sh = quick_bench[2]["sections"]["shared"]
    for mode in ("thread", "inline"):
        r = sh["client"][mode]
        for k in ("iops", "submit_cpu_ns", "total_cpu_ns"):
            assert check_stat(r[k]["in_process"]) > 0 and check_stat(r[k]["client"]) > 0
            assert r[k]["ratio"]["median"] > 0
    h = sh["reinsertion"]
    assert check_stat(h["attach_us"]) > 0 and check_stat(h["first_io_us"]) > 0
    c = sh["cli"]
    assert check_stat(c["cli_calls_per_s"]) > 0  # the CLI really ran during the client's I/O
    assert check_stat(c["p99_us"]["alone"]) > 0 and check_stat(c["p99_us"]["with_cli"]) > 0
    assert "Target (issues 16, 29)" in quick_bench[1].with_suffix(".md").read_text()


def test_pollers_sharing_cores_both_ways(quick_bench):
    po = quick_bench[2]["sections"]["poll"]
    r = po["loads"]["quiet"]
    for work in ("kv_perf", "threads"):
        assert check_stat(r[work]["ops"]["shared"]) > 0 and check_stat(r[work]["ops"]["separate"]) > 0
        assert r[work]["ops"]["ratio"]["median"] > 0
    assert check_stat(r["threads_auto"]) > 0
    assert "Target (issue 29)" in quick_bench[1].with_suffix(".md").read_text()
