# SPDX-License-Identifier: BSD-3-Clause
"""Programs written for the original uNVMe 2.0 SDK build and run unchanged: a program in the
samples' idiom (kv_idiom/kv_idiom.c, our own) is compiled with the samples' compiler flags and
their include idioms ("kv_apis.h", "kvnvme.h") against include/unvme/kv, linked with the built
libunvme, and run on an emulated KV device aliased to their hard-coded 0000:02:00.0 through
$UNVME_DEVICES, as a user of the original would."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, build_dir

SRC = Path(__file__).resolve().parent / "kv_idiom" / "kv_idiom.c"
# The original's io/SConstruct flags, plus warnings as errors: our headers must be clean.
SAMPLE_FLAGS = ["-g", "-fPIC", "-std=c99", "-D_GNU_SOURCE", "-O2", "-Wall", "-Werror"]


def find_lib():
    b = build_dir()
    for name in ("libunvme.so", "libunvme.a"):
        if (b / name).exists():
            return b / name
    pytest.skip(f"libunvme not built in {b}")


@pytest.fixture
def program(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    lib = find_lib()
    exe = tmp_path / "kv_idiom"
    cmd = [cc, *SAMPLE_FLAGS, "-I", str(REPO / "include" / "unvme" / "kv"), str(SRC), "-o", str(exe)]
    if lib.suffix == ".so":
        cmd += ["-L", str(lib.parent), f"-Wl,-rpath,{lib.parent}", "-lunvme"]
    else:
        cmd += [str(lib), "-ljson-c", "-lssl", "-lcrypto", "-luring", "-lz"]
    cmd += ["-lpthread", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"the sample idiom does not compile against our headers:\n{r.stderr}"
    return exe


def run(exe, tmp_path, devices, **extra):
    env = dict(os.environ)
    env.pop("UNVME_LOG", None)
    env.pop("UNVME_QUIET", None)
    env.update(extra)
    env["UNVME_DEVICES"] = devices
    env["HOME"] = str(tmp_path)
    env.pop("UNVME_CONFIG", None)
    return subprocess.run([str(exe)], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=120)


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
    # the library says why only when asked (UNVME_LOG=1: its log on stderr)
    r = run(program, tmp_path, "0000:03:00.0=emu://other?ns=kv:16M")
    assert r.returncode != 0 and "kv_sdk_init failed" not in r.stderr
    r = run(program, tmp_path, "0000:03:00.0=emu://other?ns=kv:16M", UNVME_LOG="1")
    assert r.returncode != 0
    assert "0000:02:00.0" in r.stderr and "kv_sdk_init failed" in r.stderr
