# SPDX-License-Identifier: BSD-3-Clause
"""Every tool takes --help (usage on stdout, exit 0, the same text as -h), and long runs show
a progress line on stderr when it is a terminal (a pseudo-terminal here), never in a pipe."""
import os
import pty
import select
import subprocess
import sys

import pytest

from conftest import REPO, TOOL, build_dir

KV_DIR = build_dir() / "tools" / "kv"
MEM_KV = "emu://kvp?ns=kv:64M"


@pytest.mark.parametrize("prog", ["sdk_perf", "sdk_perf_async", "sdk_iterate", "sdk_iterate_async",
                                  "kv_perf"])
def test_kv_tools_take_help(prog, env):
    path = KV_DIR / prog
    if not path.exists():
        pytest.skip(f"{path} not built")
    long = subprocess.run([str(path), "--help"], capture_output=True, text=True, env=env, timeout=30)
    short = subprocess.run([str(path), "-h"], capture_output=True, text=True, env=env, timeout=30)
    assert long.returncode == 0 and long.stdout.startswith(f"usage: {prog}"), long
    assert long.stdout == short.stdout and long.stderr == ""


@pytest.mark.parametrize("prog", ["core_pingpong", "ftl_waf", "memcpy_floor", "tcp_pingpong",
                                  "kv_threads"])
def test_bench_helpers_take_help(prog, env):
    path = build_dir() / "tools" / "bench" / prog
    if not path.exists():
        pytest.skip(f"{path} not built")
    r = subprocess.run([str(path), "--help"], capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith(f"usage: {prog}") and r.stderr == "", r


def test_blobfs_perf_and_bench_take_help(env):
    b = build_dir() / "tools" / "blobfs" / "blobfs_perf"
    if b.exists():
        r = subprocess.run([str(b), "--help"], capture_output=True, text=True, env=env, timeout=30)
        assert r.returncode == 0 and r.stdout.startswith("usage: blobfs_perf"), r
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "bench.py"), "--help"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("usage: bench.py"), r


def run_on_terminal(args, env, timeout=120):
    """Runs args with stderr on a pseudo-terminal; returns (exit code, stdout, terminal bytes)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([str(a) for a in args], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer closed the terminal
                    data = b""
                if not data:
                    break
                seen.append(data)
            elif p.poll() is not None:
                break
        out = p.stdout.read()
        p.wait(timeout=timeout)
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
    return p.returncode, out, b"".join(seen)


def test_perf_shows_progress_on_a_terminal_only(env):
    args = [TOOL, "perf", "emu://prog?ns=null:1G:512", "-t", 2, "-q", 4]
    rc, out, tty = run_on_terminal(args, env)
    assert rc == 0, tty
    assert b"perf: run 0/2 s (0%)" in tty
    assert b"perf: run 1/2 s" in tty or b"perf: run 2/2 s" in tty
    assert tty.endswith(b"\r\x1b[K"), tty[-80:]  # the line is erased at the end
    assert b"IOPS" in out or b"iops" in out.lower()
    piped = subprocess.run([str(a) for a in args], capture_output=True, env=env, timeout=120)
    assert piped.returncode == 0 and b"\r" not in piped.stderr and b"perf: run" not in piped.stderr


@pytest.mark.parametrize("prog", ["sdk_perf", "sdk_perf_async"])
def test_kv_tools_show_progress_on_a_terminal_only(prog, env):
    path = KV_DIR / prog
    if not path.exists():
        pytest.skip(f"{path} not built")
    args = [path, "-n", 3000, "-d", MEM_KV]
    rc, out, tty = run_on_terminal(args, env)
    assert rc == 0, tty
    for phase in (b"store", b"retrieve", b"delete"):
        assert f"{prog}: ".encode() + phase + b" 0/3000 keys (0%)" in tty
    piped = subprocess.run([str(a) for a in args], capture_output=True, env=env, timeout=120)
    assert piped.returncode == 0 and b"keys (" not in piped.stderr
