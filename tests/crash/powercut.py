# SPDX-License-Identifier: BSD-3-Clause
"""Power cut for the crash harness: undoes changes that were never synced.

powerloss.c (LD_PRELOAD) journals every change to the files under a directory before it
happens, with the bytes it overwrites. After the process is killed, cut() reads the journal
and takes the files back to a state a power cut at that moment could have left:

- a change is durable when a sync covered it: fsync/fdatasync of the file after it (data),
  a write with RWF_DSYNC (that write), fsync of the directory after it (creating, renaming,
  removing a name);
- every change that is not durable may be lost. Which ones are lost depends on the mode:
  "all" loses every one of them, "prefix" keeps those before a random moment and loses the
  rest, "random" decides for each 512-byte sector of each write (torn writes) and for each
  name change on its own;
- a shared writable mapping (a zoned namespace's zone table) reaches the file whenever the
  kernel writes a page back: each of its 4 KiB pages holds what the last msync(MS_SYNC) (or
  the mapping's start) saw, or what it holds now ("all": the former, otherwise either, page
  by page). Versions in between are not modelled.

Undoing runs from the newest change back; a sector that a newer change kept is never
overwritten by the undo of an older one, so every sector ends up with the bytes of one of
the writes that touched it (or the durable bytes), as on a disk that writes sectors
atomically but in any order.
"""
import os
import random
import struct

WRITE, TRUNC, SYNC, CREATE, RENAME, UNLINK, DIRSYNC, MAP, MSYNC = range(1, 10)
PAGE = 4096
REC = struct.Struct("<IIQQQQII")
SECTOR = 512


class Rec:
    __slots__ = ("type", "path", "ino", "off", "len", "old_size", "flags", "data", "durable")

    def __init__(self, t, path, ino, off, ln, old_size, flags, data):
        self.type, self.path, self.ino, self.off, self.len = t, path, ino, off, ln
        self.old_size, self.flags, self.data, self.durable = old_size, flags, data, False


def read_journal(path):
    recs = []
    with open(path, "rb") as f:
        buf = f.read()
    at = 0
    while at + REC.size <= len(buf):
        t, plen, ino, off, ln, old_size, flags, dlen = REC.unpack_from(buf, at)
        end = at + REC.size + plen + dlen
        if end > len(buf):
            break  # the writer died in the middle of a record: it never happened
        p = buf[at + REC.size:at + REC.size + plen].decode()
        d = buf[at + REC.size + plen:end]
        recs.append(Rec(t, p, ino, off, ln, old_size, flags, d))
        at = end
    return recs


def mark_durable(recs):
    """Sets .durable on every record a later sync covers."""
    synced_data = {}  # ino -> index of its last SYNC
    synced_dir = {}   # directory -> index of its last DIRSYNC
    for i, r in enumerate(recs):
        if r.type == SYNC:
            synced_data[r.ino] = i
        elif r.type == DIRSYNC:
            synced_dir[r.path] = i
    for i, r in enumerate(recs):
        if r.type in (WRITE, TRUNC):
            r.durable = synced_data.get(r.ino, -1) > i or (r.type == WRITE and r.flags & 1)
        elif r.type in (CREATE, UNLINK):
            r.durable = synced_dir.get(os.path.dirname(r.path), -1) > i
        elif r.type == RENAME:
            target = r.data.decode()
            r.durable = synced_dir.get(os.path.dirname(target), -1) > i
        else:
            r.durable = True


def cut_mappings(recs, where, mode, rng):
    """Takes each page of every shared writable mapping back to its last synced bytes, or
    leaves it as it is now. Returns the number of pages taken back."""
    synced = {}  # (ino, offset) -> (path, bytes at the last msync or at the mapping)
    for r in recs:
        if r.type in (MAP, MSYNC):
            synced[(r.ino, r.off)] = (where.get(r.ino, r.path), r.data)
    back = 0
    for (_ino, off), (path, data) in synced.items():
        if path is None or not os.path.exists(path):
            continue
        with open(path, "r+b") as f:
            for at in range(0, len(data), PAGE):
                if mode != "all" and rng.random() < 0.5:
                    continue
                f.seek(off + at)
                now = f.read(min(PAGE, len(data) - at))
                old = data[at:at + len(now)]
                if now != old:
                    f.seek(off + at)
                    f.write(old)
                    back += 1
    return back


def _pwrite(path, off, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, off)
    finally:
        os.close(fd)


