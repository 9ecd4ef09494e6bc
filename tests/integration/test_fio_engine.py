# SPDX-License-Identifier: BSD-3-Clause
"""The fio ioengine (plugins/fio): fio itself drives it, as a storage engineer would.

Data is checked by fio's own verify (crc32c headers carry the offset, so a value stored under
the wrong key or at the wrong LBA fails), often in a second fio process reading what a first
one wrote to a file-backed namespace. No timing is asserted here: plugins/fio/bench_fio.py
measures.
"""
import json
import os
import shutil
import subprocess

import pytest

from conftest import build_dir

ENGINE = build_dir() / "plugins" / "fio" / "unvme-fio.so"

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


class Fio:
    def __init__(self, env, tmp):
        self.env = env
        self.tmp = tmp

    def run(self, *args, engine=True, env=None, timeout=180):
        cmd = ["fio", "--output-format=normal"]
        if engine:
            cmd.append(f"--ioengine=external:{ENGINE}")  # engine options must come after it
        cmd += [str(a) for a in args]
        # in the test's directory: fio leaves its verify state files where it runs
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=env or self.env, cwd=self.tmp)
        assert p.returncode >= 0, f"fio died of signal {-p.returncode}: {cmd}\n{p.stderr}"
        p.cmd = cmd
        return p

    def ok(self, *args, **kw):
        p = self.run(*args, **kw)
        assert p.returncode == 0, f"{p.cmd}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
        assert " err= 0" in p.stdout, p.stdout
        return p

    def fails(self, *args, expect, **kw):
        """A refused job: non-zero exit and the expected explanation among fio's lines."""
        p = self.run(*args, **kw)
        out = p.stdout + p.stderr
        assert p.returncode != 0, f"{p.cmd} succeeded:\n{out}"
        hits = [l for l in out.splitlines() if expect in l]
        assert hits, f"no line with {expect!r} in:\n{out}"
        return hits[0]

    def config(self, name, devices, ssd_type="kv", **extra):
        cfg = {"ssd_type": ssd_type, "log_file": str(self.tmp / "kvsdk.log"),
               "device_description": devices, **extra}
        path = self.tmp / name
        path.write_text(json.dumps(cfg))
        return path


def esc(uri):
    """fio splits filename on ':'; '\\:' keeps a ':' inside a name."""
    return uri.replace(":", "\\:")


@pytest.fixture
def fio(env, tmp_path):
    assert ENGINE.exists(), f"{ENGINE} is not built (fio is installed, so meson should build it)"
    e = dict(env, UNVME_QUIET="1")
    return Fio(e, tmp_path)


def kv_uri(tmp, name="kv", cap="256M"):
    return f"emu://{name}?ns=kv:{cap}:512:{tmp / (name + '.log')}"


def blk_uri(tmp, name="blk", size="64M", lba=4096):
    return f"emu://{name}?ns=file:{size}:{lba}:{tmp / (name + '.img')}"


COMMON = ["--thread=1", "--size=8M", "--iodepth=16", "--iodepth_batch_submit=4"]


# ---- write, then verify in another process ----

@pytest.mark.parametrize("rw", ["write", "randwrite"])
@pytest.mark.parametrize("kind", ["block", "block512", "kv", "kv_long_key"])
def test_write_then_verify(fio, tmp_path, kind, rw):
    if kind.startswith("kv"):
        dev, extra = kv_uri(tmp_path), ["--ks=40"] if kind == "kv_long_key" else []
    else:
        dev, extra = blk_uri(tmp_path, lba=512 if kind == "block512" else 4096), []
    args = [f"--filename={esc(dev)}", *COMMON, "--bs=4k", f"--rw={rw}", "--verify=crc32c",
            "--randrepeat=1", *extra]
    fio.ok("--name=write", *args, "--do_verify=0")
    # A fresh process reads back what the first one left on the file-backed namespace.
    p = fio.ok("--name=verify", *args, "--verify_only=1")
    assert "verify" not in p.stderr.lower(), p.stderr


