# SPDX-License-Identifier: BSD-3-Clause
"""Persistence across a crash: a writer acknowledges each block only after its flush
completed; it is killed with SIGKILL at a random moment, several times; every acknowledged
block must then read back intact with `unvme read`."""
import os
import random
import signal
import subprocess
import time

from conftest import CRASH_WRITER

ROUNDS = 4
SPAN = 1000  # LBAs reserved per round


def expected_block(lba, rnd, lba_size):
    head = b"CRASHTST" + lba.to_bytes(8, "little") + rnd.to_bytes(8, "little")
    return head + bytes([(lba * 7 + rnd) & 0xFF]) * (lba_size - len(head))


def run_round(unvme, dev, rnd, kill_after):
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


def test_acknowledged_blocks_survive_sigkill(unvme):
    assert CRASH_WRITER.exists(), f"{CRASH_WRITER} is not built"
    dev = unvme.file_dev("crash", size="8M", lba=512)
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    history = []
    for rnd in range(ROUNDS):
        acked, lba_size = run_round(unvme, dev, rnd, rng.randint(1, 60))
        assert acked == list(range(rnd * SPAN, rnd * SPAN + len(acked)))
        history.append((rnd, acked))
        # every block acknowledged so far, in this round and the earlier ones, is intact
        for r, blocks in history:
            out = unvme.tmp / f"verify-{r}.bin"
            unvme.ok("read", dev, "-s", r * SPAN, "-c", len(blocks), "-d", out)
            data = out.read_bytes()
            for i, lba in enumerate(blocks):
                got = data[i * lba_size:(i + 1) * lba_size]
                assert got == expected_block(lba, r, lba_size), \
                    f"round {r}: acknowledged LBA {lba} lost after the crash of round {rnd}"
    # the controller noticed the crashes
    assert unvme.ok("smart-log", dev, "-o", "json").json()["unsafe_shutdowns"] >= 1
