# SPDX-License-Identifier: BSD-3-Clause
"""Several processes on one emulated controller, driven as a user would: an application
(`unvme perf`, or `unvme monitor` holding the device idle) is the primary; `unvme` commands
run meanwhile attach as secondaries and get their own queues. Admin commands, logs and KV
commands work during the primary's I/O; two perf processes run at once; data one process
writes another reads; a secondary killed with SIGKILL loses only its own queues; when the
primary is killed, secondaries fail with a message instead of hanging and a new process
takes over; UNVME_MP=0 turns sharing off."""
import contextlib
import glob
import os
import signal
import subprocess
import time

import pytest

from conftest import TOOL, build_dir

KV_DB_BENCH = build_dir() / "tools" / "kv_db_bench" / "kv_db_bench"


def start(unvme, *args, env_extra=None):
    env = dict(unvme.env, **(env_extra or {}))
    return subprocess.Popen([str(TOOL), *[str(a) for a in args]], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_primary(unvme, proc, timeout=20):
    """Until the primary serves secondaries (its socket is in the run directory)."""
    deadline = time.monotonic() + timeout
    run = unvme.env["UNVME_RUN_DIR"]
    while time.monotonic() < deadline:
        if glob.glob(os.path.join(run, "ctrl-*.sock")):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the primary did not start serving")


def finish(proc, timeout=60):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


@contextlib.contextmanager
def holding(unvme, dev):
    """`unvme monitor` holds dev as its idle primary for the block."""
    holder = start(unvme, "monitor", dev)
    try:
        wait_primary(unvme, holder)
        yield holder
    finally:
        holder.send_signal(signal.SIGINT)
        finish(holder)


def finish_clean(proc):
    """The application ran to its end with no failed I/O."""
    rc, out, err = finish(proc)
    assert rc == 0, err
    assert "failed" not in err, err


def test_cli_commands_as_a_secondary_during_io(unvme):
    dev = "emu://mp1?ns=mem:256M:512"
    app = start(unvme, "perf", dev, "-w", "randwrite", "-q", "8", "-t", "6")
    wait_primary(unvme, app)
    time.sleep(0.5)
    ident = unvme.ok("id-ctrl", dev, "-o", "json").json()
    assert ident["sn"].startswith("EMU")
    smart1 = unvme.ok("smart-log", dev, "-o", "json").json()
    # the counters are the primary's device's: it has been writing
    assert smart1["data_units_written"] > 0, smart1
    time.sleep(0.3)
    smart2 = unvme.ok("smart-log", dev, "-o", "json").json()
    assert smart2["data_units_written"] > smart1["data_units_written"]
    unvme.ok("error-log", dev, "-o", "json")
    regs = unvme.ok("show-regs", dev, "-o", "json").json()
    assert regs["csts"] & 1  # ready: read from the primary's controller
    # a secondary may not reset the controller the primary runs
    r = unvme.run("reset", dev)
    assert r.rc != 0 and "primary process" in r.err, r
    finish_clean(app)


def test_two_perf_processes_at_once(unvme):
    dev = "emu://mp2?ns=mem:256M:512&mode=thread"
    app = start(unvme, "perf", dev, "-w", "randread", "-q", "8", "-t", "5")
    wait_primary(unvme, app)
    r = unvme.ok("perf", dev, "-w", "randwrite", "-q", "8", "-t", "1", timeout=60)
    assert "shared with the primary process" in r.out, r
    total = [line for line in r.out.splitlines() if line.startswith("Total")]
    assert total and float(total[0].split()[1]) > 0, r
    finish_clean(app)


def test_data_one_process_writes_another_reads(unvme, tmp_path):
    dev = "emu://mp3?ns=mem:64M:512"
    with holding(unvme, dev):
        data = bytes((i * 13 + 7) & 0xFF for i in range(4096))
        src = tmp_path / "in.bin"
        src.write_bytes(data)
        unvme.ok("write", dev, "-s", "100", "-d", src)
        r = unvme.run("read", dev, "-s", "100", "-c", "7", "-b", binary=True)
        assert r.rc == 0, r
        assert r.out == data


def kv_round_trip(unvme, tmp_path, dev, key, value):
    """One process stores key, another retrieves it."""
    val = tmp_path / "v.bin"
    val.write_bytes(value)
    unvme.ok("kv-write", dev, "-k", key, "-v", val)
    got = tmp_path / "got.bin"
    unvme.ok("kv-read", dev, "-k", key, "-v", got)
    assert got.read_bytes()[:len(value)] == value


def test_kv_commands_as_secondaries(unvme, tmp_path):
    dev = "emu://mp4?ns=kv:64M"
    with holding(unvme, dev):
        kv_round_trip(unvme, tmp_path, dev, "shared-key", b"value-from-process-1")
        unvme.ok("kv-exist", dev, "-k", "shared-key")
        unvme.ok("kv-it-info", dev)


def test_two_kv_sdk_processes_with_the_same_core_mask(unvme, tmp_path):
    """The original SDK failed a second process whose cores overlapped the first's; here the
    KV SDK of a second process (unvme kv-*, default configuration, the same cores) works on
    the device while kv_db_bench's KV SDK fills it."""
    dev = "emu://mp9?ns=kv:1G"
    app = subprocess.Popen([str(KV_DB_BENCH), f"--device={dev}", "--benchmarks=fillrandom,readrandom",
                            "--num=1500000"], env=unvme.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    wait_primary(unvme, app)
    kv_round_trip(unvme, tmp_path, dev, "second-process-key", b"from-the-second-sdk")
    out, err = app.communicate(timeout=300)
    assert app.returncode == 0, err
    assert "fillrandom" in out and "readrandom" in out, out


def perf_pair(unvme, dev, primary_seconds, secondary_seconds):
    """A primary's perf (random reads) and, once it serves, a secondary's (random writes),
    both running for a while."""
    app = start(unvme, "perf", dev, "-w", "randread", "-q", "8", "-t", primary_seconds)
    wait_primary(unvme, app)
    sec = start(unvme, "perf", dev, "-w", "randwrite", "-q", "16", "-t", secondary_seconds)
    time.sleep(1.5)
    return app, sec


def test_killed_secondary_loses_only_its_queues(unvme):
    dev = "emu://mp5?ns=mem:256M:512&mode=thread"
    app, victim = perf_pair(unvme, dev, 6, 30)
    victim.send_signal(signal.SIGKILL)
    finish(victim)
    # its queue ids and memory were given back: a new secondary gets queues again
    time.sleep(0.3)
    unvme.ok("perf", dev, "-w", "randwrite", "-q", "8", "-t", "1", timeout=60)
    finish_clean(app)


def test_killed_primary_fails_secondaries_and_a_new_one_takes_over(unvme):
    dev = "emu://mp6?ns=mem:256M:512&mode=thread"
    app, sec = perf_pair(unvme, dev, 60, 20)
    app.send_signal(signal.SIGKILL)
    finish(app)
    t0 = time.monotonic()
    rc, out, err = finish(sec, timeout=30)
    assert time.monotonic() - t0 < 15  # no hang: its next poll sees the device gone
    assert rc == 3, err
    assert "primary process" in err and "gone" in err, err
    # the lock went with the dead primary: the next process is the primary itself
    r = unvme.ok("id-ctrl", dev, "-o", "json")
    assert r.json()["sn"].startswith("EMU")


def test_primary_reset_ends_the_secondaries_sessions(unvme):
    dev = "emu://mp8?ns=mem:256M:512&mode=thread"
    app = subprocess.Popen([str(TOOL), "batch", dev], env=unvme.env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    app.stdin.write("perf -w randread -q 1 -t 3\nreset\nperf -w randread -q 1 -t 1\n")
    app.stdin.close()
    wait_primary(unvme, app)
    sec = start(unvme, "perf", dev, "-w", "randwrite", "-q", "8", "-t", "30")
    rc, out, err = finish(sec, timeout=60)
    # its commands come back aborted (SQ deletion) or it finds the device gone
    assert rc == 3 and ("primary process" in err or "SQ Deletion" in err), err
    arc = app.wait(timeout=60)
    assert arc == 0, app.stderr.read()
    # and the device takes new secondaries... or a new primary once the batch is over
    unvme.ok("id-ctrl", dev, "-o", "json")


def test_sharing_off_gives_each_process_its_own_device(unvme, tmp_path):
    dev = unvme.file_dev("mp7", size="16M")
    with holding(unvme, dev):
        # shared: a secondary reads the primary's namespace
        unvme.ok("read", dev, "-s", "0", "-c", "0", "-b", binary=True)
        # not shared: a second device on the same file, which the first holds locked
        env = dict(unvme.env, UNVME_MP="0")
        p = subprocess.run([str(TOOL), "read", dev, "-s", "0", "-c", "0"], env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and "in use by another process" in p.stderr, p.stderr
