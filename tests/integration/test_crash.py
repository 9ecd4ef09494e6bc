# SPDX-License-Identifier: BSD-3-Clause
"""The crash harness (tests/crash/crash.py, `make crash` for the long run) in its short mode,
and proof that every checker catches a violation planted behind its back: a checker that
cannot fail would make the harness's zero meaningless."""
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, build_dir

CRASH = REPO / "tests" / "crash"
sys.path.insert(0, str(CRASH))
sys.path.insert(0, str(REPO / "tests" / "fuzz"))
import crash  # noqa: E402
import powercut  # noqa: E402
from make_seeds import crc32c  # noqa: E402  (the KV log's record checksum)

BUILD = build_dir()
BLOCK = BUILD / "tests" / "crash" / "crash_block"
KV = BUILD / "tests" / "crash" / "crash_kv"
ZNS = BUILD / "tests" / "crash" / "crash_zns"
SHIM = BUILD / "tests" / "crash" / "crash_powerloss.so"


# ftl runs more rounds: its lost-write bug (an overwritten page's durable copy collected while
# the new version was still buffered) showed about once in fifteen rounds. The largest
# transactions (kv-big, hostkv-big, ftl-big, zns) run a few rounds each: make crash runs them long.
@pytest.mark.parametrize("component,rounds", [("block", 16), ("kv-sync", 12), ("kv-async", 12),
                                              ("kv-std", 12), ("ctrl", 6), ("ftl", 40),
                                              ("hostkv", 12), ("blobfs", 12), ("kv-big", 4),
                                              ("hostkv-big", 4), ("ftl-big", 8), ("zns", 6)])
def test_short_mode_holds_every_promise(component, rounds, tmp_path):
    rc = crash.main(["--build", str(BUILD), "--component", component, "--rounds", str(rounds),
                     "--seconds", "120", "--json", str(tmp_path / "crash.json"),
                     "--keep", str(tmp_path / "failed")])
    assert rc == 0, (tmp_path / "crash.json").read_text()


def test_a_failed_writer_keeps_its_files_and_the_next_round_starts_fresh(tmp_path):
    """No checker runs after a writer failed, so the checker's state misses what that round
    did: later rounds on the same files would trip over it (hostkv-big's rounds 481-483)."""
    class Failing(crash.Component):
        name = "failing"

        def writer(self, rnd, log, seed):
            (self.media / "dev.img").write_bytes(b"state the failure began in")
            return ["sh", "-c", "echo 'store failed: KV Capacity Exceeded' >&2; exit 3"]

    opts = type("Opts", (), dict(build=BUILD, keep=str(tmp_path / "kept"), powerloss=0.0,
                                 point_share=0.0, point_deadline=5.0, damage=0.0))()
    comp = Failing(BUILD, tmp_path / "work", random.Random(1))
    totals = crash.Totals()
    assert not crash.one_round(comp, 7, totals, opts, random.Random(2))
    assert "KV Capacity Exceeded" in totals.failures[0]["why"]
    kept = tmp_path / "kept" / "failing-round7" / "media" / "dev.img"
    assert kept.read_bytes() == b"state the failure began in"
    assert comp.lineage == 2 and not (comp.media / "dev.img").exists()


def test_damage_chosen_for_a_round_that_left_no_image_damages_nothing(tmp_path):
    """A writer killed before the device created its file (or a power cut that took the
    creation back) leaves nothing to damage; the round goes on to its checker (CI, 2026-11-30:
    FileNotFoundError in Block.damage on a fresh lineage)."""
    class NoImage(crash.Block):
        def writer(self, rnd, log, seed):
            return ["true"]

    opts = type("Opts", (), dict(build=BUILD, keep=str(tmp_path / "kept"), powerloss=0.0,
                                 point_share=0.0, point_deadline=5.0, damage=1.0))()
    comp = NoImage(BUILD, tmp_path / "work", random.Random(1))
    for kind in comp.damage_kinds:
        assert comp.damage(kind) == ([], "nothing to damage (no image yet)")
    totals = crash.Totals()
    assert crash.one_round(comp, 1, totals, opts, random.Random(2)), totals.failures
    assert not totals.failures