def test_verify_catches_a_wrong_key_size(fio, tmp_path):
    """The key is derived from the offset in ks bytes: reading with another ks finds nothing."""
    dev = kv_uri(tmp_path)
    args = [f"--filename={esc(dev)}", *COMMON, "--bs=4k", "--rw=write", "--verify=crc32c"]
    fio.ok("--name=w", *args, "--ks=16", "--do_verify=0")
    line = fio.fails("--name=v", *args, "--ks=24", "--verify_only=1", expect="does not exist")
    assert "unvme:" in line


def test_mixed_sizes_and_flush_on_block(fio, tmp_path):
    dev = blk_uri(tmp_path, lba=512)
    fio.ok("--name=mix", f"--filename={esc(dev)}", *COMMON, "--rw=randwrite", "--bsrange=512-64k",
           "--fsync=4", "--verify=crc32c")
    fio.ok("--name=fdatasync", f"--filename={esc(dev)}", *COMMON, "--rw=write", "--bs=4k",
           "--fdatasync=2")


def test_kv_values_of_any_dword_size(fio, tmp_path):
    fio.ok("--name=kv", f"--filename={esc(kv_uri(tmp_path))}", *COMMON, "--rw=randwrite",
           "--bsrange=128-256k", "--blockalign=4", "--verify=crc32c")


# ---- several devices, several jobs ----

def test_several_devices_in_one_job(fio, tmp_path):
    a, b = kv_uri(tmp_path, "kva"), kv_uri(tmp_path, "kvb")
    cfg = fio.config("two.json", [{"dev_id": a, "core_mask": 1, "sync_mask": 1},
                                  {"dev_id": b, "core_mask": 1, "sync_mask": 1}])
    args = [f"--json_path={cfg}", f"--filename={esc(a)}:{esc(b)}", *COMMON, "--size=16M",
            "--bs=4k", "--rw=randwrite", "--verify=crc32c"]
    fio.ok("--name=two", *args, "--do_verify=0")
    fio.ok("--name=two", *args, "--verify_only=1")
    # fio spread the values over both devices: both logs hold several MiB
    for name in ("kva", "kvb"):
        assert (tmp_path / f"{name}.log").stat().st_size > 4 << 20


def test_several_block_devices_by_alias_and_pci_address(fio, tmp_path):
    a, b = blk_uri(tmp_path, "ba"), blk_uri(tmp_path, "bb")
    env = dict(fio.env, UNVME_DEVICES=f"0000:02:00.0={a};fast={b}")
    cfg = fio.config("lba.json", [{"dev_id": "0000:02:00.0", "core_mask": 1},
                                  {"dev_id": "fast", "core_mask": 1}], ssd_type="lba")
    # the original plugin's dotted PCI address, and an alias, joined by ':'
    args = [f"--json_path={cfg}", "--filename=0000.02.00.0:fast", *COMMON, "--size=16M",
            "--bs=8k", "--rw=randwrite", "--verify=crc32c"]
    fio.ok("--name=w", *args, "--do_verify=0", env=env)
    fio.ok("--name=v", *args, "--verify_only=1", env=env)


def test_several_jobs_on_one_device(fio, tmp_path):
    dev = kv_uri(tmp_path, cap="512M")
    cfg = fio.config("one.json", [{"dev_id": dev, "core_mask": 1, "sync_mask": 1}])
    args = [f"--json_path={cfg}", f"--filename={esc(dev)}", "--thread=1", "--iodepth=8",
            "--bs=4k", "--size=4M", "--offset_increment=4M", "--numjobs=3",
            "--rw=randwrite", "--verify=crc32c"]
    p = fio.ok("--name=jobs", *args, "--do_verify=0")
    # core_mask 1 has one queue: the second and third job share its core, with a warning
    warn = [l for l in (p.stdout + p.stderr).splitlines() if "share cores" in l]
    assert len(warn) == 1, p.stdout + p.stderr
    assert "(core_mask 0x1)" in warn[0] and "from job 2 on" in warn[0]
    fio.ok("--name=jobs", *args, "--verify_only=1")


