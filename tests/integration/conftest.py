# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for driving the built `unvme` tool as a user would.

The build directory is $UNVME_BUILD (absolute, or relative to the repository root), default
"build". Every test gets a private state directory (so the built-in emu0 lives under tmp_path)
and an environment without the user's aliases or devices file.
"""
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    b = Path(os.environ.get("UNVME_BUILD", "build"))
    return b if b.is_absolute() else REPO / b


TOOL = build_dir() / "tools" / "unvme" / "unvme"
CRASH_WRITER = build_dir() / "tests" / "integration" / "crash_writer"  # test_ftl.py


class Result:
    """A finished unvme run: exit code, stdout, stderr, and the stdout parsed as JSON."""

    def __init__(self, args, proc):
        self.args = args
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        try:
            return json.loads(self.out)
        except json.JSONDecodeError as e:
            raise AssertionError(f"stdout of {self.args} is not JSON ({e}):\n{self.out}")

    def __repr__(self):
        return f"<unvme {' '.join(self.args)} rc={self.rc}\nstdout:\n{self.out}\nstderr:\n{self.err}>"


class Unvme:
    def __init__(self, env, tmp_path):
        self.env = env
        self.tmp = tmp_path

    def run(self, *args, input=None, timeout=120, binary=False):
        args = [str(a) for a in args]
        proc = subprocess.run([str(TOOL), *args], env=self.env, input=input,
                              capture_output=True, timeout=timeout, text=not binary)
        r = Result(args, proc)
        # A signal (negative code) means a crash: never acceptable, whatever the input.
        assert r.rc >= 0, f"unvme crashed with signal {-r.rc}: {r}"
        assert r.rc in (0, 1, 2, 3), f"undocumented exit code: {r}"
        return r

    def ok(self, *args, **kw):
        r = self.run(*args, **kw)
        assert r.rc == 0, r
        return r

    def batch(self, device, script, keep_going=False, timeout=120):
        args = ["batch", device] + (["--keep-going"] if keep_going else [])
        return self.run(*args, input=script, timeout=timeout)

    def file_dev(self, name="t", size="64M", lba=512, nslist=None, extra=""):
        """URI of an emulated device whose namespaces are files under tmp_path (so the data
        outlives the process). nslist: [(size, lba)...] for several namespaces."""
        specs = nslist or [(size, lba)]
        parts = []
        for i, (sz, lb) in enumerate(specs, start=1):
            path = self.tmp / f"{name}-ns{i}.img"
            parts.append(f"ns=file:{sz}:{lb}:{path}")
        uri = f"emu://{name}?" + "&".join(parts)
        return uri + (f"&{extra}" if extra else "")

    def stateful_dev(self, name="fw", size="16M", lba=512):
        """A file-backed device that also keeps its controller state (firmware slots) in a file."""
        return self.file_dev(name, size, lba, extra=f"state={self.tmp / (name + '-state.json')}")


@pytest.fixture
def env(tmp_path):
    e = {k: v for k, v in os.environ.items()
         if k not in ("UNVME_DEVICES", "UNVME_CONFIG", "XDG_CONFIG_HOME", "XDG_STATE_HOME")}
    home = tmp_path / "home"
    home.mkdir()
    e["HOME"] = str(home)
    e["UNVME_STATE_DIR"] = str(tmp_path / "state")
    # where processes sharing a device meet: the test's own (short: socket paths are)
    run = tempfile.mkdtemp(prefix="unvme-run-", dir="/tmp")
    e["UNVME_RUN_DIR"] = run
    yield e
    shutil.rmtree(run, ignore_errors=True)


@pytest.fixture
def unvme(env, tmp_path):
    assert TOOL.exists(), f"{TOOL} is not built (set UNVME_BUILD to the build directory)"
    return Unvme(env, tmp_path)


ARCHIVE_LIBS = ["-ljson-c", "-lssl", "-lcrypto", "-luring", "-lz", "-lpthread", "-lm"]


def archive_libs(archive):
    """What a program linked with libunvme.a needs after it: the libraries every build uses,
    and rdma-core's when the archive holds the NVMe/RDMA transport (-Dtransport_rdma=auto,
    on when rdma-core's headers are there)."""
    r = subprocess.run(["nm", "-u", str(archive)], capture_output=True, text=True, check=True)
    needs = {line.split()[-1] for line in r.stdout.splitlines() if line.strip()}
    rdma = any(n.startswith(("ibv_", "rdma_")) for n in needs)
    return ARCHIVE_LIBS + (["-lrdmacm", "-libverbs"] if rdma else [])


def block_pattern(lba, lba_size, seed=0):
    """Distinct, position-dependent content for one logical block."""
    head = f"blk{lba:012d}s{seed:04d}".encode()
    n = lba_size - len(head)
    shift = bytes((x + lba * 131 + seed) & 0xFF for x in range(256))
    return head + (_CYCLE * (n // 256 + 1))[:n].translate(shift)


_CYCLE = bytes((i * 7) & 0xFF for i in range(256))


def json_docs(text):
    """Every JSON document in text, in order (batch prints one per command)."""
    dec = json.JSONDecoder()
    docs, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return docs
        doc, i = dec.raw_decode(text, i)
        docs.append(doc)


def hex_data(doc):
    """The bytes of a JSON hex dump ({"length": n, "data": "<hex>"})."""
    data = bytes.fromhex(doc["data"])
    assert len(data) == doc["length"]
    return data