def cut(journal, rng, mode=None):
    """Applies a power cut to the files of journal. Returns what it did, for the report."""
    recs = read_journal(journal)
    mark_durable(recs)
    mode = mode or rng.choice(["all", "prefix", "random"])
    pending = [i for i, r in enumerate(recs) if not r.durable]
    moment = rng.randint(0, len(recs)) if mode == "prefix" else 0

    # where each inode lives now (renames and removals move it)
    where = {}
    for r in recs:
        if r.type == RENAME:
            target = r.data.decode()
            if r.len:  # the file it replaced lives on as the saved copy, or not at all
                where[r.len] = f"{target}.plsave.{r.off}" if r.flags & 2 else None
            where[r.ino] = target
        elif r.type == UNLINK:
            where[r.ino] = f"{r.path}.plsave.{r.off}"
        elif r.ino and r.type != DIRSYNC and r.ino not in where:
            where[r.ino] = r.path
    pinned = {}      # ino -> sectors a kept newer write owns
    kept_end = {}    # ino -> end of the furthest kept write
    saves_used = set()
    stats = {"mode": mode, "records": len(recs), "unsynced": len(pending), "undone": 0,
             "torn": 0, "kept": 0}

    def lose(i):
        if mode == "all":
            return True
        if mode == "prefix":
            return i >= moment
        return rng.random() < 0.5

    for i in reversed(range(len(recs))):
        r = recs[i]
        if r.durable:
            if r.type == RENAME and r.flags & 2:
                saves_used.add(f"{r.data.decode()}.plsave.{r.off}")
            if r.type in (WRITE, TRUNC):
                for s in range(r.off // SECTOR, (r.off + r.len + SECTOR - 1) // SECTOR):
                    pinned.setdefault(r.ino, set()).add(s)
            continue
        path = where.get(r.ino, r.path)
        if path is None:
            continue  # a file that is gone for good
        if r.type == WRITE:
            pin = pinned.setdefault(r.ino, set())
            first, last = r.off // SECTOR, (r.off + r.len - 1) // SECTOR
            per_sector = mode == "random" and rng.random() < 0.5
            whole_lost = lose(i)
            undone_any = kept_any = False
            if not os.path.exists(path):
                continue
            eof = os.path.getsize(path)
            for s in range(first, last + 1):
                if s in pin:
                    continue
                if not (rng.random() < 0.5 if per_sector else whole_lost):
                    pin.add(s)
                    kept_any = True
                    kept_end[r.ino] = max(kept_end.get(r.ino, 0), min((s + 1) * SECTOR, r.off + r.len))
                    continue
                lo, hi = max(r.off, s * SECTOR), min(r.off + r.len, (s + 1) * SECTOR, eof)
                if lo >= hi:
                    continue  # a later truncation took these bytes
                old = bytearray(hi - lo)  # bytes that did not exist read as zeroes
                if lo < r.old_size:
                    src = r.data[lo - r.off:min(hi, r.old_size) - r.off]
                    old[:len(src)] = src
                _pwrite(path, lo, bytes(old))
                undone_any = True
            if undone_any:
                stats["undone"] += 1
                stats["torn"] += kept_any
                # an append that is lost may take the file's size with it
                if r.off + r.len > r.old_size and (mode != "random" or rng.random() < 0.5):
                    size = max(r.old_size, kept_end.get(r.ino, 0))
                    if size < os.path.getsize(path):
                        os.truncate(path, size)
            else:
                stats["kept"] += 1
        elif r.type == TRUNC:
            if not lose(i) or not os.path.exists(path):
                stats["kept"] += 1
                continue
            stats["undone"] += 1
            if r.old_size > os.path.getsize(path):
                os.truncate(path, r.old_size)
            pin = pinned.setdefault(r.ino, set())
            for s in range(r.off // SECTOR, (r.off + len(r.data) + SECTOR - 1) // SECTOR):
                lo, hi = max(r.off, s * SECTOR), min(r.off + len(r.data), (s + 1) * SECTOR)
                if s not in pin and lo < hi:
                    _pwrite(path, lo, r.data[lo - r.off:hi - r.off])
        elif r.type == CREATE:
            # A file renamed later under a rename that was kept exists: its creation is
            # implied (the rename names the inode), and undoing it would take away the file
            # that now holds the target's name. Only a name still as created can vanish.
            if path != r.path:
                continue
            if lose(i) and os.path.exists(path):
                os.unlink(path)
                stats["undone"] += 1
        elif r.type == RENAME:
            target = r.data.decode()
            save = f"{target}.plsave.{r.off}"
            if lose(i) and os.path.exists(target):
                os.rename(target, r.path)
                where[r.ino] = r.path
                if r.flags & 2 and os.path.exists(save):
                    os.rename(save, target)
                    where[r.len] = target
                stats["undone"] += 1
            elif r.flags & 2:
                saves_used.add(save)
        elif r.type == UNLINK:
            save = f"{r.path}.plsave.{r.off}"
            if lose(i) and os.path.exists(save):
                os.rename(save, r.path)
                where[r.ino] = r.path
                stats["undone"] += 1
            else:
                saves_used.add(save)
    stats["mapped_pages_back"] = cut_mappings(recs, where, mode, rng)
    # the copies kept for undoing: whatever was not brought back is gone for good
    dirs = {os.path.dirname(r.path) for r in recs}
    for d in dirs:
        if os.path.isdir(d):
            for name in os.listdir(d):
                if ".plsave." in name:
                    os.unlink(os.path.join(d, name))
    os.unlink(journal)
    return stats
