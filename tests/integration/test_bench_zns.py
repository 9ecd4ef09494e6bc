# SPDX-License-Identifier: BSD-3-Clause
"""make bench's zoned-flash part (scripts/bench_zns.py) in its quickest form: it runs, prints
its tables and writes JSON; the model's line is what the model says. Speed is never asserted."""
import json
import os
import subprocess
import sys

from conftest import REPO, build_dir

sys.path.insert(0, str(REPO / "scripts"))
import bench_zns  # noqa: E402


def test_greedy_model():
    # Xiang & Kurkoski give 2.35 (simulated) for over-provisioning 0.3, i.e. utilization 1/1.3
    assert abs(bench_zns.greedy_model(1 / 1.3) - 2.36) < 0.01
    assert abs(bench_zns.greedy_model(0.5) - 1.255) < 0.005
    assert bench_zns.greedy_model(0.95) > bench_zns.greedy_model(0.9) > bench_zns.greedy_model(0.8)


def test_short_run(tmp_path):
    out_json = tmp_path / "z.json"
    # this build as its own baseline: the before/after table's machinery, not its figures
    env = dict(os.environ, BUILD=str(build_dir()), UNVME_QUIET="1", ZNS_BENCH_BASELINE=str(build_dir()),
               ZNS_BENCH_DIR=str(tmp_path))
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_zns.py"), "--short",
                        "--json", str(out_json), "--plot-dir", str(tmp_path)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    for title in ("FTL steady state", "CPU per I/O", "KV API", "1 MiB writes",
                  "durable acknowledgements"):
        assert title in p.stdout
    r = json.loads(out_json.read_text())
    assert {(x["util"], x["gc"]) for x in r["waf"]} >= {(80, "greedy"), (80, "cost-benefit")}
    for x in r["waf"]:
        assert x["waf"] >= 1.0 and x["iops"] > 0 and x["model"] == bench_zns.greedy_model(x["util"] / 100)
    assert all(c["ftl"]["iops"] > 0 and c["plain"]["iops"] > 0 for c in r["cpu"])
    assert r["kv"]["hostkv_zns"]["retrieve"]["ops"] > 0
    rows = r["durability"]["rows"]
    assert len(rows) == 7 and all(x[b][ph] > 0 for x in rows for b in ("now", "baseline")
                                  for ph in ("store", "retrieve"))
