#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The crash harness: kill writers at random moments and at chosen code points, cut the
power, damage the backing files, and check that every promise of docs/reliability.md held.

    tests/crash/crash.py [--build build] [--mode short|long] [--component NAME]...
                         [--rounds N] [--seconds S] [--seed N] [--json FILE] [--keep DIR]

Each component is a writer/checker pair (COMPONENTS below). A round:
  1. starts the writer on the component's device (its files live on across rounds), with
     random options (queue depth, write cache on or off, flush interval, ...);
  2. kills it: with SIGKILL after a random delay (from its start, so also during the device's
     open and recovery), or through a crash point (UNVME_CRASH_POINT=<point>@<n>: the n-th
     pass through that place in the code kills the process there);
  3. sometimes cuts the power: the writer ran with the power-loss journal (powerloss.c)
     and powercut.py undoes a random choice of what was never synced;
  4. sometimes damages the files: flipped bytes, a zeroed or garbage range (a partial
     write), a truncation; the round tells the checker which blocks or keys that touched;
  5. runs the checker, which reopens the device and holds what it finds against the
     writer's acknowledgement log: no acknowledged (after a power cut: acknowledged and
     flushed) write lost, nothing corrupt, deleted keys still deleted, iterators consistent,
     the device opens without repair.
After a damaging round, and after a failed one (a violation, or a writer that failed: no
checker ran, so the checker's state misses what that round did), the component starts again
on new files.

The figures (rounds, kills, operations, lost, corrupt, ...) are printed and written to --json.
Exit status 1 if any round failed (the round's files are kept under --keep).

A component joins by adding a class with: points (its crash points), a setup of its device,
writer() and checker() command lines, and optionally damage(). See docs/reliability.md.
"""
import argparse
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import powercut  # noqa: E402


def build_dir(b):
    p = Path(b)
    return p if p.is_absolute() else REPO / p


# ---------------------------------------------------------------- components

class Component:
    name = ""
    points = []           # crash points this component's writer passes
    point_max = {}        # point -> largest @n to draw (how often the writer passes it)
    powerloss = True      # whether power cuts apply
    damage_kinds = []
    max_delay = 0.4       # random kills: at most this long after the writer's start

    def __init__(self, build, work, rng):
        self.build, self.work, self.rng = build, work, rng
        self.lineage = 0
        self.fresh()

    def fresh(self):
        """New device files (after a damaging round, and at the start)."""
        if self.lineage:
            # the old lineage's files are done with (a failed round's were copied to --keep):
            # a long run with many fresh starts must not fill the disk
            shutil.rmtree(self.dir, ignore_errors=True)
        self.lineage += 1
        self.dir = self.work / f"{self.name}-{self.lineage}"
        # the device's files alone under media/: a power cut touches nothing else (the
        # acknowledgement logs and the checker's state are the observer's, not the device's)
        self.media = self.dir / "media"
        self.media.mkdir(parents=True)
        self.state = self.dir / "check.state"

    def env(self):
        return {}

    def before_round(self):
        """Setup a round needs before its writer starts (nothing is killed in it)."""

    def writer(self, rnd, log, seed):
        raise NotImplementedError

    def checker(self, log, powerloss, damage):
        raise NotImplementedError

    def damage(self, kind):
        """Damages the files; returns the extra checker arguments and a description."""
        raise NotImplementedError


class Block(Component):
    """A file namespace through the driver API: writes, FUA writes, Write Zeroes, Flush,
    one or several in flight, volatile write cache on or off."""
    name = "block"
    points = ["ns.write.before", "ns.write.torn", "ns.write.after", "ns.flush.before",
              "ns.flush.after"]
    point_max = {"ns.flush.before": 40, "ns.flush.after": 40}
    damage_kinds = ["flip", "zero", "garbage", "truncate"]
    lba, blocks = 512, 2048

    def fresh(self):
        super().fresh()
        self.img = self.media / "ns.img"
        self.size = self.lba * self.blocks

    def dev(self, own_size=False):
        size = 0 if own_size else self.size
        return f"emu://crash?ns=file:{size}:{self.lba}:{self.img}"

    def writer(self, rnd, log, seed):
        r = self.rng
        return [str(self.build / "tests/crash/crash_block"), "write", "--dev", self.dev(),
                "--log", str(log), "--round", str(rnd), "--seed", str(seed),
                "--qd", str(r.choice([1, 1, 4, 16])), "--vwc", str(r.choice([1, 1, 0])),
                "--flush-every", str(r.choice([0, 4, 16, 64])),
                "--fua-pct", str(r.choice([0, 5, 30])), "--zero-pct", str(r.choice([0, 5]))]

    def checker(self, log, powerloss, damage):
        extra = damage or []
        own = "--own-size" in extra
        extra = [a for a in extra if a != "--own-size"]
        return [str(self.build / "tests/crash/crash_block"), "check", "--dev", self.dev(own),
                "--log", str(log), "--state", str(self.state), "--blocks", str(self.blocks)] + \
            (["--powerloss"] if powerloss else []) + extra

    def damage(self, kind):
        # a writer killed (or a power cut undone) before the device created its file leaves
        # nothing to damage (CI, 2026-11-30: a round killed early, then damage chosen)
        size = self.img.stat().st_size if self.img.exists() else 0
        if size < self.lba:
            return [], "nothing to damage (no image yet)"
        r = self.rng
        if kind == "truncate":
            keep = r.randrange(0, self.blocks) * self.lba
            os.truncate(self.img, keep)
            return ["--own-size", "--damaged", f"{keep // self.lba}-{self.blocks}"], \
                f"file cut to {keep} bytes"
        lo, hi = damage_bytes(self.img, size, kind, r)
        first, last = lo // self.lba, (hi - 1) // self.lba
        return ["--damaged", f"{first}-{last + 1}"], f"{kind} bytes {lo}..{hi}"


def damage_bytes(path, size, kind, r, start=0):
    """Flips, zeroes or scrambles a random range of path (at or after start)."""
    if kind == "flip":
        at = r.randrange(start, size)
        n = r.randint(1, 8)
        with open(path, "r+b") as f:
            lo = at
            for i in range(n):
                pos = min(size - 1, at + r.randint(0, 64) * i)
                f.seek(pos)
                b = f.read(1)
                f.seek(pos)
                f.write(bytes([b[0] ^ (1 << r.randrange(8))]))
                lo, at = min(lo, pos), max(at, pos)
        return lo, at + 1
    n = r.choice([1, 7, 512, 4096, 16384])
    lo = r.randrange(start, max(start + 1, size - n))
    data = bytes(n) if kind == "zero" else r.randbytes(n)
    with open(path, "r+b") as f:
        f.seek(lo)
        f.write(data)
    return lo, lo + n


class Kv(Component):
    """A file-backed KV namespace through the KV SDK (sync calls) or the standard KV command
    set through the driver: stores, overwrites, deletes, compaction, iterators. A KV namespace
    keeps every acknowledged store and delete across a power cut (--plp: docs/reliability.md)."""
    name = "kv-sync"
    api, check_api = "sdk-sync", "sdk"
    points = ["kv.put.before_append", "kv.put.torn", "kv.put.before_sync", "kv.put.before_index",
              "kv.del.before_sync", "kv.del.before_index", "kv.compact.copied",
              "kv.compact.before_rename", "kv.compact.after_rename", "kv.format.truncated",
              "kv.format.done"]
    point_max = {"kv.format.truncated": 2, "kv.format.done": 2,
                 "kv.compact.copied": 3, "kv.compact.before_rename": 3,
                 "kv.compact.after_rename": 3, "kv.del.before_sync": 200,
                 "kv.del.before_index": 200}
    damage_kinds = ["flip", "zero", "garbage", "truncate", "superblock"]
    keys = 256

    def fresh(self):
        super().fresh()
        self.log_file = self.media / "kv.log"

    def dev(self):
        return f"emu://crashkv?ns=kv:64M::{self.log_file}&state={self.media / 'ctrl.json'}"

    def writer(self, rnd, log, seed):
        r = self.rng
        args = [str(self.build / "tests/crash/crash_kv"), "write", "--api", self.api,
                "--dev", self.dev(), "--log", str(log), "--round", str(rnd), "--seed", str(seed),
                "--state", str(self.state), "--keys", str(self.keys),
                "--max-value", str(r.choice([64, 4096, 8192, 65536])),
                "--del-pct", str(r.choice([5, 15, 40])), "--vwc", str(r.choice([1, 1, 0]))]
        if self.api == "sdk-async":
            args += ["--qd", str(r.choice([2, 8, 32]))]
        if self.api == "std":
            args += ["--flush-every", str(r.choice([0, 4, 16, 64]))]
        return args

    def checker(self, log, powerloss, damage):
        return [str(self.build / "tests/crash/crash_kv"), "check", "--api", self.check_api,
                "--dev", self.dev(), "--log", str(log), "--state", str(self.state),
                "--keys", str(self.keys), "--plp"] + (["--powerloss"] if powerloss else []) + \
            (damage or [])

    def damage(self, kind):
        size = self.log_file.stat().st_size if self.log_file.exists() else 0
        if size <= 64:
            return [], "nothing to damage (empty log)"
        recs = kv_records(self.log_file)
        if kind == "superblock":
            damage_bytes(self.log_file, 16, "flip", self.rng)  # magic, version, CRC
            return ["--expect-open-error"], "superblock flipped"
        if kind == "truncate":
            cut = self.rng.randrange(64, size)
            os.truncate(self.log_file, cut)
            lo, hi = cut, size
        else:
            lo, hi = damage_bytes(self.log_file, size, kind, self.rng, start=64)
        keys = sorted({k for (a, b, k) in recs if a < hi and b > lo and k is not None})
        return (["--damaged-keys", ",".join(map(str, keys))] if keys else []), \
            f"{kind} bytes {lo}..{hi} ({len(keys)} keys' records)"


class KvAsync(Kv):
    name = "kv-async"
    api = "sdk-async"


class KvStd(Kv):
    name = "kv-std"
    api, check_api = "std", "std"


class Ctrl(Component):
    """The controller's non-volatile state through the unvme tool: Format NVM (LBA size),
    firmware download and commit."""
    name = "ctrl"
    points = ["state.before_rename", "state.after_rename", "format.before_persist",
              "ns.format.erased"]
    point_max = {"state.before_rename": 4, "state.after_rename": 4}
    max_delay = 1.5

    def fresh(self):
        super().fresh()
        self.img = self.media / "ns.img"

    def dev(self):
        return f"emu://crashctl?ns=file:1M:512:{self.img}"

    def writer(self, rnd, log, seed):
        return [sys.executable, str(HERE / "crash_ctrl.py"), "write", "--unvme",
                str(self.build / "tools/unvme/unvme"), "--dev", self.dev(), "--log", str(log),
                "--round", str(rnd), "--seed", str(seed), "--dir", str(self.work)]

    def checker(self, log, powerloss, damage):
        return [sys.executable, str(HERE / "crash_ctrl.py"), "check", "--unvme",
                str(self.build / "tools/unvme/unvme"), "--dev", self.dev(), "--log", str(log),
                "--state", str(self.state)]


# The device runs in the process that opens it (UNVME_MP=0, not in a device process of its
# own): killing the writer, or cutting its power, is the device's crash.
DEVICE_HERE = {"UNVME_QUIET": "1", "UNVME_MP": "0"}


def tool_run(build, *args):
    """The unvme tool as a setup step of a component (no crash point armed)."""
    subprocess.run([str(build / "tools/unvme/unvme"), *map(str, args)], check=True,
                   capture_output=True, timeout=120, env=dict(os.environ, **DEVICE_HERE))


class Ftl(Block):
    """The host FTL (ftl://) on a conventional file namespace: the block writer and checker
    through the FTL, the crash points of the file namespace under it. The FTL promises what a
    Flush (or FUA) covered (docs/zns.md), so the checker always holds the flushed writes only,
    as after a power cut."""
    name = "ftl"
    damage_kinds = []     # the FTL's own checksums decide what a damaged unit loses
    lba = 4096
    raw = 16 << 20

    def fresh(self):
        super().fresh()
        tool_run(self.build, "id-ctrl", self.dev(fmt=True))  # the FTL formats it once

    def dev(self, own_size=False, fmt=False):
        inner = f"emu://crashftl?ns=file:{self.raw}:{self.lba}:{self.img}"
        return f"ftl://{inner}?zone=256K&op=25" + ("&format=1" if fmt else "")

    def writer(self, rnd, log, seed):
        return super().writer(rnd, log, seed) + ["--max-nlb", str(self.rng.choice([1, 4, 16]))]

    def checker(self, log, powerloss, damage):
        return [str(self.build / "tests/crash/crash_block"), "check", "--dev", self.dev(),
                "--log", str(log), "--state", str(self.state), "--powerloss"]


class HostKv(Kv):
    """The host KV engine (hostkv://) on a conventional file namespace, through the standard
    KV command set with Flushes. Like a KV SSD it keeps every acknowledged store and delete
    across a process crash and a power cut (group commit: docs/zns.md)."""
    name = "hostkv"
    api, check_api = "std", "std"
    # the file namespace's (torn and killed unit writes and flushes) and the engine's own
    points = Block.points + ["hkv.commit.sealed", "hkv.erase.marked"]
    point_max = {"ns.write.before": 100, "ns.write.torn": 100, "ns.write.after": 100,
                 "ns.flush.before": 40, "ns.flush.after": 40, "hkv.commit.sealed": 100,
                 "hkv.erase.marked": 1}
    damage_kinds = []     # the engine's own checksums decide what a damaged unit loses

    def fresh(self):
        Component.fresh(self)
        self.log_file = self.media / "ns.img"
        tool_run(self.build, "id-ctrl", self.dev(fmt=True))  # the engine formats it once

    def dev(self, fmt=False):
        inner = f"emu://crashhkv?ns=file:128M:4096:{self.log_file}"
        return f"hostkv://{inner}?zone=5M&op=40&unit=16" + ("&format=1" if fmt else "")


class Blobfs(Component):
    """BlobFS on a file namespace: random namespace and data operations (create, append,
    overwrite, truncate, rename over, unlink, mkdir, rmdir) with a blobfs_sync every ten,
    killed at random moments and at the file namespace's crash points. Every round starts
    from a fresh mkfs (the operation sequence is a function of the seed); the checker runs
    fsck before anything mounts, then verifies the namespace against the model (the one
    after some operation between the last sync and the kill) and every synced file's bytes."""
    name = "blobfs"
    points = Block.points
    point_max = {"ns.flush.before": 30, "ns.flush.after": 30}
    max_delay = 0.8

    def fresh(self):
        super().fresh()
        self.img = self.media / "fs.img"

    def dev(self):
        return f"emu://crashfs?ns=file:64M:512:{self.img}"

    def before_round(self):
        tool_run(self.build, "mkfs", self.dev(), "--force")  # every round from a fresh mkfs

    def writer(self, rnd, log, seed):
        self.seed = seed & ((1 << 30) - 1)
        return ["sh", "-c", 'exec "$0" run "$1" "$2" >"$3"', str(blobfs_writer(self.build)),
                self.dev(), str(self.seed), str(log)]

    def checker(self, log, powerloss, damage):
        return [sys.executable, str(HERE / "crash_blobfs.py"), "--unvme",
                str(self.build / "tools/unvme/unvme"), "--writer", str(blobfs_writer(self.build)),
                "--dev", self.dev(), "--log", str(log), "--seed", str(self.seed)]


def blobfs_writer(build):
    return build / "tests/integration/blobfs_crash_writer"


import crash_durable  # noqa: E402  (the largest transactions of the KV, FTL and zoned stores)
import crash_blobfs_user  # noqa: E402  (BlobFS as users drive it: FUSE programs, RocksDB)

COMPONENTS = {c.name: c for c in (Block, Kv, KvAsync, KvStd, Ctrl, Ftl, HostKv, Blobfs,
                                  *crash_durable.components(sys.modules[__name__]))}
COMPONENTS.update({c.name: c for c in crash_blobfs_user.components(Component, Block, tool_run)})

KV_REC = struct.Struct("<IIQIBBBB")


def kv_records(path):
    """(start, end, key id or None) of every record of a KV namespace log, read the way a
    reader that knows the format but trusts nothing would."""
    data = path.read_bytes()
    out, at = [], 64
    while at + KV_REC.size <= len(data):
        magic, _crc, _seq, vlen, _t, _ks, klen, _r = KV_REC.unpack_from(data, at)
        if magic != 0x3152564B or klen == 0 or vlen > (2 << 20):
            break
        end = at + ((KV_REC.size + klen + vlen + 7) & ~7)
        key = data[at + KV_REC.size:at + KV_REC.size + klen]
        kid = int(key[4:]) if key.startswith(b"crk-") and key[4:].isdigit() else None
        out.append((at, end, kid))
        at = end
    return out


# ---------------------------------------------------------------- rounds

class Totals:
    KEYS = ["ops", "acked", "durable", "flushes", "checked", "intact", "inflight", "lost",
            "corrupt", "resurrected", "damaged", "iter_keys", "violations"]

    def __init__(self):
        self.rounds = 0
        self.kills = {"random": 0, "point": 0, "exited": 0}
        self.points = {}
        self.powerloss = 0
        self.damage = {}
        self.sums = dict.fromkeys(self.KEYS, 0)
        self.failures = []
        self.seconds = 0.0

    def as_dict(self):
        return {"rounds": self.rounds, "kills": self.kills, "points": self.points,
                "powerloss_rounds": self.powerloss, "damage_rounds": self.damage,
                **self.sums, "failures": self.failures, "seconds": round(self.seconds, 1)}


def wait_group_gone(pgid, timeout=30.0):
    """Kills what is left of the writer's process group and waits until none of it runs: a
    tool the writer started may outlive it for a moment (SIGKILL waits for an fsync in
    progress), still holding the device's lock when the checker opens it (seen in make crash:
    'backing file ... is in use by another process')."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.005)


def run_writer(comp, argv, env, kill, deadline_s):
    """Starts the writer and ends it: returns how it ended ('random', 'point', 'exited')."""
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    how = "exited"
    try:
        if kill[0] == "random":
            try:
                p.wait(timeout=kill[1])
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                how = "random"
        else:
            try:
                p.wait(timeout=deadline_s)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                how = "random"  # the point was not reached in time: an ordinary kill
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
        wait_group_gone(p.pid)
    err = err.decode(errors="replace")
    if how == "exited" and kill[0] == "point" and f"crash point {kill[1]} reached" in err:
        how = "point"
    elif how == "exited" and f"crash point " in err:
        how = "point"
    return how, p.returncode, err


def keep_files(comp, rnd, opts):
    """Copies a failed round's files (device, logs, checker state) under --keep."""
    if opts.keep:
        dst = Path(opts.keep) / f"{comp.name}-round{rnd}"
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(comp.dir, dst)


def one_round(comp, rnd, totals, opts, rng):
    log = comp.dir / f"round-{rnd}.log"
    seed = rng.getrandbits(63)
    env = dict(os.environ, UNVME_STATE_DIR=str(comp.work / "state"), **DEVICE_HERE, **comp.env())
    powerloss = comp.powerloss and rng.random() < opts.powerloss
    journal = comp.dir / "powerloss.journal"
    if powerloss:
        env.update(LD_PRELOAD=str(opts.build / "tests/crash/crash_powerloss.so"),
                   UNVME_POWERLOSS_JOURNAL=str(journal), UNVME_POWERLOSS_DIR=str(comp.media))
    if comp.points and rng.random() < opts.point_share:
        point = rng.choice(comp.points)
        n = rng.randint(1, comp.point_max.get(point, 400))
        env["UNVME_CRASH_POINT"] = f"{point}@{n}"
        kill = ("point", point)
    else:
        kill = ("random", rng.uniform(0.0, comp.max_delay))
    comp.before_round()
    argv = comp.writer(rnd, log, seed)
    how, rc, err = run_writer(comp, argv, env, kill, opts.point_deadline)
    if how == "exited" and rc != 0:
        # a writer whose stdout is its log (blobfs) says why there
        said = err.strip() or (log.read_text(errors="replace").strip()[-500:] if log.exists() else "")
        totals.failures.append({"component": comp.name, "round": rnd,
                                "why": f"writer failed ({rc}): {said[-500:]}"})
        # its files are kept as they are now (the state the failure began in), and the next
        # round starts on new ones: no checker ran, so the checker's state does not know what
        # this round did, and later rounds would trip over it (hostkv-big, 2026-11-29)
        keep_files(comp, rnd, opts)
        comp.fresh()
        return False
    totals.kills[how] += 1
    if how == "point":
        totals.points[kill[1]] = totals.points.get(kill[1], 0) + 1
    cut = None
    if powerloss:
        totals.powerloss += 1
        cut = powercut.cut(str(journal), rng) if journal.exists() else None
    damage, what = None, None
    if comp.damage_kinds and rng.random() < opts.damage:
        kind = rng.choice(comp.damage_kinds)
        damage, what = comp.damage(kind)
        totals.damage[kind] = totals.damage.get(kind, 0) + 1
    if not log.exists():
        log.write_text("")
    chk = comp.checker(log, powerloss, damage)
    expect_open_error = bool(damage) and "--expect-open-error" in damage
    if expect_open_error:
        chk = [a for a in chk if a != "--expect-open-error"]
    env_c = dict(os.environ, UNVME_STATE_DIR=str(comp.work / "state"), **DEVICE_HERE)
    p = subprocess.run(chk, env=env_c, capture_output=True, text=True, timeout=600)
    verdict = None
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            verdict = json.loads(line)
            break
    ok = True
    if expect_open_error:
        # a destroyed superblock: the device refuses to open and says why
        kvlog = (comp.dir / "kvsdk.log")
        said = p.stderr + (kvlog.read_text(errors="replace") if kvlog.exists() else "")
        ok = verdict is not None and verdict["violations"] >= 1 and "superblock" in said
        if not ok:
            totals.failures.append({"component": comp.name, "round": rnd,
                                    "why": "a destroyed superblock was not reported clearly: "
                                           + (p.stderr.strip() or p.stdout.strip())[-400:]})
    elif verdict is None or p.returncode not in (0, 1):
        totals.failures.append({"component": comp.name, "round": rnd,
                                "why": f"checker failed ({p.returncode}): "
                                       f"{(p.stderr.strip() or p.stdout.strip())[-500:]}"})
        ok = False
    else:
        for k in Totals.KEYS:
            totals.sums[k] += verdict.get(k, 0)
        if verdict["violations"]:
            totals.failures.append({"component": comp.name, "round": rnd, "kill": list(kill),
                                    "powercut": cut, "damage": what,
                                    "why": verdict["first"]})
            ok = False
    totals.rounds += 1
    if not ok:
        keep_files(comp, rnd, opts)
    if damage is not None or not ok:
        comp.fresh()
    return ok


def run(opts):
    rng = random.Random(opts.seed)
    results = {"seed": opts.seed, "mode": opts.mode, "components": {}}
    failed = False
    with tempfile.TemporaryDirectory(prefix="unvme-crash-") as tmp:
        for name in opts.component:
            comp = COMPONENTS[name](opts.build, Path(tmp) / name, rng)
            totals = Totals()
            t0 = time.monotonic()
            rnd = 0
            while rnd < opts.rounds and time.monotonic() - t0 < opts.seconds:
                if not one_round(comp, rnd, totals, opts, rng):
                    failed = True
                    if opts.stop_on_failure:
                        break
                rnd += 1
            totals.seconds = time.monotonic() - t0
            results["components"][name] = totals.as_dict()
            d = totals.as_dict()
            print(f"{name:9s} rounds {d['rounds']:5d}  kills: random {d['kills']['random']}, "
                  f"crash points {d['kills']['point']}  power cuts {d['powerloss_rounds']}  "
                  f"damaged {sum(d['damage_rounds'].values())}  ops {d['ops']} acked "
                  f"{d['acked']} durable {d['durable']}  checked {d['checked']}  lost "
                  f"{d['lost']} corrupt {d['corrupt']} resurrected {d['resurrected']}  "
                  f"violations {d['violations']}  failures {len(d['failures'])}  "
                  f"{d['seconds']} s", flush=True)
            for f in d["failures"][:5]:
                print(f"   FAILURE {json.dumps(f)[:800]}", flush=True)
            write_json(opts, results)  # after each component: a long run cut short keeps it
    write_json(opts, results)
    return 1 if failed else 0


def write_json(opts, results):
    if opts.json:
        Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.json).write_text(json.dumps(results, indent=1) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("UNVME_BUILD", "build"))
    ap.add_argument("--mode", choices=["short", "long"], default="short")
    ap.add_argument("--component", action="append", choices=sorted(COMPONENTS))
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    ap.add_argument("--json")
    ap.add_argument("--keep", help="copy the files of failed rounds here")
    ap.add_argument("--stop-on-failure", action="store_true")
    opts = ap.parse_args(argv)
    opts.build = build_dir(opts.build)
    long = opts.mode == "long"
    # components whose short mode is a test of its own run only when named, or in long mode
    opts.component = opts.component or [n for n, c in COMPONENTS.items()
                                        if long or not getattr(c, "long_only", False)]
    # long: at least 1000 kill points per component; short: a taste of every kind
    opts.rounds = opts.rounds or (1000 if long else 12)
    opts.seconds = opts.seconds or (3600.0 if long else 120.0)
    opts.point_share = 0.5
    opts.point_deadline = 5.0
    opts.powerloss = 0.3
    opts.damage = 0.08 if long else 0.15
    print(f"crash harness: seed {opts.seed}, mode {opts.mode}", flush=True)
    return run(opts)


if __name__ == "__main__":
    sys.exit(main())