def test_every_crash_point_in_the_code_is_exercised():
    """The names in the sources and the harness's lists agree: a point nobody arms tests
    nothing, a listed point the code lost would never fire."""
    in_code = set()
    for p in list((REPO / "hw").rglob("*.c")) + list((REPO / "lib").rglob("*.c")):
        in_code |= set(re.findall(r'(?:CRASH_POINT|crash_point_due)\("([^"]+)"\)', p.read_text()))
    listed = {pt for c in crash.COMPONENTS.values() for pt in c.points}
    assert in_code == listed, (in_code - listed, listed - in_code)


def run(args, env, check=True):
    p = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True,
                       timeout=120)
    if check:
        assert p.returncode in (0, 1), p
    return p


def verdict(p):
    import json
    return json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1])


@pytest.fixture
def env(tmp_path):
    # the device in the process under test (UNVME_MP=0): killing it is the device's crash
    return dict(os.environ, UNVME_QUIET="1", UNVME_MP="0", UNVME_STATE_DIR=str(tmp_path / "state"))


def block_round(tmp_path, env, *extra, ops=400, log="r.log"):
    dev = f"emu://plant?ns=file:1M:512:{tmp_path / 'media' / 'b.img'}"
    (tmp_path / "media").mkdir(exist_ok=True)
    run([BLOCK, "write", "--dev", dev, "--log", tmp_path / log, "--round", 1, "--seed", 7,
         "--ops", ops, "--zero-pct", 0, *extra], env)
    return dev


def block_check(tmp_path, env, dev, *extra):
    return verdict(run([BLOCK, "check", "--dev", dev, "--log", tmp_path / "r.log", "--state",
                        tmp_path / "st", *extra], env))


def test_block_checker_catches_a_lost_write_and_a_corrupt_block(tmp_path, env):
    dev = block_round(tmp_path, env)
    assert block_check(tmp_path, env, dev)["violations"] == 0
    img = tmp_path / "media" / "b.img"
    data = bytearray(img.read_bytes())
    lba = next(i for i in range(2048) if data[i * 512:i * 512 + 8] == b"CRASHBLK")
    # an acknowledged block goes back to zeroes: a lost write
    img.write_bytes(data[:lba * 512] + bytes(512) + data[lba * 512 + 512:])
    v = block_check(tmp_path, env, dev)
    assert v["lost"] == 1 and v["violations"] == 1, v
    # one flipped byte in another: a corrupt block (the harness did not say it damaged it)
    lba2 = next(i for i in range(lba + 1, 2048) if data[i * 512:i * 512 + 8] == b"CRASHBLK")
    data = bytearray(img.read_bytes())
    data[lba2 * 512 + 100] ^= 1
    img.write_bytes(bytes(data))
    (tmp_path / "st").unlink()
    v = block_check(tmp_path, env, dev)
    assert v["corrupt"] == 1 and v["lost"] == 1, v
    # ... unless the harness says it damaged that range
    v = block_check(tmp_path, env, dev, "--damaged", f"{lba}-{lba + 1},{lba2}-{lba2 + 1}")
    assert v["violations"] == 0 and v["damaged"] == 2, v


def test_powercut_loses_unflushed_writes_and_the_checker_sees_a_lying_flush(tmp_path, env):
    """Writes with the power-loss journal and no flush at all: a power cut that drops every
    unsynced change leaves none of them, which the process-crash promise calls lost and the
    power-loss promise allows. A device whose flush does nothing (the journal records no
    sync) fails the power-loss promise."""
    for lying in (False, True):
        sub = tmp_path / ("lying" if lying else "honest")
        sub.mkdir()
        e = dict(env, LD_PRELOAD=str(SHIM), UNVME_POWERLOSS_JOURNAL=str(sub / "j"),
                 UNVME_POWERLOSS_DIR=str(sub / "media"))
        if lying:
            e["UNVME_POWERLOSS_LYING_SYNC"] = "1"
        dev = block_round(sub, e, "--flush-every", 0 if not lying else 4, "--no-close", ops=200)
        stats = powercut.cut(str(sub / "j"), __import__("random").Random(1), "all")
        assert stats["undone"] > 0, stats
        if not lying:
            v = block_check(sub, env, dev)
            assert v["lost"] > 0, v  # acknowledged but never flushed: gone
            (sub / "st").unlink()
            assert block_check(sub, env, dev, "--powerloss")["violations"] == 0
        else:
            v = block_check(sub, env, dev, "--powerloss")
            assert v["durable"] > 0 and v["lost"] > 0, v


