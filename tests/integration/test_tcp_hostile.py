# SPDX-License-Identifier: BSD-3-Clause
"""Our NVMe/TCP host against a hostile target (hostile_target.py): every command fails with a
clear error when the target does not move exactly the data the command asked for, in the
direction it asked for; device-reported values (MDTS, LBADS, discovery record counts) are
bounded before they are used; a dead admin connection fails commands at once; a stalled admin
command ends at the admin timeout with Command Aborted By Host. Nothing crashes or hangs, and
no byte of the host's buffers (a canary) ever reaches the target.

The tools are driven as a user would; the canary cases run the Python bindings in a child
process (a crash or a hang there is caught, and the buffers are the host's own DMA memory).
Under UNVME_BUILD=build-asan the tools run with ASan and UBSan: their stderr must be clean."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import REPO, build_dir
from hostile_target import ADM_GET_FEAT, ADM_KA, Hostile

CANARY = b"HOST-CANARY-7f3a9c"  # in the host's buffers: must never reach the target
HANG_GUARD = 60  # s: only a bound against hanging, never a speed check


@pytest.fixture
def quiet_env(env):
    return dict(env, UNVME_QUIET="1", UNVME_HOSTNQN="nqn.2014-08.io.unvme.test:hostile-host")


@pytest.fixture
def hostile():
    made = []

    def make(**kw):
        t = Hostile(**kw)
        made.append(t)
        return t
    yield make
    for t in made:
        t.stop()


def clean(r):
    """No sanitizer report, no crash (the fixture already refuses a signal)."""
    assert "runtime error" not in r.err and "AddressSanitizer" not in r.err, r
    return r


def bindings_env(env):
    """The environment of a Python child using the bindings on the built library; a library
    built with ASan (UNVME_BUILD=build-asan) needs its runtime loaded first."""
    lib = build_dir() / "libunvme.so"
    e = dict(env, UNVME_PY=str(REPO / "python"), UNVME_LIB=str(lib))
    ldd = subprocess.run(["ldd", str(lib)], capture_output=True, text=True).stdout
    asan = [w for w in ldd.split() if "libasan.so" in w and w.startswith("/")]
    if asan:
        e["LD_PRELOAD"] = asan[0]
        e["ASAN_OPTIONS"] = "detect_leaks=0"  # the interpreter's own allocations
    return e


def host_program(env, body, timeout=HANG_GUARD, stdin=None):
    """Runs body (Python using the bindings: a `devid` variable is given) in a child process;
    returns what it printed as JSON on its last line."""
    prog = ("import json, os, sys, time\n"
            "sys.path.insert(0, os.environ['UNVME_PY'])\n"
            "import unvme\nfrom unvme import DmaBuffer\n"
            "devid = os.environ['DEVID']\n" + body)
    e = bindings_env(env)
    p = subprocess.run([sys.executable, "-c", prog], env=e, capture_output=True, text=True,
                       timeout=timeout, input=stdin)
    assert p.returncode == 0, f"host program failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return json.loads(p.stdout.strip().splitlines()[-1])


# ---- data that is not all there ----

@pytest.mark.parametrize("cue", ["id-short", "id-none"])
def test_identify_without_all_its_data_fails(unvme, quiet_env, hostile, cue):
    t = hostile(cue=cue, nth=2)  # the first Identify (at open) is answered; the tool's is not
    unvme.env = quiet_env
    r = clean(unvme.run("id-ctrl", t.devid()))
    assert r.rc == 1 and "Data Transfer Error" in r.err and r.out == "", r
    # at open: the controller is refused with the reason
    t = hostile(cue=cue, nth=1)
    r = clean(unvme.run("id-ctrl", t.devid()))
    assert r.rc == 3 and "Identify Controller failed: Data Transfer Error" in r.err, r


@pytest.mark.parametrize("cue", ["read-short", "read-none"])
def test_read_without_all_its_data_fails(unvme, quiet_env, hostile, cue):
    t = hostile(cue=cue)
    unvme.env = quiet_env
    r = clean(unvme.run("read", t.devid(), "-s", "0", "-c", "15", "-d", unvme.tmp / "r"))
    assert r.rc == 1 and "Data Transfer Error" in r.err, r
    assert not (unvme.tmp / "r").exists() or (unvme.tmp / "r").stat().st_size == 0


def test_write_without_r2t_fails(unvme, quiet_env, hostile):
    t = hostile(cue="write-no-r2t")
    unvme.env = quiet_env
    # 64 blocks: more than the 8 KiB in-capsule, so the data waits for an R2T that never comes
    r = clean(unvme.run("write", t.devid(), "-s", "0", "-c", "63", "-p", "0x5a"))
    assert r.rc == 1 and "Data Transfer Error" in r.err, r


# ---- data in the wrong direction ----

READ_WITH_CANARY = """
c = unvme.Controller(devid)
ns = c.namespace(1)
qp = c.queue_pair()
buf = DmaBuffer(8 * 512)
canary = os.environ['CANARY'].encode()
buf[:] = (canary * (len(buf) // len(canary) + 1))[:len(buf)]
try:
    qp.read(ns, 0, 8, out=buf)
    out = {"status": "success"}
except unvme.NvmeError as e:
    out = {"status": e.name}
out["buffer_kept"] = bytes(buf)[:len(canary)] == canary
qp.close()
c.close()
print(json.dumps(out))
"""


def test_r2t_for_a_read_sends_no_host_memory(quiet_env, hostile):
    t = hostile(cue="read-r2t")
    out = host_program(dict(quiet_env, DEVID=t.devid(), CANARY=CANARY.decode()), READ_WITH_CANARY)
    assert out["status"] == "Data Transfer Error", out
    assert ("r2t-for-read", 0) in t.events
    assert any(e[0] == "h2cterm" for e in t.events), t.events  # the host ended the connection
    assert CANARY not in t.received, "the read buffer's contents reached the target"


WRITE_KEEPS_BUFFER = """
c = unvme.Controller(devid)
ns = c.namespace(1)
qp = c.queue_pair()
res = {}
for nlb in (64, 4):  # data sent by R2T, and in the capsule
    buf = DmaBuffer(nlb * 512)
    buf[:] = bytes([0x5a]) * len(buf)
    try:
        qp.write(ns, 0, buf)
        res[nlb] = "success"
    except unvme.NvmeError as e:
        res[nlb] = e.name
    except unvme.HostError as e:
        res[nlb] = "host: " + str(e)
    res[f"{nlb}-kept"] = bytes(buf) == bytes([0x5a]) * len(buf)
    qp.close()
    qp = c.queue_pair()  # a fresh connection for the next case
qp.close()
c.close()
print(json.dumps(res))
"""


def test_c2h_data_for_a_write_does_not_touch_its_buffer(quiet_env, hostile):
    t = hostile(cue="write-c2h", nth=1)
    out = host_program(dict(quiet_env, DEVID=t.devid()), WRITE_KEEPS_BUFFER)
    assert out["64"] == "Data Transfer Error" and out["64-kept"], out
    # the second write goes through (the cue fired once); the buffer is the caller's still
    assert out["4"] == "success" and out["4-kept"], out
    t2 = hostile(cue="write-c2h", nth=1)
    out = host_program(dict(quiet_env, DEVID=t2.devid()),
                       WRITE_KEEPS_BUFFER.replace("(64, 4)", "(4,)"))
    assert out["4"] == "Data Transfer Error" and out["4-kept"], out


def test_tools_on_wrong_direction(unvme, quiet_env, hostile):
    unvme.env = quiet_env
    t = hostile(cue="read-r2t")
    r = clean(unvme.run("read", t.devid(), "-s", "0", "-c", "7", "-d", unvme.tmp / "r"))
    assert r.rc == 1 and "Data Transfer Error" in r.err, r
    t = hostile(cue="write-c2h")
    r = clean(unvme.run("write", t.devid(), "-s", "0", "-c", "63", "-p", "0x5a"))
    assert r.rc == 1 and "Data Transfer Error" in r.err, r


# ---- values the device reports ----

@pytest.mark.parametrize("cue, message", [
    ("disc-short", "Data Transfer Error"),
    ("disc-zero", "discovery log record 1 of 1000 is malformed"),
    ("disc-huge", "claims 1099511627776 records: more than 1024"),
])
def test_discovery_log_that_lies(unvme, quiet_env, hostile, cue, message):
    t = hostile(cue=cue)
    unvme.env = quiet_env
    for fmt in ([], ["-o", "json"]):
        r = clean(unvme.run("discover", f"nvme-tcp://127.0.0.1:{t.port}", *fmt))
        assert r.rc in (1, 3) and message in r.err and "Entry 1" not in r.out, r
    r = clean(unvme.run("connect-all", f"nvme-tcp://127.0.0.1:{t.port}"))
    assert r.rc in (1, 3) and message in r.err, r


def test_discovery_log_record_cannot_inject_options(unvme, quiet_env, hostile):
    """A record's NQN with '?' and '&' becomes part of the device id's path, percent-encoded:
    never an option (here it would turn off the keep alive and claim another host)."""
    t = hostile(nqn="nqn.2024-01.io.unvme.test:x?kato=0&hostnqn=nqn.evil")
    unvme.env = quiet_env
    r = clean(unvme.run("connect-all", f"nvme-tcp://127.0.0.1:{t.port}", "--alias", "h", "-o", "json"))
    assert r.rc == 0, r
    dev = r.json()["device"]
    assert "x%3Fkato%3D0%26hostnqn%3Dnqn.evil" in dev and "?kato" not in dev, dev
    assert t.events == [] and b"nqn.evil" in t.received  # the NQN went whole into Connect


def test_mdts_255(unvme, quiet_env, hostile):
    t = hostile(mdts=255)
    unvme.env = quiet_env
    r = clean(unvme.run("id-ctrl", t.devid()))
    assert r.rc == 0 and "mdts      : 255 (2^255 pages: beyond any transfer)" in r.out, r
    assert clean(unvme.run("id-ctrl", t.devid(), "-o", "json")).json()["mdts"] == 255
    # I/O goes on, each command within the limit the host sets itself
    r = clean(unvme.run("write", t.devid(), "-s", "0", "-c", "255", "-p", "0x33"))
    assert r.rc == 0, r


@pytest.mark.parametrize("lbads", [63, 32, 8])
def test_unusable_lba_format(unvme, quiet_env, hostile, lbads):
    t = hostile(lbads=lbads)
    env = dict(quiet_env, UNVME_LOG="1")
    env.pop("UNVME_QUIET")
    unvme.env = env
    # the controller opens; the namespace is left out, and the log says why
    r = clean(unvme.run("connect", t.devid(), "-o", "json"))
    assert r.rc == 0 and r.json()["namespaces"] == 0, r
    assert f"namespace 1 reports an unusable LBA format (index 0 of 1, LBADS {lbads}" in r.err, r
    # its Identify data is still shown as it is
    r = clean(unvme.run("id-ns", t.devid(), "-n", "1", "-o", "json"))
    assert r.rc == 0 and r.json()["lbaf"][0]["lbads"] == lbads, r
    assert "2048 blocks" in clean(unvme.run("id-ns", t.devid(), "-n", "1")).out


# ---- timeouts ----

DEAD_ADMIN = """
c = unvme.Controller(devid)
print("opened", flush=True)
sys.stdin.readline()
res = []
for _ in range(2):  # the first finds the connection closed, the second is sent on a dead one
    t0 = time.monotonic()
    try:
        c.get_features(7)
        res.append(["success", time.monotonic() - t0])
    except unvme.NvmeError as e:
        res.append([e.name, time.monotonic() - t0])
    except unvme.HostError as e:
        res.append(["host: " + str(e), time.monotonic() - t0])
c.close()
print(json.dumps(res))
"""


def test_command_on_a_dead_admin_connection_fails_at_once(quiet_env, hostile, tmp_path):
    t = hostile()
    # an admin timeout of 10 minutes: the commands must not wait for it (the hang guard,
    # 60 s, would fail the test long before)
    env = bindings_env(dict(quiet_env, DEVID=t.devid(), UNVME_ADMIN_TIMEOUT_MS="600000"))
    prog = ("import json, os, sys, time\nsys.path.insert(0, os.environ['UNVME_PY'])\n"
            "import unvme\ndevid = os.environ['DEVID']\n" + DEAD_ADMIN)
    p = subprocess.Popen([sys.executable, "-c", prog], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "opened"
        t.refuse_new()
        t.drop_admin()
        time.sleep(0.2)  # the close reaches the host's socket
        out, err = p.communicate("go\n", timeout=HANG_GUARD)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    res = json.loads(out.strip().splitlines()[-1])
    assert [r[0] for r in res] == ["Host Pathing Error", "Host Pathing Error"], res


STALL = """
c = unvme.Controller(devid)
time.sleep(float(os.environ.get("PAUSE", "0")))
t0 = time.monotonic()
try:
    c.get_features(7)
    out = ["success"]
except unvme.NvmeError as e:
    out = [e.name]
except unvme.HostError as e:
    out = ["host: " + str(e)]
out.append(time.monotonic() - t0)
c.close()
print(json.dumps(out))
"""


@pytest.mark.parametrize("cue, kato", [("stall", "0"), ("stall-all", "700")])
def test_stalled_admin_command_is_aborted_at_its_timeout(quiet_env, hostile, cue, kato):
    """A Get Features the target never answers (alone, or with everything after it on the
    admin connection, keep alives included): Command Aborted By Host once the admin timeout
    has passed, never before; the keep alive that stalls meanwhile does not make it a Host
    Pathing Error."""
    t = hostile(cue=cue, stall_opcode=ADM_GET_FEAT)
    env = dict(quiet_env, DEVID=t.devid(query=f"kato={kato}"), UNVME_ADMIN_TIMEOUT_MS="1500")
    name, took = host_program(env, STALL)
    assert name == "Command Aborted By Host", (name, took, t.events)
    assert took >= 1.5, took
    assert ("stalled", ADM_GET_FEAT) in t.events


ADM_FORMAT = 0x80


def test_stalled_format_waits_for_the_format_timeout(unvme, quiet_env, hostile):
    """Format NVM rewrites a whole namespace (minutes on a large drive): over NVMe/TCP it waits
    UNVME_FORMAT_TIMEOUT_MS as on a PCIe controller (admin.c), not the admin timeout, and a
    target that never answers ends it then with Command Aborted By Host."""
    t = hostile(cue="stall", stall_opcode=ADM_FORMAT)
    unvme.env = dict(quiet_env, UNVME_ADMIN_TIMEOUT_MS="300", UNVME_FORMAT_TIMEOUT_MS="2000")
    t0 = time.monotonic()
    r = clean(unvme.run("format", t.devid(query="kato=0"), "-n", "1", "--force"))
    took = time.monotonic() - t0
    assert r.rc != 0 and "Command Aborted By Host" in r.err, r
    assert took >= 2.0, took  # never before its own limit (the admin timeout is 0.3 s)
    assert ("stalled", ADM_FORMAT) in t.events


def test_stalled_keep_alive_then_a_command(quiet_env, hostile):
    """The keep alive is the command that stalls; a Get Features sent after it waits with it
    and both end when the keep alive's timeout ends the connection: Command Aborted By Host."""
    t = hostile(cue="stall-all", stall_opcode=ADM_KA)
    env = dict(quiet_env, DEVID=t.devid(query="kato=400"), UNVME_ADMIN_TIMEOUT_MS="1500",
               PAUSE="0.5")
    name, took = host_program(env, STALL)
    assert name == "Command Aborted By Host", (name, took, t.events)
    assert ("stalled", ADM_KA) in t.events