def test_jobs_within_core_mask_do_not_warn(fio, tmp_path):
    dev = blk_uri(tmp_path)
    cfg = fio.config("two.json", [{"dev_id": dev, "core_mask": 3, "sync_mask": 3}],
                     ssd_type="lba")
    p = fio.ok("--name=jobs", f"--json_path={cfg}", f"--filename={esc(dev)}", "--thread=1",
               "--bs=4k", "--size=4M", "--offset_increment=4M", "--numjobs=2",
               "--rw=randwrite", "--verify=crc32c")
    assert "share cores" not in p.stdout + p.stderr


# ---- trim ----

def test_jobs_beyond_every_cpu_warn_without_a_mask(fio, tmp_path):
    # no json_path: every CPU fio may use is a core; one job more than CPUs shares
    ncpu = len(os.sched_getaffinity(0))
    dev = blk_uri(tmp_path, size="256M")
    p = fio.ok("--name=jobs", f"--filename={esc(dev)}", "--thread=1", "--bs=4k", "--size=1M",
               "--offset_increment=1M", f"--numjobs={ncpu + 1}", "--rw=write")
    warn = [l for l in (p.stdout + p.stderr).splitlines() if "share cores" in l]
    assert len(warn) == 1, p.stdout + p.stderr
    assert "every CPU" in warn[0] and "0x0" not in warn[0], warn[0]


def test_offset_beyond_the_namespace_is_refused(fio, tmp_path):
    dev = blk_uri(tmp_path, size="64M")
    base = [f"--filename={esc(dev)}", "--thread=1", "--bs=4k", "--rw=read"]
    line = fio.fails("--name=far", *base, "--offset=64M", expect="beyond the end of the namespace")
    assert "64M" in line or "67108864" in line
    fio.fails("--name=far", *base, "--offset=1T", expect="beyond the end of the namespace")
    # a later job of numjobs that offset_increment pushes out is refused too
    fio.fails("--name=far", *base, "--size=4M", "--offset_increment=70M", "--numjobs=2",
              expect="beyond the end of the namespace")
    # the KV namespace's keys stand for offsets within its capacity as well
    kv = kv_uri(tmp_path, cap="64M")
    fio.fails("--name=far", f"--filename={esc(kv)}", "--thread=1", "--bs=4k", "--rw=read",
              "--offset=64M", expect="beyond the end of the namespace")
    # inside, it runs
    fio.ok("--name=near", *base, "--offset=60M", "--size=4M")


def test_block_trim_then_read_gives_zeroes(fio, tmp_path):
    dev = esc(blk_uri(tmp_path))
    args = [f"--filename={dev}", *COMMON, "--bs=64k"]
    fio.ok("--name=fill", *args, "--rw=write", "--buffer_pattern=0xab")
    # before the trim the blocks are not zero (so the check below can fail)
    fio.fails("--name=before", *args, "--rw=read", "--verify=pattern", "--verify_pattern=0",
              expect="verify")
    fio.ok("--name=trim", *args, "--rw=trim")
    fio.ok("--name=after", *args, "--rw=read", "--verify=pattern", "--verify_pattern=0")


def test_kv_trim_deletes_then_read_fails(fio, tmp_path):
    dev = esc(kv_uri(tmp_path))
    args = [f"--filename={dev}", *COMMON, "--bs=4k"]
    fio.ok("--name=store", *args, "--rw=write")
    fio.ok("--name=retrieve", *args, "--rw=read")
    fio.ok("--name=delete", *args, "--rw=trim")
    line = fio.fails("--name=retrieve", *args, "--rw=read", expect="unvme:")
    assert "retrieve of 4096 bytes at offset 0" in line and "does not exist" in line
    # deleting keys that are gone is not an error (as trimming unwritten blocks is not)
    fio.ok("--name=delete-again", *args, "--rw=trim")