def kv_dev(tmp_path):
    (tmp_path / "media").mkdir(exist_ok=True)
    return f"emu://plantkv?ns=kv:16M::{tmp_path / 'media' / 'kv.log'}"


def kv_write(tmp_path, env, dev, log, *extra):
    run([KV, "write", "--api", "std", "--dev", dev, "--log", tmp_path / log, "--round", 1,
         "--seed", 3, "--keys", 64, "--max-value", 256, "--state", tmp_path / "st", *extra], env)


def kv_check(tmp_path, env, dev, *extra):
    return verdict(run([KV, "check", "--api", "std", "--dev", dev, "--log", tmp_path / "r.log",
                        "--state", tmp_path / "st", "--keys", 64, *extra], env))


def test_kv_checker_catches_lost_resurrected_foreign_and_corrupt(tmp_path, env):
    dev = kv_dev(tmp_path)
    kv_write(tmp_path, env, dev, "r.log", "--ops", 300)
    assert kv_check(tmp_path, env, dev)["violations"] == 0
    state = (tmp_path / "st").read_text()
    # operations nobody logged: deletes (lost keys), stores of deleted keys (resurrected)
    # and keys this test never uses (an iterator returning foreign keys)
    kv_write(tmp_path, env, dev, "hidden.log", "--ops", 200, "--del-pct", 50, "--seed", 9)
    kv_write(tmp_path, env, dev, "hidden2.log", "--ops", 20, "--keys", 1000, "--seed", 11)
    (tmp_path / "st").write_text(state)
    v = kv_check(tmp_path, env, dev)
    assert v["lost"] > 0 and v["resurrected"] > 0, v
    assert any("never wrote" in f for f in v["first"]) or v["violations"] > 8, v

    # a value changed on the medium with the record's own CRC fixed up: the device cannot
    # tell, the checker's checksum must
    log = tmp_path / "media" / "kv.log"
    data = bytearray(log.read_bytes())
    recs = [r for r in crash.kv_records(log) if r[2] is not None and r[2] < 64]
    start, end, key = recs[-1]
    vlen = int.from_bytes(data[start + 16:start + 20], "little")
    assert vlen > 30
    data[start + 24 + 16 + 28] ^= 0x40
    body = bytes(data[start + 8:start + 24]) + bytes(data[start + 24:start + 24 + 16 + vlen])
    data[start + 4:start + 8] = crc32c(body).to_bytes(4, "little")
    log.write_bytes(bytes(data))
    (tmp_path / "st").write_text("")
    v = kv_check(tmp_path, env, dev, "--damaged-keys", ",".join(map(str, range(64))))
    assert v["corrupt"] == 1, v


def test_crash_points_kill_at_the_named_place(tmp_path, env):
    """A crash point ends the process with SIGKILL and names itself."""
    dev = kv_dev(tmp_path)
    e = dict(env, UNVME_CRASH_POINT="kv.put.before_sync@5")
    p = subprocess.run([str(KV), "write", "--api", "std", "--dev", dev, "--log",
                        str(tmp_path / "r.log"), "--keys", "64", "--flush-every", "0",
                        "--del-pct", "0"],
                       env=e, capture_output=True, text=True, timeout=60)
    assert p.returncode == -9 and "crash point kv.put.before_sync reached" in p.stderr, p
    # the fifth store was written but never acknowledged
    lines = (tmp_path / "r.log").read_text().splitlines()
    assert [ln[0] for ln in lines].count("A") == 4 and lines[-1].startswith("S"), lines
    assert kv_check(tmp_path, env, dev)["inflight"] == 1


