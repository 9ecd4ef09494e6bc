# SPDX-License-Identifier: BSD-3-Clause
"""The transports for what the kernel keeps, driven as a user would, on the one such device
every machine has: a regular file (file:///path, or a bare path). The file goes through the
same io_uring data path as a kernel block device (docs/kernel-backends.md); the passthrough
transport itself is tested against real (QEMU) NVMe controllers in tests/qemu/uring_guest.sh.

Every tool works on it: unvme's commands, unvme perf, the fio engine and the KV SDK in LBA
mode; and the file holds exactly what was written, read back without uNVMe.
"""
import json
import os
import shutil
import subprocess

import pytest

from conftest import TOOL, build_dir

ENGINE = build_dir() / "plugins" / "fio" / "unvme-fio.so"
KV_PERF = build_dir() / "tools" / "kv" / "kv_perf"
MIB = 1 << 20


@pytest.fixture
def img(tmp_path):
    return tmp_path / "disk.img"


def uri(path, **opts):
    q = "&".join(f"{k}={v}" for k, v in opts.items())
    return f"file://{path}" + (f"?{q}" if q else "")


def test_identity_and_namespace(unvme, img):
    dev = uri(img, size="64M", lba=4096)
    j = unvme.ok("id-ctrl", dev, "-o", "json").json()
    assert j["mn"].strip() == "uNVMe file backend"
    assert j["sn"].startswith("FILE") and j["nn"] == 1
    assert img.stat().st_size == 64 * MIB  # created with size=
    ns = unvme.ok("id-ns", uri(img, lba=4096), "-n", 1, "-o", "json").json()
    assert ns["nsze"] == 64 * MIB // 4096
    # a bare path takes the file as it is, with 512-byte blocks
    ns = unvme.ok("id-ns", str(img), "-n", 1, "-o", "json").json()
    assert ns["nsze"] == 64 * MIB // 512
    assert unvme.ok("list-ns", str(img), "-o", "json").json() == {"nsid_list": [{"nsid": 1}]}
    # the same identity every time: the serial comes from the path
    assert unvme.ok("id-ctrl", str(img), "-o", "json").json()["sn"] == j["sn"]