# ---- bad input: one clear line and a non-zero exit ----

def test_missing_config_file(fio, tmp_path):
    line = fio.fails("--name=x", f"--json_path={tmp_path / 'nope.json'}", "--filename=emu0",
                     *COMMON, "--rw=write", "--bs=4k", expect="unvme:")
    assert "nope.json" in line and "No such file" in line


def test_broken_config_file(fio, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"device_description": [ {"dev_id": "emu0", "core_mask": "xyz"} ]}')
    line = fio.fails("--name=x", f"--json_path={bad}", "--filename=emu0", *COMMON,
                     "--rw=write", "--bs=4k", expect="unvme:")
    assert "bad.json" in line and "core_mask" in line


def test_device_not_in_config(fio, tmp_path):
    cfg = fio.config("c.json", [{"dev_id": kv_uri(tmp_path), "core_mask": 1}])
    line = fio.fails("--name=x", f"--json_path={cfg}", f"--filename={esc(kv_uri(tmp_path, 'other'))}",
                     *COMMON, "--rw=write", "--bs=4k", expect="unvme:")
    assert "is not in json_path" in line and "other" in line


def test_unknown_device_without_config(fio, tmp_path):
    line = fio.fails("--name=x", "--filename=nosuchalias", *COMMON, "--rw=write", "--bs=4k",
                     expect="unvme:")
    assert "nosuchalias" in line


def test_misspelt_engine_option(fio, tmp_path):
    line = fio.fails("--name=x", "--json_pth=/tmp/x.json", "--filename=emu0", *COMMON,
                     "--rw=write", "--bs=4k", expect="unrecognized option")
    assert "json_pth" in line


def test_bs_over_the_value_limit(fio, tmp_path):
    line = fio.fails("--name=x", f"--filename={esc(kv_uri(tmp_path))}", *COMMON, "--rw=write",
                     "--bs=4M", expect="unvme:")
    assert "larger than the KV value limit of 2 MiB" in line


def test_bs_not_a_multiple_of_the_lba_size(fio, tmp_path):
    line = fio.fails("--name=x", f"--filename={esc(blk_uri(tmp_path))}", *COMMON, "--rw=write",
                     "--bs=512", expect="unvme:")
    assert "4096-byte LBA size" in line


def test_thread_0(fio, tmp_path):
    line = fio.fails("--name=x", f"--filename={esc(kv_uri(tmp_path))}", "--thread=0",
                     "--size=8M", "--rw=write", "--bs=4k", expect="unvme:")
    assert "thread=1 is required" in line


def test_wrong_namespace_kind_for_ssd_type(fio, tmp_path):
    dev = blk_uri(tmp_path)
    cfg = fio.config("kv.json", [{"dev_id": dev, "core_mask": 1}], ssd_type="kv")
    line = fio.fails("--name=x", f"--json_path={cfg}", f"--filename={esc(dev)}", *COMMON,
                     "--rw=write", "--bs=4k", expect="unvme:")
    assert "no key-value namespace" in line


# ---- the engine as fio loads it ----

def test_enghelp_lists_options_with_every_symbol_resolved(fio):
    # fio resolves an engine's symbols lazily: bind them all now, so one that fio does not
    # export fails here instead of killing fio in the middle of a run.
    env = dict(fio.env, LD_BIND_NOW="1")
    p = subprocess.run(["fio", f"--enghelp={ENGINE}"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert "json_path" in p.stdout and "ks" in p.stdout, p.stdout


def test_only_ioengine_is_exported():
    out = subprocess.run(["nm", "-D", "--defined-only", str(ENGINE)], capture_output=True,
                         text=True, check=True).stdout
    names = {l.split()[-1] for l in out.splitlines() if l.strip()}
    assert names - {"_init", "_fini"} == {"ioengine"}, names
