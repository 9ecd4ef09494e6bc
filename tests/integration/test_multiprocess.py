# SPDX-License-Identifier: BSD-3-Clause
"""Several processes on one emulated controller, driven as a user would.

A named or file-backed emulated device lives in a device process of its own (started by the
first open, or by `unvme serve`): every program that opens it is a client with its own
queues. Checked: admin and log commands during another program's I/O; two perf processes at
once; data and keys one process writes another reads; the original guide's iterator flow as
separate commands; the first opener killed, or exiting normally, while another program
writes keys, every acknowledged key read back; a client killed with SIGKILL loses only its
own queues; the device process killed is a removal for its clients (a message, no hang) and
the next open starts a new one on the same files; an idle device process ends; `unvme
serve` start, status, stop. The primary model (UNVME_MP=primary, as a VFIO controller is
run): a secondary fails with a message when its primary is killed, and a new process takes
over; a reset of the primary's controller makes secondaries create their queues again.
UNVME_MP=0 turns sharing off."""
import json
import os
import select
import signal
import subprocess
import time

import pytest

from conftest import TOOL, build_dir

KV_DB_BENCH = build_dir() / "tools" / "kv_db_bench" / "kv_db_bench"
KV_PERF = build_dir() / "tools" / "kv" / "kv_perf"


