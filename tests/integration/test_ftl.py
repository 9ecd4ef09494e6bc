# SPDX-License-Identifier: BSD-3-Clause
"""The host FTL (ftl://) as a user meets it: a block device like any other for the tool's I/O
commands, perf and fio, whose data outlives the process, and whose flushed writes survive a
kill -9 of the process writing them."""
import os
import random
import shutil
import signal
import subprocess
import time

import pytest

from conftest import CRASH_WRITER, block_pattern, hex_data

SPAN = 1000  # LBAs reserved per crash round


def expected_block(lba, rnd, lba_size):
    """What tests/integration/crash_writer.c writes to lba in round rnd."""
    head = b"CRASHTST" + lba.to_bytes(8, "little") + rnd.to_bytes(8, "little")
    return head + bytes([(lba * 7 + rnd) & 0xFF]) * (lba_size - len(head))


def run_round(unvme, dev, rnd, kill_after):
    """Runs crash_writer on dev until it acknowledged kill_after flushed blocks, then kills it
    with SIGKILL; returns the acknowledged LBAs and the LBA size."""
    proc = subprocess.Popen([str(CRASH_WRITER), dev, "1", str(rnd * SPAN), str(SPAN), str(rnd)],
                            env=unvme.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    acked = []
    lba_size = None
    deadline = time.monotonic() + 60
    try:
        for line in proc.stdout:
            if line.startswith("READY"):
                lba_size = int(line.split()[1])
            elif line.startswith("ACK"):
                acked.append(int(line.split()[1]))
                if len(acked) >= kill_after:
                    os.kill(proc.pid, signal.SIGKILL)
                    break
            assert time.monotonic() < deadline, "crash_writer is too slow"
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"crash_writer ended on its own: {err}"
    assert lba_size, f"crash_writer never got ready: {err}"
    return acked, lba_size


def ftl_dev(unvme, name="f", size="32M", opts="op=20", zone="512K"):
    inner = f"emu://{name}?ns=zns,zone={zone}:{size}:4096:{unvme.tmp / (name + '.img')}"
    return f"ftl://{inner}?{opts}" if opts else f"ftl://{inner}"


def test_block_commands(unvme):
    dev = ftl_dev(unvme)
    doc = unvme.ok("id-ns", dev, "-o", "json").json()
    blocks = doc["nsze"]
    assert 4096 < blocks < 8192  # 32 MiB less the checkpoint zones, headers and spare
    ctrl = unvme.ok("id-ctrl", dev, "-o", "json").json()
    assert ctrl["mn"].startswith("uNVMe Host FTL")
    data = b"".join(block_pattern(100 + i, 4096) for i in range(8))
    src = unvme.tmp / "in.bin"
    src.write_bytes(data)
    unvme.ok("write", dev, "-s", 100, "-c", 7, "-d", src)
    # a new process: the FTL is recovered from its checkpoint
    out = unvme.tmp / "out.bin"
    unvme.ok("read", dev, "-s", 100, "-c", 7, "-d", out)
    assert out.read_bytes() == data
    unvme.ok("compare", dev, "-s", 100, "-c", 7, "-d", src)
    unvme.ok("deallocate", dev, "-s", 102, "-c", 1)
    doc = unvme.ok("read", dev, "-s", 101, "-c", 2, "-o", "json").json()
    assert hex_data(doc) == block_pattern(101, 4096) + bytes(8192)
    unvme.ok("write-zeroes", dev, "-s", 105, "-c", 0)
    assert hex_data(unvme.ok("read", dev, "-s", 105, "-o", "json").json()) == bytes(4096)
    r = unvme.run("read", dev, "-s", blocks, "-c", 0)
    assert r.rc == 1 and "LBA Out of Range" in r.err, r
    unvme.ok("flush", dev)
    # Format: everything reads as zeroes again
    unvme.ok("format", dev, "-n", 1, "--force")
    assert hex_data(unvme.ok("read", dev, "-s", 100, "-o", "json").json()) == bytes(4096)


def test_bad_options_are_named(unvme):
    r = unvme.run("id-ns", ftl_dev(unvme, opts="op=200"))
    assert r.rc == 3 and "op=200" in r.err, r
    r = unvme.run("id-ns", ftl_dev(unvme, opts="op=20&gc=lru"))
    assert r.rc == 3 and "gc=lru" in r.err, r
    r = unvme.run("id-ns", ftl_dev(unvme, "tiny", size="4M", opts="op=2"))
    assert r.rc == 3 and "raise op" in r.err, r
    # a zoned device that holds other data is not taken over silently
    inner = f"emu://o?ns=zns,zone=512K:32M:4096:{unvme.tmp / 'o.img'}"
    unvme.ok("zns", "zone-append", inner, "-s", 1024, "--pattern", 1)
    r = unvme.run("id-ns", f"ftl://{inner}")
    assert r.rc == 3 and "format=1" in r.err, r
    unvme.ok("id-ns", f"ftl://{inner}?format=1")


def test_perf_random_writes_through_gc(unvme):
    dev = ftl_dev(unvme, "p", size="16M", opts="op=25&gc=cb", zone="256K")
    doc = unvme.ok("perf", dev, "-w", "randwrite", "-q", 16, "-t", 2, "-o", "json").json()
    assert doc["total"]["ios"] > 0 and doc["total"]["errors"] == 0, doc
    # perf --verify: writes stamp blocks, reads check them, through garbage collection
    doc = unvme.ok("perf", dev, "-w", "randrw", "-V", "-q", 8, "-t", 2, "-o", "json").json()
    assert doc["total"]["errors"] == 0 and doc["total"]["verify_errors"] == 0, doc


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_verify(unvme):
    from test_fio_engine import ENGINE, Fio, esc
    fio = Fio(dict(unvme.env, UNVME_QUIET="1"), unvme.tmp)
    dev = ftl_dev(unvme, "fio", size="32M", opts="op=20", zone="512K")
    args = [f"--filename={esc(dev)}", "--thread=1", "--bs=4k", "--iodepth=16", "--size=16M",
            "--verify=crc32c", "--randrepeat=1"]
    fio.ok("--name=w", *args, "--rw=randwrite", "--do_verify=0")
    fio.ok("--name=v", *args, "--rw=randwrite", "--verify_only=1")
    assert ENGINE.exists()


def test_acknowledged_blocks_survive_sigkill(unvme):
    """crash_writer writes a block, flushes, acknowledges; it is killed at random moments."""
    dev = ftl_dev(unvme, "crash", size="32M", opts="op=20", zone="256K")
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    history = []
    for rnd in range(4):
        acked, lba_size = run_round(unvme, dev, rnd, rng.randint(20, 400))
        assert lba_size == 4096
        history.append((rnd, acked))
        for r, blocks in history:
            out = unvme.tmp / f"v{r}.bin"
            unvme.ok("read", dev, "-s", r * 1000, "-c", len(blocks) - 1, "-d", out)
            data = out.read_bytes()
            for i, lba in enumerate(blocks):
                assert data[i * 4096:(i + 1) * 4096] == expected_block(lba, r, 4096), \
                    f"round {r}: acknowledged LBA {lba} lost after the kill in round {rnd}"
