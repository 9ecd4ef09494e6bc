#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""BlobFS as users drive it, for the crash harness (tests/crash/crash.py). Each workload is
a component of its own; each round kills the process that holds the file system with
SIGKILL (at a random moment or at a crash point of the file namespace under it), sometimes
cuts the power, and checks that nothing acknowledged was lost.

  bfs-bulk     the `unvme fuse` server; 600..3000 small files created, one fsync'ed, the
               directory fsync'ed (the whole batch one commit, cut into bounded
               transactions), one more file written and fsync'ed, more batches, unlinks
  bfs-tar      tar -x of a real tree (/usr/include/linux), fsync of its directory (the
               largest commit a user makes in one call), older trees removed
  bfs-rmrf     rm -rf of an extracted, synced tree, fsync of the parent, then a new tree
  bfs-rename   files replaced by rename over them (write a temporary, fsync, rename, a batch
               of them per directory fsync)
  bfs-large    two large files written interleaved from their ends back (up to 512 extents
               each: the largest MAP transactions), fsync'ed, truncated, rewritten
  bfs-sqlite   sqlite3 transactions (WAL with synchronous=FULL, or a rollback journal with
               synchronous=EXTRA: what makes a commit durable in each) on the mount
  bfs-rocksdb  Debian's db_bench with the plugin (no FUSE): unsynced fills with kill_safe
               (every acknowledged write survives a kill) and synced fills (they survive a
               power cut too); the database reopened by ldb

The FUSE workloads run `python3 crash_blobfs_user.py write ...`, which mounts the namespace
with `unvme fuse -f` (a child in the same process group, so the harness's kill takes the
server, the driver and the programs it runs at once), drives real programs against the
mount, and logs each operation before it starts and ACK once its fsync returned. The
checker (`... check ...`): fsck before anything mounts (no error, no lost transaction),
then blobfs_tree (a mount that replays) to see every name, type, size and content checksum,
held against the log: everything acknowledged is there with its exact content; what was in
flight is there whole, as a prefix (file data written back part way), or not at all; no
name nobody made. After a power cut the same holds: everything acknowledged was fsync'ed.
"""
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
# UNVME_CRASH_BLOBFS_SHORT=1 (make test's short mode): the same workloads, smaller (a subtree
# to extract, smaller large files), so that one round of each costs seconds
def short():
    return os.environ.get("UNVME_CRASH_BLOBFS_SHORT") == "1"


def tree_src():
    return "/usr/include/linux/netfilter" if short() else "/usr/include/linux"

# ---------------------------------------------------------------- content


def blob(seed, key, size):
    """The bytes of a file: 4 KiB blocks, each from its own hash, so a block in the wrong
    place or another version's block does not pass."""
    out = bytearray()
    i = 0
    while len(out) < size:
        h = hashlib.blake2b(f"{seed}/{key}/{i}".encode(), digest_size=64).digest()
        out += h * 64
        i += 1
    return bytes(out[:size])


def crc(b):
    return f"{zlib.crc32(b) & 0xffffffff:08x}"


class Log:
    """The acknowledgement log: one write(2) per line, so a kill leaves whole lines."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, *words):
        os.write(self.fd, (" ".join(map(str, words)) + "\n").encode())


def fsync_path(p):
    fd = os.open(p, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


# ---------------------------------------------------------------- the writer


class ServerGone(Exception):
    pass


def die_with_parent():
    """In the child before exec: SIGKILL when the driver dies, however it dies (a server left
    behind would hold the harness's pipes open, and the harness waits for their end)."""
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def mount(unvme, dev, mnt, env):
    """`unvme fuse -f` as our child: it dies with us. Returns it once the mount is up."""
    mnt.mkdir(parents=True, exist_ok=True)
    subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)
    srv = subprocess.Popen([unvme, "fuse", dev, str(mnt), "-f", "--threads", "4"], env=env,
                           preexec_fn=die_with_parent)
    end = time.monotonic() + 60
    while not os.path.ismount(mnt):
        if srv.poll() is not None:
            raise ServerGone(f"the server exited ({srv.returncode}) before mounting")
        if time.monotonic() > end:
            raise ServerGone("the mount did not come up")
        time.sleep(0.01)
    return srv


