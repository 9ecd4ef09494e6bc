# SPDX-License-Identifier: BSD-3-Clause
"""Programs written for the original uNVMe 2.0 SDK build and run unchanged: a program in the
samples' idiom (kv_idiom/kv_idiom.c, our own) is compiled with the samples' compiler flags and
their include idioms ("kv_apis.h", "kvnvme.h") against include/unvme/kv, linked with the built
libunvme, and run on an emulated KV device aliased to their hard-coded 0000:02:00.0 through
$UNVME_DEVICES, as a user of the original would."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, archive_libs, build_dir

SRC = Path(__file__).resolve().parent / "kv_idiom" / "kv_idiom.c"
# kv_perf's idiom: the driver-level calls of kvnvme.h and the timing macros of kv_trace.h
PERF_SRC = Path(__file__).resolve().parent / "kv_idiom" / "kv_perf_idiom.c"
# The original's io/SConstruct flags, plus warnings as errors: our headers must be clean.
SAMPLE_FLAGS = ["-g", "-fPIC", "-std=c99", "-D_GNU_SOURCE", "-O2", "-Wall", "-Werror"]


def find_lib():
    b = build_dir()
    for name in ("libunvme.so", "libunvme.a"):
        if (b / name).exists():
            return b / name
    pytest.skip(f"libunvme not built in {b}")


def compile_sample(src, exe):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    lib = find_lib()
    cmd = [cc, *SAMPLE_FLAGS, "-I", str(REPO / "include" / "unvme" / "kv"), str(src), "-o", str(exe)]
    if lib.suffix == ".so":
        cmd += ["-L", str(lib.parent), f"-Wl,-rpath,{lib.parent}", "-lunvme"]
    else:
        cmd += [str(lib), *archive_libs(lib)]
    cmd += ["-lpthread", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"the sample idiom does not compile against our headers:\n{r.stderr}"
    return exe


@pytest.fixture
def program(tmp_path):
    return compile_sample(SRC, tmp_path / "kv_idiom")


@pytest.fixture
def perf_program(tmp_path):
    return compile_sample(PERF_SRC, tmp_path / "kv_perf_idiom")


def run(exe, tmp_path, devices, *args, **extra):
    env = dict(os.environ)
    env.pop("UNVME_LOG", None)
    env.pop("UNVME_QUIET", None)
    env.update(extra)
    env["UNVME_DEVICES"] = devices
    env["HOME"] = str(tmp_path)
    env.pop("UNVME_CONFIG", None)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)


def test_sample_idiom_builds_with_their_flags_and_runs_on_their_address(program, tmp_path):
    r = run(program, tmp_path, "0000:02:00.0=emu://orig?ns=kv:64M")
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    lines = r.stdout.splitlines()
    assert lines[0].startswith("ok init nr_ssd=1 core_mask=0x")
    assert "ok async status=0x10" in lines
    assert "ok iterate keys=100" in lines
    assert lines[-1] == "ok finalize"
    # kv_sdk_info prints where the original did: one build/system line on stderr
    info = [l for l in r.stderr.splitlines() if l.startswith("KV SDK info: ")]
    assert len(info) == 2 and "kernel=" in info[0] and "processor=" in info[0]
    assert "0000:02:00.0" in r.stderr  # the configuration once initialized


def test_unaliased_address_fails_with_a_clear_message(program, tmp_path):
    # a program written for the original never reads kv_errmsg(): the library says why by
    # default, and only when the user silences it (UNVME_LOG=0) it does not
    r = run(program, tmp_path, "0000:03:00.0=emu://other?ns=kv:16M")
    assert r.returncode != 0
    assert "kvsdk: kv_sdk_init failed:" in r.stderr and "'0000:02:00.0'" in r.stderr
    r = run(program, tmp_path, "0000:03:00.0=emu://other?ns=kv:16M", UNVME_LOG="0")
    assert r.returncode != 0 and "kv_sdk_init failed" not in r.stderr


# The original's io/kv_perf_scripts/kv_perf_default_config.json, keys as it ships them
# (its "driver" key is not ours: ignored with a warning).
KV_PERF_DEFAULT_CONFIG = {
    "cache": "off", "cache_algorithm": "radix", "cache_reclaim_policy": "lru", "slab_size": 24,
    "slab_alloc_policy": "huge", "ssd_type": "kv", "driver": "udd", "log_level": 0,
    "log_file": "/tmp/kvsdk.log",
    "device_description": {"dev_id": "0000:02:00.0", "core_mask": 1, "sync_mask": 0,
                           "cq_thread_mask": 1, "queue_depth": 64}}


def perf_config(tmp_path, **device):
    cfg = json.loads(json.dumps(KV_PERF_DEFAULT_CONFIG))
    cfg["device_description"].update(device)
    path = tmp_path / "kv_perf_scripts" / "kv_perf_default_config.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(cfg))
    return path


def check_perf_run(r, phases):
    """Every thread's phases went through with nothing failed or miscompared, each timed by
    KVNVME_TIMESTOP's "[N ms]" line, and the device information shown before and after."""
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    out = r.stdout.splitlines()
    assert out[-1] == "SUCCESS"
    ok = [l for l in out if re.match(r"ok (write|read|delete) ", l)]
    assert sorted(l.split()[1] for l in ok) == sorted(phases)
    for l in ok:
        assert l.endswith("failures=0 mismatches=0") and " n=300 " in l, l
    assert sum(bool(re.fullmatch(r"\[\d+ ms\]", l)) for l in out) == len(phases)
    assert "ok log pages read=yes" in out
    info = [l for l in out if l.startswith("device 0000:02:00.0 ")]
    assert len(info) == 2 and "total 256 MB" in info[0], info
    return ok


@pytest.mark.parametrize("masks,mode", [
    ({}, "async"),                                       # the original's default: one async core
    ({"sync_mask": 1, "cq_thread_mask": 2}, "sync"),      # sync: the caller polls its queue
])
def test_kv_perf_idiom_driver_level_calls(perf_program, tmp_path, masks, mode):
    cfg = perf_config(tmp_path, **masks)
    r = run(perf_program, tmp_path, "0000:02:00.0=emu://perf?ns=kv:256M", cfg, "D", 300)
    ok = check_perf_run(r, ["write", "read", "delete"])
    assert all(f" {mode} " in l for l in ok)
    assert "ok init nr_ssd=1 mode=driver" in r.stdout


def test_kv_perf_idiom_sdk_level_calls_and_default_path(perf_program, tmp_path):
    """-L: the kv_* calls; no argument: kv_perf's default ./kv_perf_scripts/... path."""
    perf_config(tmp_path)
    r = run(perf_program, tmp_path, "0000:02:00.0=emu://perf?ns=kv:256M", "", "L", 300)
    assert r.returncode != 0  # "" is no configuration file
    r = run(perf_program, tmp_path, "0000:02:00.0=emu://perf?ns=kv:256M",
            "kv_perf_scripts/kv_perf_default_config.json", "L", 300)
    check_perf_run(r, ["write", "read", "delete"])
    assert "ok init nr_ssd=1 mode=sdk" in r.stdout


def test_kv_perf_idiom_two_cores_sync_and_async(perf_program, tmp_path):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs 2 CPUs")
    cfg = perf_config(tmp_path, core_mask=3, sync_mask=1, cq_thread_mask=2)
    r = run(perf_program, tmp_path, "0000:02:00.0=emu://perf?ns=kv:256M", cfg, "D", 300)
    ok = check_perf_run(r, ["write", "read", "delete"] * 2)
    assert sorted(l.split()[6] for l in ok) == ["async"] * 3 + ["sync"] * 3
