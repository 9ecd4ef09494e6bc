# SPDX-License-Identifier: BSD-3-Clause
"""The benchmark helpers that make bench runs, driven in their quickest form: they start, print
their tables and write JSON a report can use. Speed is never asserted (machines are noisy);
only that the figures exist and the model's line is what the model says."""
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, build_dir


def run_script(name, *args, timeout=180):
    env = dict(os.environ, BUILD=str(build_dir()), UNVME_QUIET="1")
    p = subprocess.run([sys.executable, str(REPO / "scripts" / name), *args], env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{name} {args}: rc={p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the device engine needs a second CPU")
def test_devthread_sweep_and_layouts(tmp_path):
    out_json = tmp_path / "dt.json"
    out = run_script("bench_devthread.py", "--seconds", "1", "--qds", "1,64",
                     "--json", str(out_json), "--plot-dir", str(tmp_path))
    assert "measured / model" in out and "N:N" in out
    r = json.loads(out_json.read_text())
    # the model's line: min(QD, 48 units) / 80 us
    assert [round(x["theory"]) for x in r["sweep"]] == [12500, 600000]
    assert all(x["iops"] > 0 and x["p50_us"] > 0 for x in r["sweep"])
    assert [x["layout"] for x in r["layouts"]] == ["1:1", "1:4", "N:N (2:2)"]
    assert [round(x["theory"]) for x in r["layouts"]] == [600000, 1600000, 1200000]
    assert all(x["iops"] > 0 for x in r["layouts"])
    # reads of the SSD model take at least its 80 us
    assert r["sweep"][0]["p50_us"] >= 80
    if "plot not drawn" not in out:
        assert (tmp_path / "devthread-qd.png").stat().st_size > 0


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