def tar_manifest(tarball):
    """name -> ("f", size, crc) / ("d",) / ("l", target), from the tarball itself."""
    m = {}
    with tarfile.open(tarball) as t:
        for e in t.getmembers():
            name = e.name.rstrip("/")
            name = name[2:] if name.startswith("./") else name
            if name in ("", "."):
                continue
            if e.isdir():
                m[name] = ("d",)
            elif e.issym():
                m[name] = ("l", e.linkname)
            elif e.isfile():
                m[name] = ("f", e.size, crc(t.extractfile(e).read()))
    return m


def w_bulk(mnt, log, rng, seed, a):
    d = mnt / "b"
    log("MKDIR", "b")
    d.mkdir()
    n = 0
    first = True
    live = {}  # what stays, oldest first: the file system (256 MiB) must not fill
    while True:
        count = rng.randint(600, 1000 if short() else 3000) if first else rng.randint(50, 600)
        first = False
        start = n
        for _ in range(count):
            size = rng.choice([0, 100, 1000, 4096, 5000, 20000, 70000])
            log("F", f"b/f{n}", size, n)
            write_file(d / f"f{n}", blob(seed, f"f{n}", size))
            live[n] = size
            n += 1
        while sum(live.values()) > 64 << 20:
            k = next(iter(live))
            del live[k]
            log("U", f"b/f{k}")
            os.unlink(d / f"f{k}")
        for _ in range(rng.randint(0, 5)):  # some removed in the same commit
            k = rng.randrange(0, n)
            if k in live:
                del live[k]
                log("U", f"b/f{k}")
                os.unlink(d / f"f{k}")
        # the sequence: fsync one file (of this batch), then the directory
        one = next((k for k in range(start, n) if k in live), None)
        if one is not None:
            fsync_path(d / f"f{one}")
            log("ACKF", f"b/f{one}")
        fsync_path(d)
        log("ACK")
        # one more file, fsync'ed by itself
        size = rng.choice([10, 3000, 9000])
        log("F", f"b/last{n}", size, n)
        write_file(d / f"last{n}", blob(seed, f"last{n}", size))
        fsync_path(d / f"last{n}")
        log("ACKF", f"b/last{n}")
        n += 1


def w_tree(mnt, log, rng, seed, a, rm_first):
    """tar -x into t<k>, fsync it; rm -rf of old trees, fsync of the mount's root."""
    k = 0
    trees = []
    def extract(k):
        log("TAR", f"t{k}")
        (mnt / f"t{k}").mkdir()
        subprocess.run(["tar", "-xf", a.tarball, "-C", str(mnt / f"t{k}")], check=True)
        fsync_path(mnt / f"t{k}")  # a directory's fsync: the whole tree in one commit

    if rm_first:
        extract(0)
        log("ACK")
        trees.append(0)
        k = 1
    while True:
        if rm_first or (len(trees) > 2 and rng.random() < 0.5):
            victim = trees.pop(0)
            log("RM", f"t{victim}")
            subprocess.run(["rm", "-rf", str(mnt / f"t{victim}")], check=True)
            fsync_path(mnt)
            log("ACK")
        extract(k)
        log("ACK")
        trees.append(k)
        k += 1


def w_rename(mnt, log, rng, seed, a):
    d = mnt / "r"
    log("MKDIR", "r")
    d.mkdir()
    ver = 0
    for i in range(20):
        size = rng.randint(0, 30000)
        log("F", f"r/f{i}", size, ver)
        write_file(d / f"f{i}", blob(seed, f"v{ver}", size))
        ver += 1
    fsync_path(d)
    log("ACK")
    while True:
        for _ in range(rng.randint(1, 40)):  # a batch of replacements per directory fsync
            i = rng.randrange(20)
            size = rng.randint(0, 30000)
            log("F", f"r/f{i}.tmp", size, ver)
            write_file(d / f"f{i}.tmp", blob(seed, f"v{ver}", size))
            fsync_path(d / f"f{i}.tmp")
            log("ACKF", f"r/f{i}.tmp")
            log("MV", f"r/f{i}.tmp", f"r/f{i}")
            os.replace(d / f"f{i}.tmp", d / f"f{i}")
            ver += 1
        fsync_path(d)
        log("ACK")