REPLACE = """
import os, sys
d = sys.argv[1]
fd = os.open(d + '/f.new', os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.pwrite(fd, b'new' * 1000, 0)
os.fdatasync(fd)
os.rename(d + '/f.new', d + '/f')
os._exit(0)  # killed before the directory sync
"""


def test_powercut_of_an_atomic_replace_leaves_the_old_or_the_new_file(tmp_path, env):
    """The pattern of KV compaction and the state file: a new file written and synced, then
    renamed over the old one, with no directory sync yet. Whatever a power cut keeps, the name
    holds the old file or the new one, whole: a lost create of the new name must not take the
    file away after its rename was kept (found by make crash: every key of a KV namespace
    gone after a kill at kv.compact.after_rename and a random power cut)."""
    outcomes = set()
    for seed in range(40):
        sub = tmp_path / str(seed)
        media = sub / "media"
        media.mkdir(parents=True)
        (media / "f").write_bytes(b"old" * 1000)
        os.sync()
        e = dict(env, LD_PRELOAD=str(SHIM), UNVME_POWERLOSS_JOURNAL=str(sub / "j"),
                 UNVME_POWERLOSS_DIR=str(media))
        subprocess.run([sys.executable, "-c", REPLACE, str(media)], env=e, check=True)
        powercut.cut(str(sub / "j"), random.Random(seed), ["all", "prefix", "random"][seed % 3])
        data = (media / "f").read_bytes() if (media / "f").exists() else b""
        assert data in (b"old" * 1000, b"new" * 1000), (seed, data[:12], sorted(os.listdir(media)))
        outcomes.add(data[:3])
    assert outcomes == {b"old", b"new"}  # both can happen: the harness explores both


def test_a_killed_state_write_leaves_no_temporary_file_behind(tmp_path, env):
    """A process killed between writing the controller state's temporary copy and renaming it
    leaves <state>.tmp.<pid>; the next power-on removes it (a live process's copy stays)."""
    state = tmp_path / "s.json"
    dead = tmp_path / "s.json.tmp.999999"
    live = tmp_path / f"s.json.tmp.{os.getpid()}"
    other = tmp_path / "s.json.tmpx"
    for p in (dead, live, other):
        p.write_text("{")
    tool = BUILD / "tools" / "unvme" / "unvme"
    subprocess.run([str(tool), "id-ctrl", f"emu://st?ns=mem:1M&state={state}"], env=env,
                   check=True, capture_output=True)
    assert not dead.exists() and live.exists() and other.exists() and state.exists()


def zns_check(tmp_path, env, dev, *extra):
    st = tmp_path / "zst"
    if st.exists():
        st.unlink()  # the log's commands from an empty device, every time
    return verdict(run([ZNS, "check", "--dev", dev, "--log", tmp_path / "z.log", "--state", st,
                        *extra], env))