def start(unvme, *args, env_extra=None, prog=TOOL):
    env = dict(unvme.env, **(env_extra or {}))
    return subprocess.Popen([str(prog), *[str(a) for a in args]], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def status(unvme, dev, env_extra=None):
    env = dict(unvme.env, **(env_extra or {}))
    p = subprocess.run([str(TOOL), "serve", dev, "--status", "-o", "json"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def wait_served(unvme, dev, proc=None, timeout=120, env_extra=None):
    """Until some process runs dev (a device process, or a primary): its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = status(unvme, dev, env_extra)
        if st["running"]:
            return st["pid"]
        if proc is not None:
            assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"nobody serves {dev}")


def finish(proc, timeout=60):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def finish_clean(proc):
    """The application ran to its end with no failed I/O."""
    rc, out, err = finish(proc)
    assert rc == 0, err
    assert "failed" not in err, err


def gone(err):
    """What a program says when the process that ran its device went away: its commands in
    flight came back aborted, or its next call found the device removed."""
    return "gone" in err or "removed" in err or "Aborted due to SQ Deletion" in err


def stop(unvme, dev):
    unvme.ok("serve", dev, "--stop", "-q")


# ---- device processes ----

def test_cli_commands_as_clients_during_io(unvme):
    dev = "emu://mp1?ns=mem:256M:512"
    app = start(unvme, "perf", dev, "-w", "randwrite", "-q", "8", "-t", "4")
    pid = wait_served(unvme, dev, app)
    assert pid != app.pid  # the device has a process of its own
    time.sleep(0.3)
    ident = unvme.ok("id-ctrl", dev, "-o", "json").json()
    assert ident["sn"].startswith("EMU")
    smart1 = unvme.ok("smart-log", dev, "-o", "json").json()
    assert smart1["data_units_written"] > 0, smart1  # the other program has been writing
    time.sleep(0.3)
    smart2 = unvme.ok("smart-log", dev, "-o", "json").json()
    assert smart2["data_units_written"] > smart1["data_units_written"]
    unvme.ok("error-log", dev, "-o", "json")
    regs = unvme.ok("show-regs", dev, "-o", "json").json()
    assert regs["csts"] & 1  # ready: read from the device process's controller
    finish_clean(app)
    st = status(unvme, dev)
    assert st["running"] and st["device_process"] and st["pid"] == pid and st["clients"] == 0
    # any client may reset the device process's controller, as any host may reset hardware
    r = unvme.batch(dev, "reset\nread -s 0 -c 7 -o json\n")
    assert r.rc == 0, r
    stop(unvme, dev)


def test_two_perf_processes_at_once(unvme):
    dev = "emu://mp2?ns=mem:256M:512&mode=thread"
    app = start(unvme, "perf", dev, "-w", "randread", "-q", "8", "-t", "3")
    wait_served(unvme, dev, app)
    r = unvme.ok("perf", dev, "-w", "randwrite", "-q", "8", "-t", "1", timeout=60)
    assert "a client of the device process" in r.out, r
    total = [line for line in r.out.splitlines() if line.startswith("Total")]
    assert total and float(total[0].split()[1]) > 0, r
    finish_clean(app)
    stop(unvme, dev)


def test_data_and_keys_one_process_writes_another_reads(unvme, tmp_path):
    dev = "emu://mp3?ns=mem:64M:512&ns=kv:64M"
    data = bytes((i * 13 + 7) & 0xFF for i in range(4096))
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    unvme.ok("write", dev, "-s", "100", "-d", src)
    # a memory namespace: its data lives in the device process, not in the writer
    r = unvme.run("read", dev, "-s", "100", "-c", "7", "-b", binary=True)
    assert r.rc == 0, r
    assert r.out == data
    val = tmp_path / "v.bin"
    val.write_bytes(b"value-from-process-1")
    unvme.ok("kv-write", dev, "-k", "shared-key", "-v", val)
    got = tmp_path / "got.bin"
    unvme.ok("kv-read", dev, "-k", "shared-key", "-v", got)
    assert got.read_bytes()[:20] == b"value-from-process-1"
    unvme.ok("kv-exist", dev, "-k", "shared-key")
    stop(unvme, dev)


@pytest.mark.parametrize("backing", ["memory", "file"])
def test_guide_iterator_flow_as_separate_commands(unvme, tmp_path, backing):
    """The original guide's iterator flow, one command each: an iterator opened by one
    program is read and closed by the next ones."""
    dev = ("emu://guideit?ns=kv:64M" if backing == "memory"
           else f"emu://guideitf?ns=kv:64M::{tmp_path / 'kv.img'}")
    val = tmp_path / "v.bin"
    val.write_bytes(b"v" * 64)
    keys = [b"\x30\x30\x30\x30" + f"key{i:04d}".encode() for i in range(40)]
    keys += [b"\x31\x31\x31\x31" + f"other{i:02d}".encode() for i in range(10)]
    for k in keys:
        unvme.ok("kv-write", dev, "-k", k.decode(), "-v", val)
    r = unvme.ok("kv-open-it", dev, "-p", "0x30303030", "-b", "0xffffffff", "-i", "1")
    assert "iterator 1 opened" in r.out, r
    info = unvme.ok("kv-it-info", dev, "-o", "json").json()
    assert any(it["handle"] == 1 for it in info), info
    r = unvme.ok("kv-read-it", dev, "-i", "1")
    got = {line.strip() for line in r.out.splitlines()[1:] if line.strip()}
    assert got == {k.decode() for k in keys[:40]}, r  # the matching keys, and only those
    unvme.ok("kv-close-it", dev, "-i", "1")
    r = unvme.ok("kv-it-info", dev)
    assert "no open iterator" in r.out, r
    stop(unvme, dev)


def test_two_kv_sdk_processes_with_the_same_core_mask(unvme, tmp_path):
    """The original SDK failed a second process whose cores overlapped the first's; here the
    KV SDK of a second process (unvme kv-*, default configuration, the same cores) works on
    the device while kv_db_bench's KV SDK fills it."""
    dev = "emu://mp9?ns=kv:1G"
    app = subprocess.Popen([str(KV_DB_BENCH), f"--device={dev}", "--benchmarks=fillrandom,readrandom",
                            "--num=30000"], env=unvme.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    wait_served(unvme, dev, app)
    val = tmp_path / "v.bin"
    val.write_bytes(b"from-the-second-sdk")
    unvme.ok("kv-write", dev, "-k", "second-process-key", "-v", val)
    got = tmp_path / "got.bin"
    unvme.ok("kv-read", dev, "-k", "second-process-key", "-v", got)
    assert got.read_bytes()[:19] == b"from-the-second-sdk"
    out, err = app.communicate(timeout=300)
    assert app.returncode == 0, err
    assert "fillrandom" in out and "readrandom" in out, out
    stop(unvme, dev)


@pytest.mark.parametrize("how", ["killed", "exits"])
def test_first_opener_ends_during_another_programs_writes(unvme, tmp_path, how):
    """The issue's case: a program stored keys on a shared device while the device's first
    opener ended (killed, or normally); it got KV_ERR_DD_NO_DEVICE. Now the writer stores
    every key, and every acknowledged key reads back with its value."""
    dev = f"emu://firstend{how}?ns=kv:256M::{tmp_path / 'kv.img'}"
    first = start(unvme, "monitor", dev)
    wait_served(unvme, dev, first)
    n = 10000
    writer = start(unvme, "-w", "-n", n, "-d", dev, prog=KV_PERF)
    deadline = time.monotonic() + 120  # a hang guard
    while status(unvme, dev)["clients"] < 2 and time.monotonic() < deadline:
        assert writer.poll() is None, finish(writer)
        time.sleep(0.01)
    assert writer.poll() is None, "the writer finished before the first opener ended"
    first.send_signal(signal.SIGKILL if how == "killed" else signal.SIGINT)
    finish(first)
    rc, out, err = finish(writer, timeout=300)
    assert rc == 0, err
    assert "errors: 0, not found: 0" in out, out
    rc, out, err = finish(start(unvme, "-r", "-x", "-n", n, "-d", dev, prog=KV_PERF), timeout=300)
    assert rc == 0 and "verify errors: 0" in out and "not found: 0" in out, out + err
    stop(unvme, dev)


def test_killed_client_loses_only_its_queues(unvme):
    dev = "emu://mp5?ns=mem:256M:512&mode=thread"
    app = start(unvme, "perf", dev, "-w", "randread", "-q", "8", "-t", "4")
    wait_served(unvme, dev, app)
    victim = start(unvme, "perf", dev, "-w", "randwrite", "-q", "16", "-t", "30")
    time.sleep(1.0)
    victim.send_signal(signal.SIGKILL)
    finish(victim)
    # its queue ids and memory were given back: a new client gets queues again
    unvme.ok("perf", dev, "-w", "randwrite", "-q", "8", "-t", "1", timeout=60)
    finish_clean(app)
    stop(unvme, dev)


def test_killed_device_process_is_a_removal_and_the_next_open_starts_one(unvme, tmp_path):
    dev = unvme.file_dev("mpdead", nslist=[("1M", 512), ("64M", 512)])
    block = bytes((i * 7 + 3) & 0xFF for i in range(512))
    src = tmp_path / "b.bin"
    src.write_bytes(block)
    unvme.ok("write", dev, "-s", "5", "-d", src)
    app = start(unvme, "perf", dev, "-n", "2", "-w", "randwrite", "-q", "8", "-t", "600")
    pid = wait_served(unvme, dev, app)
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    # no hang: its next poll sees the device gone, long before its 600 s (the timeout here is
    # only a guard)
    rc, out, err = finish(app, timeout=300)
    assert rc == 3 and gone(err), err
    # a new device process on the same file: the write acknowledged before is there
    r = unvme.run("read", dev, "-s", "5", "-c", "0", "-b", binary=True)
    assert r.rc == 0 and r.out == block, r
    assert status(unvme, dev)["pid"] != pid
    stop(unvme, dev)


def test_idle_device_process_ends(unvme):
    dev = "emu://mpidle?ns=mem:16M:512"
    fast = {"UNVME_DEVICE_IDLE_MS": "300"}
    p = start(unvme, "id-ctrl", dev, env_extra=fast)
    assert finish(p)[0] == 0
    deadline = time.monotonic() + 120  # a hang guard: it ends within a second
    while status(unvme, dev)["running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not status(unvme, dev)["running"]


def test_unvme_serve_start_status_stop(unvme, tmp_path):
    dev = unvme.file_dev("mpserve", size="16M")
    r = unvme.ok("serve", dev, "--detach")
    assert r.out.startswith("serving") and "(pid " in r.out, r
    st = status(unvme, dev)
    assert st["running"] and st["device_process"] and st["idle_ms"] == 0 and st["clients"] == 0
    r = unvme.ok("serve", dev, "--detach")  # served already: nothing to do
    assert "already run by process" in r.out, r
    r = unvme.run("serve", dev)  # a second one in the foreground is an error
    assert r.rc == 3 and "already run by process" in r.err, r
    r = unvme.ok("id-ctrl", dev, "-o", "json")  # a client of it
    r = unvme.ok("serve", dev, "--status")
    assert "run by device process" in r.out and "ends when told" in r.out, r
    r = unvme.ok("serve", dev, "--stop")
    assert "stopped" in r.out, r
    r = unvme.ok("serve", dev, "--status")
    assert "not running" in r.out, r
    r = unvme.run("serve", dev, "--idle", "soon")
    assert r.rc == 2 and "--idle" in r.err, r
    # in the foreground until SIGTERM, with a clean shutdown
    p = start(unvme, "serve", dev, "--idle", "1h")
    wait_served(unvme, dev, p)
    assert status(unvme, dev)["idle_ms"] == 3600000
    p.send_signal(signal.SIGTERM)
    rc, out, err = finish(p)
    assert rc == 0 and "ended" in out, err


# ---- the primary model, and no sharing ----

PRIMARY = {"UNVME_MP": "primary"}


def test_primary_model_killed_primary_fails_secondaries_and_a_new_one_takes_over(unvme):
    dev = "emu://mp6?ns=mem:256M:512&mode=thread"
    app = start(unvme, "perf", dev, "-w", "randread", "-q", "8", "-t", "600", env_extra=PRIMARY)
    wait_served(unvme, dev, app, env_extra=PRIMARY)
    assert status(unvme, dev, PRIMARY)["device_process"] is False
    sec = start(unvme, "perf", dev, "-w", "randwrite", "-q", "16", "-t", "600", env_extra=PRIMARY)
    time.sleep(1.0)
    app.send_signal(signal.SIGKILL)
    finish(app)
    # no hang: its next poll sees the device gone, long before its 600 s
    rc, out, err = finish(sec, timeout=300)
    assert rc == 3 and gone(err), err
    # the lock went with the dead primary: the next process is the primary itself
    p = start(unvme, "id-ctrl", dev, "-o", "json", env_extra=PRIMARY)
    rc, out, err = finish(p)
    assert rc == 0 and json.loads(out)["sn"].startswith("EMU"), err


def test_primary_model_reset_makes_secondaries_recreate_their_queues(unvme):
    dev = "emu://mp8?ns=mem:256M:512&mode=thread"
    app = subprocess.Popen([str(TOOL), "batch", dev], env=dict(unvme.env, **PRIMARY),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    # (the primary outlives the secondary's run: a secondary whose queues come back after
    # the resets runs on until the primary closes the device, which is a removal for it; so
    # the primary's input stays open, and it waits for more, until the secondary is done:
    # on a loaded machine its own 5 s run could end first)
    app.stdin.write("perf -w randread -q 1 -t 2\nreset\nreset\nperf -w randread -q 1 -t 5\n")
    app.stdin.flush()
    try:
        wait_served(unvme, dev, app, env_extra=PRIMARY)
        sec = start(unvme, "perf", dev, "-w", "randwrite", "-q", "8", "-t", "4",
                    env_extra=PRIMARY)
        rc, out, err = finish(sec, timeout=60)
    finally:
        app.stdin.close()
    # its commands in flight at the reset come back aborted (SQ deletion), which stops perf;
    # the device is not gone for it
    assert rc == 0 or "Aborted due to SQ Deletion" in err, err
    assert "gone" not in err and "removed" not in err, err
    assert app.wait(timeout=60) == 0, app.stderr.read()
    # and the queues it creates again work
    p = start(unvme, "perf", dev, "-w", "randwrite", "-q", "8", "-t", "1", env_extra=PRIMARY)
    finish_clean(p)


def test_primary_model_secondary_may_not_reset(unvme):
    dev = "emu://mp10?ns=mem:16M:512"
    holder = start(unvme, "monitor", dev, env_extra=PRIMARY)
    wait_served(unvme, dev, holder, env_extra=PRIMARY)
    p = start(unvme, "reset", dev, env_extra=PRIMARY)
    rc, out, err = finish(p)
    assert rc == 3 and "alone may reset" in err, err
    holder.send_signal(signal.SIGINT)
    finish(holder)


def test_pending_event_reaches_a_program_started_after_the_one_that_raised_it(unvme):
    # an Asynchronous Event raised by one program and retrieved by none is the device's:
    # pending in its device process when that program ends, and reported to the next
    # program that asks for events
    dev = "emu://mpaer?ns=mem:4M:512"
    unvme.ok("set-feature", dev, "-f", "0xb", "-v", "2")  # temperature events on
    unvme.ok("set-feature", dev, "-f", "4", "-v", "300")  # threshold below its 313 K: raised
    mon = start(unvme, "monitor", dev)
    try:
        # its first event; the wait's limit is only a hang guard
        ready, _, _ = select.select([mon.stdout], [], [], 120)
        line = mon.stdout.readline() if ready else ""
        assert " aer smart: temperature threshold" in line, (line, mon.poll())
    finally:
        mon.send_signal(signal.SIGINT)
        finish(mon)
    stop(unvme, dev)


def test_same_files_under_another_id_get_the_devices_own_error(unvme):
    # two device ids naming one file (other options): two devices, and the second's device
    # process cannot have the file the first's holds. Its error (EWOULDBLOCK, an errno a
    # racing start must not be mistaken for) reaches the opener as the device's own, at once,
    # not as a device process that "never answered" after starting it again and again.
    dev = unvme.file_dev("mpsame", size="16M")
    unvme.ok("id-ctrl", dev)  # its device process stays for its idle period
    other = dev + "&queues=4"
    p = subprocess.run([str(TOOL), "id-ctrl", other], env=unvme.env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode != 0 and "in use by another process" in p.stderr, p.stderr
    assert "never answered" not in p.stderr, p.stderr
    stop(unvme, dev)
    unvme.ok("id-ctrl", other)  # the file free, the other id's device process starts
    stop(unvme, other)


def test_sharing_off_gives_each_process_its_own_device(unvme, tmp_path):
    dev = unvme.file_dev("mp7", size="16M")
    unvme.ok("read", dev, "-s", "0", "-c", "0", "-b", binary=True)  # starts its device process
    # not shared: a second device on the same file, which the device process holds locked
    env = dict(unvme.env, UNVME_MP="0")
    p = subprocess.run([str(TOOL), "read", dev, "-s", "0", "-c", "0"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "in use by another process" in p.stderr, p.stderr
    stop(unvme, dev)
    p = subprocess.run([str(TOOL), "read", dev, "-s", "0", "-c", "0", "-b"], env=env,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