def w_large(mnt, log, rng, seed, a):
    d = mnt / "l"
    log("MKDIR", "l")
    d.mkdir()
    ver = 0
    while True:
        # two files written in alternating 16 KiB pieces: up to 512 extents each
        top = 4 if short() else 8
        sizes = [rng.randint(1, top) << 20, rng.randint(1, top) << 20]
        data = []
        for j in range(2):
            log("F", f"l/big{j}", sizes[j], ver + j)
            data.append(blob(seed, f"v{ver + j}", sizes[j]))
        fds = [os.open(d / f"big{j}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) for j in range(2)]
        try:
            # from the end back: each piece fills a hole (no run taken ahead, as an append
            # would), and the two files' pieces alternate on the device
            for off in reversed(range(0, max(sizes), 16384)):
                for j in range(2):
                    if off < sizes[j]:
                        os.pwrite(fds[j], data[j][off:off + 16384], off)
            for fd in fds:
                os.fsync(fd)
        finally:
            for fd in fds:
                os.close(fd)
        fsync_path(d)
        log("ACK")
        # cut one short, fsync
        j = rng.randrange(2)
        cut = rng.randrange(0, sizes[j])
        log("F", f"l/big{j}", cut, ver + j)  # the same version's prefix
        os.truncate(d / f"big{j}", cut)
        fsync_path(d / f"big{j}")
        log("ACKF", f"l/big{j}")
        ver += 2


def w_sqlite(mnt, log, rng, seed, a):
    mode = rng.choice(["WAL", "DELETE"])
    log("SQLITE", mode)
    db = sqlite3.connect(mnt / "test.db", isolation_level=None)
    db.execute(f"PRAGMA journal_mode={mode}")
    # What makes a COMMIT durable in each mode, by sqlite's own documentation: FULL syncs the
    # WAL at every commit; with a rollback journal the commit is the journal's unlink, which
    # only EXTRA makes durable (a directory fsync): FULL may lose the last transaction to a
    # power cut on ext4 too, and a kill of the file system's server is one
    db.execute(f"PRAGMA synchronous={'FULL' if mode == 'WAL' else 'EXTRA'}")
    db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v BLOB)")
    n = 0
    while True:
        k = rng.randint(1, 300)
        db.execute("BEGIN")
        for _ in range(k):
            n += 1
            db.execute("INSERT INTO t VALUES(?, ?)", (n, blob(seed, f"row{n}", rng.choice([10, 200, 3000]))))
        if rng.random() < 0.1:
            db.execute("DELETE FROM t WHERE id % 97 = 0 AND id < ?", (n - k,))
        log("BEGIN", n)
        db.execute("COMMIT")
        log("ACK", n)


FUSE_WORKLOADS = {"bulk": w_bulk, "tar": lambda *x: w_tree(*x, rm_first=False),
                  "rmrf": lambda *x: w_tree(*x, rm_first=True), "rename": w_rename,
                  "large": w_large, "sqlite": w_sqlite}


def write(a):
    log = Log(a.log)
    rng = random.Random(a.seed)
    env = dict(os.environ)
    mnt = Path(a.mnt)
    try:
        srv = mount(a.unvme, a.dev, mnt, env)
    except ServerGone as e:
        print(f"writer: {e}", file=sys.stderr)
        return 0  # a crash point during the mount's replay: nothing was done
    log("MOUNTED")
    try:
        FUSE_WORKLOADS[a.workload](mnt, log, rng, a.seed, a)
    except (OSError, subprocess.CalledProcessError, sqlite3.Error) as e:
        if srv.poll() is None:
            raise
        print(f"writer: the server is gone ({srv.returncode}): {e}", file=sys.stderr)
    finally:
        if srv.poll() is None:  # a workload error: the server goes with us
            srv.kill()
            srv.wait()
    return 0


def w_rocksdb(a):
    """db_bench fillseq with keys 0, 1, 2...; its progress lines say how many were
    acknowledged. Synced when the power may be cut (then only synced writes are promised)."""
    sync = 1 if os.environ.get("UNVME_POWERLOSS_JOURNAL") else random.Random(a.seed).choice([0, 0, 1])
    uri = (f"id=blobfs;device={a.dev};format=if_empty;shadow_dir={a.shadow}")
    env = dict(os.environ, LD_PRELOAD=f"{a.plugin}:{os.environ.get('LD_PRELOAD', '')}".rstrip(":"))
    with open(a.log, "ab") as out:
        out.write(f"SYNC {sync}\n".encode())
        out.flush()
        p = subprocess.run(["db_bench", f"--fs_uri={uri}", "--benchmarks=fillseq", f"--sync={sync}",
                            "--num=100000000", "--stats_interval=100", "--db=/db",
                            "--value_size=100", "--key_size=16", "--use_existing_db=0",
                            "--write_buffer_size=4194304", "--max_bytes_for_level_base=16777216",
                            "--target_file_size_base=2097152",
                            # a few thousand writes a second: rounds stay short to check
                            "--benchmark_write_rate_limit=1000000"],
                           env=env, stdout=out, stderr=subprocess.STDOUT)
    # db_bench's output is the log: say there what the harness looks for (a crash point)
    with open(a.log, "rb") as f:
        f.seek(max(0, os.path.getsize(a.log) - 4096))
        for line in f.read().decode(errors="replace").splitlines():
            if "crash point" in line:
                print(line, file=sys.stderr)
    return 0 if p.returncode in (0, -9) else p.returncode


# ---------------------------------------------------------------- the checker


class Verdict:
    def __init__(self, comp):
        self.v = {"component": comp, "ops": 0, "acked": 0, "durable": 0, "checked": 0, "lost": 0,
                  "corrupt": 0, "violations": 0, "first": None}

    def bad(self, what, lost=1, corrupt=0):
        self.v["violations"] += 1
        self.v["lost"] += lost
        self.v["corrupt"] += corrupt
        self.v["first"] = self.v["first"] or what[:600]


def fsck(a, v, when):
    r = subprocess.run([a.unvme, "fsck", a.dev, "-o", "json"], capture_output=True, text=True,
                       timeout=600)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        v.bad(f"fsck {when}: no report (exit {r.returncode}): {r.stderr.strip()[-300:]}", 0)
        return None
    if rep.get("errors", 1) or rep.get("lost_transactions", 0):
        v.bad(f"fsck {when}: {r.stdout.strip()[-400:]}", rep.get("lost_transactions", 0), rep.get("errors", 1))
    return rep


PIECE = 4096  # bfs-large's files may be any mix of written pages and holes: checked per page


def tree(a, v, shadow=None):
    args = [a.tree, a.dev] + ([shadow] if shadow else []) + \
        (["--blocks", str(PIECE)] if a.workload == "large" else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if r.returncode:
        v.bad(f"mount after the crash failed: {r.stderr.strip()[-400:]}")
        return None
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    return {e["p"].lstrip("/"): e for e in lines[1:]}


def read_log(path):
    if not os.path.exists(path):
        return []
    out = []
    with open(path, "rb") as f:
        for line in f.read().decode(errors="replace").splitlines():
            w = line.split()
            if w:
                out.append(w)
    return out


def check_files(a, v, recs, found):
    """The model of bulk / rename / large: files and their (size, version) per operation.
    A file is durable at an ACK (everything) or an ACKF naming it (its data; the names in
    the journal with it). What the crash may leave of the rest: a name that was there at
    some point since the last ACK, with the content of a version written since (a prefix:
    written back part way) or its durable one."""
    cur, dirs, dirs_acked = {}, set(), set()  # name -> (size, ver): the model after each operation
    durable = {}                   # name -> (size, ver) that must be exactly there
    gone = set()                   # names that must be absent
    maybe = {}                     # name -> [(size, ver)] allowed
    seed = a.seed
    for w in recs:
        t = w[0]
        if t == "MKDIR":
            dirs.add(w[1])
        elif t == "F":
            v.v["ops"] += 1
            cur[w[1]] = (int(w[2]), int(w[3]))
            maybe.setdefault(w[1], []).append(cur[w[1]])
        elif t == "U":
            v.v["ops"] += 1
            cur.pop(w[1], None)
            maybe.setdefault(w[1], []).append(None)
        elif t == "MV":
            v.v["ops"] += 1
            src = cur.pop(w[1], None)
            if src:
                cur[w[2]] = src
                maybe.setdefault(w[2], []).append(src)
            maybe.setdefault(w[1], []).append(None)
        elif t == "ACK":
            v.v["acked"] += 1
            dirs_acked = set(dirs)
            durable = dict(cur)
            gone = set(maybe) - set(cur)
            maybe = {n: [] for n in cur}
        elif t == "ACKF":
            v.v["acked"] += 1
            if w[1] in cur:
                durable[w[1]] = cur[w[1]]
                maybe[w[1]] = []
    v.v["durable"] = len(durable)
    for d in dirs_acked:
        if d not in found or found[d]["t"] != "d":
            v.bad(f"directory {d}: acknowledged, missing")
    for name, e in found.items():
        if name in dirs:
            continue
        if e["t"] != "f":
            v.bad(f"{name}: a {e['t']} where only files were made", 0, 1)
            continue
        if name in durable and not maybe.get(name):
            size, ver = durable[name]
            v.v["checked"] += 1
            want = blob(seed, version_key(a, name, ver), size)
            if e["s"] != size or e["c"] != crc(want):
                v.bad(f"{name}: acknowledged {size} bytes of version {ver}, found {e['s']} bytes "
                      f"crc {e['c']}")
            continue
        if name in gone and not maybe.get(name):
            v.bad(f"{name}: its removal was acknowledged, it is back")
            continue
        allowed = [x for x in maybe.get(name, []) if x] + ([durable[name]] if name in durable else [])
        if not any(plausible(e, blob(seed, version_key(a, name, ver), size)) for size, ver in allowed):
            v.bad(f"{name}: {e['s']} bytes crc {e['c']}: no version written since the last "
                  f"acknowledgement (nor a prefix of one) has them", 0, 1)
    for name, (size, ver) in durable.items():
        # gone only if something since could take it away (unlink, renamed away); a rewrite
        # or a rename over it leaves one version or the other, never nothing
        if name not in found and None not in maybe.get(name, []):
            v.bad(f"{name}: acknowledged ({size} bytes), missing")


def plausible(e, want):
    """What a crash may leave of a file being written: a prefix of its bytes (written back
    part way), or, for files written piece by piece in any order (their size set by the
    first piece), every page either written or still a hole."""
    if e["s"] <= len(want) and e["c"] == crc(want[:e["s"]]):
        return True
    if "b" not in e or e["s"] != len(want):
        return False
    zero = crc(bytes(PIECE))
    for i, got in enumerate(e["b"]):
        piece = want[i * PIECE:(i + 1) * PIECE]
        if got != crc(piece) and got != (zero if len(piece) == PIECE else crc(bytes(len(piece)))):
            return False
    return True


def version_key(a, name, ver):
    """The content key the writer used for this file version."""
    if a.workload == "bulk":
        return os.path.basename(name).replace(".tmp", "")
    return f"v{ver}"


def check_trees(a, v, recs, found):
    man = tar_manifest(a.tarball)
    state = {}        # tree -> "tar" (in flight), "ok" (acked), "rm" (removal in flight)
    pending = None
    for w in recs:
        if w[0] == "TAR":
            v.v["ops"] += 1
            state[w[1]] = "tar"
            pending = w[1]
        elif w[0] == "RM":
            v.v["ops"] += 1
            state[w[1]] = "rm"
            pending = w[1]
        elif w[0] == "ACK":
            v.v["acked"] += 1
            if pending and state.get(pending) == "tar":
                state[pending] = "ok"
            elif pending and state.get(pending) == "rm":
                state[pending] = "gone"
            pending = None
    by_tree = {}
    for name, e in found.items():
        top, _, rest = name.partition("/")
        by_tree.setdefault(top, {})[rest] = e
    for t, st in state.items():
        ents = by_tree.pop(t, None)
        if st == "gone":
            if ents is not None:
                v.bad(f"tree {t}: its removal was acknowledged, {len(ents)} entries are back")
            continue
        if ents is None:
            if st == "ok":
                v.bad(f"tree {t}: acknowledged, missing", len(man))
            continue
        ents.pop("", None)
        if st == "ok":
            v.v["durable"] += len(man)
        for name, want in man.items():
            e = ents.pop(name, None)
            if e is None:
                if st == "ok":
                    v.bad(f"{t}/{name}: acknowledged, missing")
                continue
            v.v["checked"] += 1
            if want[0] != e["t"]:
                v.bad(f"{t}/{name}: a {e['t']}, the tarball has a {want[0]}", 0, 1)
            elif want[0] == "l" and e.get("target") != want[1]:
                v.bad(f"{t}/{name}: symlink to {e.get('target')}, not {want[1]}", 0, 1)
            elif want[0] == "f":
                exact = e["s"] == want[1] and e["c"] == want[2]
                if st in ("ok", "rm") and not exact:
                    v.bad(f"{t}/{name}: {e['s']} bytes crc {e['c']}, acknowledged {want[1]} crc {want[2]}")
                elif st == "tar" and not exact:
                    src = (Path(a.tree_src) / name).read_bytes() if a.tree_src else None
                    if src is None or e["s"] > len(src) or crc(src[:e["s"]]) != e["c"]:
                        v.bad(f"{t}/{name}: {e['s']} bytes that are not a prefix of the file", 0, 1)
        for name in ents:
            v.bad(f"{t}/{name}: not in the tarball", 0, 1)
    for t in by_tree:
        v.bad(f"{t}: a name nobody made", 0, 1)


def check_sqlite(a, v, recs, found):
    acked = 0
    mode = None
    for w in recs:
        if w[0] == "SQLITE":
            mode = w[1]
        elif w[0] == "BEGIN":
            v.v["ops"] += 1
        elif w[0] == "ACK":
            v.v["acked"] += 1
            acked = int(w[1])
    v.v["durable"] = acked
    if "test.db" not in found:
        if acked:
            v.bad(f"test.db is missing, {acked} rows were committed")
        return
    work = Path(a.state + ".sqlite")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for n in ("test.db", "test.db-wal", "test.db-journal"):
        if n in found:
            r = subprocess.run([a.unvme, "fs", a.dev, "get", "/" + n, str(work / n)],
                               capture_output=True, text=True, timeout=300)
            if r.returncode:
                v.bad(f"cannot copy {n} out: {r.stderr.strip()[-300:]}", 0)
                return
    try:
        db = sqlite3.connect(work / "test.db")
        ok = db.execute("PRAGMA integrity_check").fetchone()[0]
        ids = [r[0] for r in db.execute("SELECT id FROM t WHERE id % 97 != 0 ORDER BY id")]
        db.close()
    except sqlite3.DatabaseError as e:
        if acked == 0 and "no such table" in str(e):
            return  # killed before the first commit: an empty database is right
        v.bad(f"sqlite ({mode}): {e}", acked)
        return
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if ok != "ok":
        v.bad(f"sqlite ({mode}) integrity_check: {ok}", 0, 1)
    top = ids[-1] if ids else 0
    v.v["checked"] = len(ids)
    if top < acked - (1 if acked % 97 == 0 else 0):
        v.bad(f"sqlite ({mode}): rows up to {top} there, {acked} were committed", acked - top)
    want = [i for i in range(1, top + 1) if i % 97]
    if ids != want:
        v.bad(f"sqlite ({mode}): the rows are not a prefix of what was inserted", 0, 1)


def check_rocksdb(a, v, powerloss):
    sync, acked = 0, 0
    if os.path.exists(a.log):
        for line in open(a.log, errors="replace"):
            if line.startswith("SYNC "):
                sync = int(line.split()[1])
            elif "ops and" in line and "thread 0:" in line:
                try:
                    acked = max(acked, int(line.split("(")[1].split(",")[1].split(")")[0]))
                except (IndexError, ValueError):
                    pass
    if powerloss:
        # tmpfs goes with the power: the shadow is gone, only synced writes are promised
        for f in Path(a.shadow).glob("*.shadow"):
            f.unlink()
        if not sync:
            acked = 0
    v.v["ops"] = v.v["acked"] = acked
    v.v["durable"] = acked
    fsck(a, v, "after the kill")
    uri = f"id=blobfs;device={a.dev};shadow_dir={a.shadow}"
    env = dict(os.environ, LD_PRELOAD=a.plugin)
    if "LOCK" not in subprocess.run([a.unvme, "fs", a.dev, "ls", "/db"], capture_output=True,
                                    text=True, timeout=120).stdout:
        if acked:
            v.bad(f"the database is missing, {acked} writes were acknowledged", acked)
        return
    r = subprocess.run(["ldb", f"--fs_uri={uri}", "--db=/db", "scan", "--key_hex"], env=env,
                       capture_output=True, text=True, timeout=600)
    if r.returncode:
        # killed before db_bench wrote anything (while it removed the last round's database
        # or made the new one): nothing was promised about the database
        if acked:
            v.bad(f"ldb cannot open the database: {(r.stderr or r.stdout).strip()[-400:]}", acked)
        return
    keys = [int(x[2:18], 16) for x in r.stdout.splitlines() if x.startswith("0x")]
    v.v["checked"] = len(keys)
    if keys != list(range(len(keys))):
        v.bad("the recovered keys are not a prefix of 0, 1, 2, ...", 0, 1)
    if len(keys) < acked:
        v.bad(f"{len(keys)} keys recovered, {acked} acknowledged (sync={sync}, "
              f"power cut: {powerloss})", acked - len(keys))
    fsck(a, v, "after ldb")


def check(a):
    v = Verdict(a.component)
    if a.workload == "rocksdb":
        check_rocksdb(a, v, a.powerloss)
        print(json.dumps(v.v))
        return 1 if v.v["violations"] else 0
    subprocess.run(["fusermount3", "-u", "-z", a.mnt], capture_output=True)
    recs = read_log(a.log)
    fsck(a, v, "after the kill")
    found = tree(a, v)
    if found is not None:
        if a.workload in ("tar", "rmrf"):
            check_trees(a, v, recs, found)
        elif a.workload == "sqlite":
            check_sqlite(a, v, recs, found)
        else:
            check_files(a, v, recs, found)
    rep = fsck(a, v, "after the mount")
    if rep is not None and not rep.get("clean_unmount"):
        v.bad("not clean after a mount and unmount: " + json.dumps(rep)[:300], 0)
    print(json.dumps(v.v))
    return 1 if v.v["violations"] else 0


# ---------------------------------------------------------------- harness components


def components(Component, Block, tool_run):
    """The harness's component classes for these workloads (crash.py registers them)."""

    class User(Component):
        """A writer and a checker run by this file; subclasses say what they share."""
        points = Block.points
        # a round takes seconds: the short mode of the whole harness (make reliability, its
        # test) leaves them out; test_blobfs_crash_user.py runs one small round of each
        long_only = True

        def common(self, log):
            raise NotImplementedError

        def check_extra(self):
            return []

        def writer(self, rnd, log, seed):
            self.seed = seed & ((1 << 30) - 1)
            return [sys.executable, str(HERE / "crash_blobfs_user.py"), "write",
                    "--seed", str(self.seed)] + self.common(log)

        def checker(self, log, powerloss, damage):
            return [sys.executable, str(HERE / "crash_blobfs_user.py"), "check",
                    "--component", self.name, "--seed", str(self.seed),
                    "--state", str(self.state)] + (["--powerloss"] if powerloss else []) + \
                self.check_extra() + self.common(log)

    class Fuse(User):
        # how often a round passes each point (about: a point not reached in the harness's
        # deadline ends as a random kill, which wastes the round's time)
        point_max = {"ns.write.before": 1500, "ns.write.torn": 1500, "ns.write.after": 1500,
                     "ns.flush.before": 8, "ns.flush.after": 8}
        workload = ""
        size = "256M"
        max_delay = 4.0

        def fresh(self):
            super().fresh()
            self.img = self.media / "fs.img"
            self.mnt = self.dir / "mnt"
            self.tarball = self.work / "tree.tar"
            if self.workload in ("tar", "rmrf") and not self.tarball.exists():
                subprocess.run(["tar", "-cf", str(self.tarball), "-C", tree_src(), "."],
                               check=True, capture_output=True)

        def dev(self):
            return f"emu://{self.name}?ns=file:{self.size}:512:{self.img}"

        def before_round(self):
            subprocess.run(["fusermount3", "-u", "-z", str(self.mnt)], capture_output=True)
            # every round from a fresh mkfs with a small journal: commits wrap it and
            # checkpoint often
            tool_run(self.build, "mkfs", self.dev(), "--force", "-j", "256K")

        def common(self, log):
            return ["--workload", self.workload, "--unvme", str(self.build / "tools/unvme/unvme"),
                    "--dev", self.dev(), "--mnt", str(self.mnt), "--log", str(log),
                    "--tarball", str(self.tarball), "--tree-src", tree_src()]

        def check_extra(self):
            return ["--tree", str(self.build / "tests/integration/blobfs_tree")]

    def fuse(name, wl, writes=1500, **kw):
        pm = dict(Fuse.point_max, **{p: writes for p in ("ns.write.before", "ns.write.torn",
                                                           "ns.write.after")})
        return type(f"Bfs{wl.title()}", (Fuse,), dict(name=name, workload=wl, point_max=pm, **kw))

    class Rocks(User):
        name = "bfs-rocksdb"
        point_max = {"ns.write.before": 200, "ns.write.torn": 200, "ns.write.after": 200,
                     "ns.flush.before": 20, "ns.flush.after": 20}
        max_delay = 3.0

        def fresh(self):
            super().fresh()
            self.img = self.media / "db.img"
            self.shadow = self.dir / "shm"  # tmpfs's part: gone with the power
            self.shadow.mkdir(exist_ok=True)
            tool_run(self.build, "mkfs", self.dev(), "--force")

        def dev(self):
            return f"emu://bfsrocks?ns=file:1G:512:{self.img}"

        def common(self, log):
            return ["--workload", "rocksdb", "--unvme", str(self.build / "tools/unvme/unvme"),
                    "--dev", self.dev(), "--log", str(log), "--shadow", str(self.shadow),
                    "--plugin", str(self.build / "plugins/rocksdb/libblobfs_rocksdb.so")]

    return [fuse("bfs-bulk", "bulk", writes=800, max_delay=2.5),
            fuse("bfs-tar", "tar", writes=800, max_delay=3.0),
            fuse("bfs-rmrf", "rmrf", writes=800, max_delay=3.0),
            fuse("bfs-rename", "rename", writes=500, max_delay=3.0),
            fuse("bfs-large", "large", writes=300, size="1G", max_delay=4.0),
            fuse("bfs-sqlite", "sqlite", writes=300, max_delay=3.0), Rocks]


# ---------------------------------------------------------------- command line


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["write", "check"])
    for o in ("workload", "unvme", "dev", "mnt", "log", "tarball", "tree-src", "tree", "state",
              "component", "shadow", "plugin"):
        ap.add_argument(f"--{o}")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--powerloss", action="store_true")
    a = ap.parse_args()
    a.tree_src = getattr(a, "tree_src", None)
    if a.mode == "write":
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        return w_rocksdb(a) if a.workload == "rocksdb" else write(a)
    return check(a)


if __name__ == "__main__":
    sys.exit(main())