def test_zns_checker_catches_a_lost_block_and_another_commands_data(tmp_path, env):
    (tmp_path / "media").mkdir()
    img = tmp_path / "media" / "z.img"
    dev = f"emu://plantz?ns=zns,zone=1M,open=0,active=0:8M:4096:{img}"
    run([ZNS, "write", "--dev", dev, "--log", tmp_path / "z.log", "--round", 1, "--seed", 5,
         "--ops", 300, "--qd", 4, "--flush-every", 0, "--max-nlb", 64], env)
    assert zns_check(tmp_path, env, dev)["violations"] == 0
    data = bytearray(img.read_bytes())
    blocks = [i for i in range(len(data) // 4096) if data[i * 4096:i * 4096 + 8] == b"CRASHZNS"]
    a, b = blocks[0], blocks[-1]
    assert a // 256 != b // 256  # two zones
    # an acknowledged block goes back to zeroes: lost
    img.write_bytes(bytes(data[:a * 4096]) + bytes(4096) + bytes(data[a * 4096 + 4096:]))
    v = zns_check(tmp_path, env, dev)
    assert v["lost"] == 1 and v["violations"] == 1, v
    # a block of another zone's command where one was written (whole and with its checksum):
    # data the zone never held at that place
    data[a * 4096:a * 4096 + 4096] = data[b * 4096:b * 4096 + 4096]
    img.write_bytes(bytes(data))
    v = zns_check(tmp_path, env, dev)
    assert v["corrupt"] == 1 and v["violations"] == 1, v


def test_hostkv_power_cut_holds_every_acknowledged_store(tmp_path, env):
    """The host KV engine with the power-loss journal: after a cut that loses everything
    unsynced, every acknowledged store and delete is there (--plp). With syncs that lie (the
    journal records none), the same checker finds them lost: it can fail."""
    for lying in (False, True):
        sub = tmp_path / ("lying" if lying else "honest")
        (sub / "media").mkdir(parents=True)
        inner = f"emu://planthkv?ns=file:128M:4096:{sub / 'media' / 'ns.img'}"
        crash.tool_run(BUILD, "id-ctrl", f"hostkv://{inner}?zone=5M&op=40&format=1")
        dev = f"hostkv://{inner}?zone=5M&op=40"
        e = dict(env, LD_PRELOAD=str(SHIM), UNVME_POWERLOSS_JOURNAL=str(sub / "j"),
                 UNVME_POWERLOSS_DIR=str(sub / "media"))
        if lying:
            e["UNVME_POWERLOSS_LYING_SYNC"] = "1"
        # killed once it has 150 acknowledgements: the last commit may be cut short too
        w = subprocess.Popen([str(a) for a in (
            KV, "write", "--api", "std", "--dev", dev, "--log", sub / "r.log", "--round", 1,
            "--seed", 3, "--keys", 64, "--max-value", 9000, "--state", sub / "st",
            "--flush-every", 0, "--format-per-mille", 0, "--no-vwc")], env=e,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and w.poll() is None:
            log = sub / "r.log"
            if log.exists() and log.read_text().count("\nA ") >= 150:
                break
            time.sleep(0.01)
        w.kill()
        w.wait()
        stats = powercut.cut(str(sub / "j"), random.Random(2), "all")
        assert stats["undone"] > 0 or not lying, stats
        v = verdict(run([KV, "check", "--api", "std", "--dev", dev, "--log", sub / "r.log",
                         "--state", sub / "st", "--keys", 64, "--plp", "--powerloss"], env))
        if lying:
            assert v["durable"] > 0 and v["lost"] > 0, v
        else:
            assert v["violations"] == 0 and v["durable"] > 100, v


MAPPED = """
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 3 * 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[0:4096] = b"a" * 4096
m.flush()                                 # msync(MS_SYNC): page 0 is "a" for good
m[0:4096] = b"b" * 4096
m[4096:8192] = b"c" * 4096
os._exit(0)                               # killed before the next msync
"""


def test_powercut_takes_mapped_pages_back_to_their_last_msync(tmp_path, env):
    """A shared mapping (a zoned namespace's zone table) reaches the file page by page at any
    moment: a cut leaves each page as the last msync saw it or as it is now."""
    seen = set()
    for seed in range(12):
        media = tmp_path / str(seed) / "media"
        media.mkdir(parents=True)
        f = media / "t"
        f.write_bytes(b"0" * 3 * 4096)
        os.sync()
        e = dict(env, LD_PRELOAD=str(SHIM), UNVME_POWERLOSS_JOURNAL=str(media.parent / "j"),
                 UNVME_POWERLOSS_DIR=str(media))
        subprocess.run([sys.executable, "-c", MAPPED, str(f)], env=e, check=True)
        mode = "all" if seed < 2 else "random"
        powercut.cut(str(media.parent / "j"), random.Random(seed), mode)
        d = f.read_bytes()
        pages = (d[:1], d[4096:4097], d[8192:8193])
        assert pages[0] in (b"a", b"b") and pages[1] in (b"0", b"c") and pages[2] == b"0", pages
        if mode == "all":
            assert pages[:2] == (b"a", b"0"), pages
        seen.add(pages[:2])
    assert len(seen) > 2  # the random cuts take pages back one by one