def test_list_says_how_it_is_reached(unvme, img):
    env = dict(unvme.env, UNVME_DEVICES=f"img={uri(img, size='8M')}")
    p = subprocess.run([str(TOOL), "list"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "uNVMe file backend" in p.stdout
    assert "via regular file" in p.stdout and "io_uring" in p.stdout


def test_data_lands_in_the_file(unvme, img, tmp_path):
    dev = uri(img, size="16M")
    unvme.ok("write", dev, "-s", 100, "-c", 7, "-p", "0x5a")
    with open(img, "rb") as f:
        f.seek(100 * 512)
        assert f.read(4096) == b"Z" * 4096
    # written behind uNVMe's back, read through it
    with open(img, "r+b") as f:
        f.seek(200 * 512)
        f.write(bytes(range(256)) * 16)
    out = tmp_path / "r.bin"
    unvme.ok("read", str(img), "-s", 200, "-c", 7, "-d", out)
    assert out.read_bytes() == bytes(range(256)) * 16
    assert unvme.ok("compare", str(img), "-s", 200, "-c", 7, "-d", out).rc == 0
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\0" * 4096)
    r = unvme.run("compare", str(img), "-s", 200, "-c", 7, "-d", bad)
    assert r.rc == 1 and "Compare Failure" in r.err
    unvme.ok("write-zeroes", str(img), "-s", 200, "-c", 7)
    with open(img, "rb") as f:
        f.seek(200 * 512)
        assert f.read(4096) == b"\0" * 4096
    unvme.ok("flush", str(img))


def test_controller_statuses(unvme, img):
    dev = uri(img, size="1M")
    r = unvme.run("read", dev, "-s", 2047, "-c", 1, "-d", "/dev/null")
    assert r.rc == 1 and "LBA Out of Range" in r.err
    r = unvme.run("io-passthru", str(img), "-O", "0x7a", "-l", 4096, "-r")
    assert r.rc == 1 and "Invalid Command Opcode" in r.err
    r = unvme.run("smart-log", str(img))
    assert r.rc == 1 and "Invalid Log Page" in r.err
    r = unvme.run("show-regs", str(img))
    assert r.rc == 3 and "no controller registers" in r.err
    r = unvme.run("format", str(img), "-n", 1, "--force")
    assert r.rc == 1 and "Invalid Command Opcode" in r.err
    assert unvme.ok("reset", str(img)).rc == 0


@pytest.mark.parametrize("opts", [{}, {"fixedbufs": 0}, {"direct": 0}])
def test_perf_verify(unvme, img, opts):
    dev = uri(img, size="16M", **opts)
    j = unvme.ok("perf", dev, "-w", "randrw", "-V", "-q", 32, "-t", 1, "-o", "json").json()
    assert j["total"]["ios"] > 0 and j["total"]["errors"] == 0
    # and the stamps are really in the file: a second, read-only run checks them
    j = unvme.ok("perf", str(img), "-w", "randread", "-V", "-q", 8, "-t", 1, "-o", "json").json()
    assert j["total"]["ios"] > 0 and j["total"]["errors"] == 0


def test_perf_header_names_the_path(unvme, img):
    r = unvme.ok("perf", uri(img, size="8M"), "-t", 1, "-q", 4)
    assert "regular file" in r.out and "io_uring" in r.out


def test_errors_a_user_meets(unvme, img, tmp_path):
    r = unvme.run("id-ctrl", uri(img))
    assert r.rc == 3 and "does not exist" in r.err and "size=" in r.err
    r = unvme.run("id-ctrl", uri(img, size="8M", lba=520))
    assert r.rc == 3 and "lba=520" in r.err
    r = unvme.run("id-ctrl", uri(img, size="8M", colour="red"))
    assert r.rc == 3 and "unknown option 'colour'" in r.err
    unvme.ok("id-ctrl", uri(img, size="8M"))
    r = unvme.run("id-ctrl", uri(img, size="16M"))
    assert r.rc == 3 and "8388608 bytes" in r.err
    r = unvme.run("id-ctrl", "/dev/ng97n5")
    assert r.rc == 3 and "nvme list" in r.err
    r = unvme.run("id-ctrl", "/dev/null")
    assert r.rc == 3 and "not an NVMe one" in r.err
    # a file another program holds
    holder = subprocess.Popen(["flock", "-x", str(img), "sleep", "30"])
    try:
        for _ in range(100):
            r = unvme.run("id-ctrl", str(img))
            if r.rc:
                break
        assert r.rc == 3 and "in use by another program" in r.err
    finally:
        holder.kill()
        holder.wait()


def test_batch_keeps_one_open_file(unvme, img):
    """In `unvme batch` later lines find the same controller (the file stays locked by it)."""
    r = unvme.batch(uri(img, size="4M"), "write -s 0 -c 0 -p 0x11\nread -s 0 -c 0 -o json\n")
    assert r.rc == 0, r
    assert '"length":512' in r.out.replace(" ", "")


# ---- the fio engine ----

@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_engine_on_a_file(env, img, tmp_path):
    assert ENGINE.exists()
    with open(img, "wb") as f:
        f.truncate(32 * MIB)
    base = ["fio", f"--ioengine=external:{ENGINE}", f"--filename={img}", "--thread=1",
            "--size=16M", "--iodepth=16", "--bs=4k", "--rw=randwrite", "--verify=crc32c",
            "--randrepeat=1", "--output-format=normal"]
    e = dict(env, UNVME_QUIET="1")
    for extra in (["--name=w", "--do_verify=0"], ["--name=v", "--verify_only=1"]):
        p = subprocess.run(base + extra, env=e, cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0 and " err= 0" in p.stdout, p.stdout + p.stderr


# ---- the KV SDK in LBA mode ----

def kv_perf(env, *args):
    p = subprocess.run([str(KV_PERF), *[str(a) for a in args], "-J"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def test_kv_sdk_lba_mode_sync(env, img):
    j = kv_perf(env, "-w", "-r", "-x", "-e", "-n", 1000, "-m", "lba", "-d", uri(img, size="64M"))
    assert j["ssd_type"] == "lba" and j["result"] == "PASS"


def test_kv_sdk_lba_mode_async_split_queues(env, img, tmp_path):
    """Async: callers submit on their core's queue, the completion thread polls it (split)."""
    cfg = tmp_path / "lba.json"
    cfg.write_text(json.dumps({"ssd_type": "lba", "device_description": {
        "dev_id": uri(img, size="64M"), "core_mask": "1", "sync_mask": "0",
        "cq_thread_mask": "2", "queue_depth": 16}}))
    j = kv_perf(env, "-w", "-r", "-x", "-n", 2000, "-j", cfg)
    assert j["ssd_type"] == "lba" and j["result"] == "PASS"
    # what the SDK stored (LBA mode: the key is the LBA) is in the file ...
    assert img.stat().st_size == 64 * MIB and any(img.read_bytes())
    # ... and deleting (Dataset Management, deallocate) punches it out again
    j = kv_perf(env, "-e", "-n", 2000, "-j", cfg)
    assert j["result"] == "PASS"
    assert not any(img.read_bytes())
