# SPDX-License-Identifier: BSD-3-Clause
"""Runs the blocks of one documentation page as a user would, in order (test_docs.py).

A page runs in a directory of its own that looks like the tree root (every top-level entry of
the repository is a symbolic link there, and `build` is the build directory under test), so
`build/...`, `plugins/...` and `python/...` resolve as the pages say while whatever a block
writes stays out of the source tree. The environment is a fresh user's on a Debian system:
HOME, the state directory and the devices file are the page's own, no UNVME_* variable of
the caller leaks in, PATH is Debian's default with the built tools first (as `make install`
would put them on PATH). As root, a page runs in a mount and a network namespace of its own:
/tmp, /var/tmp, /mnt and /srv are empty file systems of the page (so a page writes where a
user would, /var/tmp/lab.img or /mnt/lab, and leaves nothing behind), and ports such as 4420
are free whatever else runs on the machine.

Shell state carries from block to block as in one terminal: exported variables and the
current directory (unexported variables do not). Every process a page starts carries a token
in its environment; when the page is done, FUSE mounts under its directory are unmounted and
every process with the token is stopped, daemons included.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from doc_blocks import HEREDOC, REPO, Block

DEFAULT_TIMEOUT = 60
# Copied rather than linked: `pip install ./python` builds in the package's directory.
COPIED = {"python"}
DEBIAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class DocFailure(AssertionError):
    pass


# ---- transcripts ----

def split_transcript(text):
    """[(command, [expected output lines])] of a transcript block."""
    lines = text.splitlines()
    cmds = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if not ln.startswith("$ "):
            if not cmds:
                raise DocFailure(f"transcript line {ln!r} comes before any '$ ' command")
            cmds[-1][1].append(ln)
            i += 1
            continue
        cmd = [ln[2:]]
        i += 1
        # continuation: a trailing backslash, or here-documents up to their tags
        while cmd[-1].endswith("\\") and i < len(lines):
            cmd.append(lines[i])
            i += 1
        for tag in [m.group("tag") for m in HEREDOC.finditer(" ".join(cmd))]:
            while i < len(lines) and lines[i].strip() != tag:
                cmd.append(lines[i])
                i += 1
            if i < len(lines):
                cmd.append(lines[i])
                i += 1
        cmds.append(("\n".join(cmd) + "\n", []))
    return cmds


def _squash(line):
    """Runs of blanks are one blank: column widths are not what a page shows."""
    return " ".join(line.split())


def _line_re(pattern):
    parts = [re.escape(p) for p in _squash(pattern).split("...")]
    return re.compile(".*".join(parts) + r"\Z")


def _norm(text):
    return [_squash(ln) for ln in text.splitlines() if ln.strip()]


def output_matches_any_order(expected, out, err):
    """Each expected line matches a line of its own in any order (threads print as they go);
    a line "..." allows lines the page does not show."""
    pats = [_line_re(e.strip()) for e in expected if e.strip() and e.strip() != "..."]
    extra_ok = any(e.strip() == "..." for e in expected)
    lines = [ln.strip() for ln in _norm(out) + _norm(err)]
    for p in pats:
        hit = next((i for i, ln in enumerate(lines) if p.match(ln)), None)
        if hit is None:
            return False
        del lines[hit]
    return extra_ok or not lines


def output_matches(expected, out, err, errors_shown=False):
    """Whether the expected lines are the program's output: stdout and stderr lines
    interleaved in any order that keeps each stream's own order (a terminal's order depends
    on buffering). A line "..." matches any number of lines; "..." inside a line any text.
    errors_shown: every stderr line must be matched by a line of its own, not by "..."."""
    exp = [ln.rstrip() for ln in expected if ln.strip()]
    res = [None if e.strip() == "..." else _line_re(e.strip()) for e in exp]
    out, err = [ln.strip() for ln in _norm(out)], [ln.strip() for ln in _norm(err)]
    seen = set()
    stack = [(0, 0, 0)]
    while stack:
        st = stack.pop()
        if st in seen:
            continue
        seen.add(st)
        i, j, k = st
        if i == len(exp):
            if j == len(out) and k == len(err):
                return True
            continue
        if res[i] is None:
            stack.append((i + 1, j, k))
            if j < len(out):
                stack.append((i, j + 1, k))
            if k < len(err) and not errors_shown:
                stack.append((i, j, k + 1))
            continue
        if j < len(out) and res[i].match(out[j]):
            stack.append((i + 1, j + 1, k))
        if k < len(err) and res[i].match(err[k]):
            stack.append((i + 1, j, k + 1))
    return False


# ---- the page's sandbox ----

NS_DIR = Path("/run/unvme-doc")
# Hidden by a tmpfs of the page's own: pages write where a user would (/var/tmp/lab.img,
# /mnt/lab, /tmp/kv.img, /srv/...) without touching the machine's files or another run's.
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/mnt", "/srv")


def _under_private(path):
    path = Path(path).resolve()
    return any(path == Path(d) or Path(d) in path.parents for d in PRIVATE_DIRS)


def _sandbox(token, base, keep_also=()):
    """A mount and a network namespace for the page, kept by bind mounts under NS_DIR: every
    block enters both (nsenter). base, and whichever of keep_also lies under a directory the
    page gets empty (a checkout under /tmp), stay visible there. Returns [nsenter args] or
    None where that cannot be done (not root, no unshare): the page then runs in the
    machine's namespaces."""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "nsenter", "ip")):
        return None
    NS_DIR.mkdir(exist_ok=True)
    # a namespace file may only be bound under a private mount
    if f" {NS_DIR} " not in open("/proc/self/mountinfo").read():
        subprocess.run(f"mount --bind {NS_DIR} {NS_DIR} && mount --make-private {NS_DIR}",
                       shell=True, capture_output=True)
    mnt, net, keep = NS_DIR / f"mnt-{token}", NS_DIR / f"net-{token}", NS_DIR / f"keep-{token}"
    mnt.touch()
    net.touch()
    keep.mkdir()
    kept = [Path(base)]
    for p in (Path(p).resolve() for p in keep_also if _under_private(p)):
        if not any(k == p or k in p.parents for k in kept):
            kept.append(p)
    setup = ("set -e; ip link set lo up; "
             + "".join(f"mkdir -p {keep}/{i}; mount --bind {d} {keep}/{i}; "
                       for i, d in enumerate(kept))
             + "".join(f"mkdir -p {d}; mount -t tmpfs -o mode=1777 tmpfs {d}; "
                       for d in PRIVATE_DIRS)
             + "".join(f"mkdir -p {d}; mount --bind {keep}/{i} {d}; umount {keep}/{i}; "
                       for i, d in enumerate(kept)))
    p = subprocess.run(["unshare", f"--mount={mnt}", f"--net={net}", "--propagation", "private",
                        "--", "bash", "-c", setup], capture_output=True, text=True)
    if p.returncode != 0:
        _sandbox_drop(token)
        return None
    return ["nsenter", f"--mount={mnt}", f"--net={net}", "--"]


def _sandbox_drop(token):
    for name in (f"mnt-{token}", f"net-{token}"):
        f = NS_DIR / name
        subprocess.run(["umount", "-l", str(f)], capture_output=True)
        f.unlink(missing_ok=True)
    shutil.rmtree(NS_DIR / f"keep-{token}", ignore_errors=True)


class Page:
    def __init__(self, page, build, tmp):
        self.page = page
        self.build = Path(build)
        self.root = Path(tmp) / "tree"
        self.work = Path(tmp) / "run"
        self.root.mkdir(parents=True)
        self.work.mkdir()
        for entry in REPO.iterdir():
            if entry.name.startswith(".") or entry.name.startswith("build"):
                continue
            if entry.name in COPIED:
                shutil.copytree(entry, self.root / entry.name, ignore=shutil.ignore_patterns(
                    "build", "*.egg-info", "__pycache__"))
            else:
                (self.root / entry.name).symlink_to(entry)
        (self.root / "build").symlink_to(self.build)
        self.token = uuid.uuid4().hex[:16]
        home = Path(tmp) / "home"
        home.mkdir()
        self.enter = _sandbox(self.token, Path(tmp), (REPO, self.build))
        # short (multi-process sockets live there), and private in the sandbox
        if self.enter:
            self.run_dir = Path("/tmp/unvme-run")
        else:
            self.run_dir = Path(tempfile.mkdtemp(prefix="unvme-doc-", dir="/tmp"))
        b = self.build
        tools = [b / "tools" / "unvme", b / "tools" / "kv", b / "tools" / "kv_nvme",
                 b / "tools" / "kv_db_bench",
                 b / "tools" / "blobfs"]
        self.env = {
            "PATH": ":".join(str(t) for t in tools) + ":" + DEBIAN_PATH,
            "HOME": str(home),
            "USER": os.environ.get("USER", "root"),
            "LOGNAME": os.environ.get("LOGNAME", "root"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "SHELL": "/bin/bash",
            "UNVME_STATE_DIR": str(Path(tmp) / "state"),
            "UNVME_RUN_DIR": str(self.run_dir),
            "UNVME_DOC_TOKEN": self.token,
        }
        self.state = self.work / "state.sh"
        self.state.write_text(f"mkdir -p {self.run_dir}; cd {self.root}\n")
        self.last_rc = 0
        self.bg = []
        self.n = 0
        self.log = []  # (body, exit code, stdout, stderr) of every block run, for debugging

    # One bash per block or command: restores the page's shell state, runs, saves it.
    def _script(self, body, strict):
        self.n += 1
        cmd = self.work / f"b{self.n}.sh"
        cmd.write_text(body)
        wrap = self.work / f"w{self.n}.sh"
        wrap.write_text(
            f". {self.state}\n"
            f"trap '__rc=$?; export -p | grep -v -E \"^declare -x (OLDPWD|PWD|SHLVL|_)=\" "
            f"> {self.state}.new; printf \"cd %q\\n\" \"$PWD\" >> {self.state}.new; "
            f"mv {self.state}.new {self.state}; exit $__rc' EXIT\n"
            + ("set -e -o pipefail\n" if strict else "set -o pipefail\n")
            # $? of the command before, for a transcript's "echo $?"; under set -e it would end
            # the block at once, and a strict block does not read it
            + (f"(exit {self.last_rc}); " if not strict else "") + f". {cmd}\n")
        argv = ["bash", "--noprofile", "--norc", str(wrap)]
        return (self.enter or []) + argv

    def run(self, body, strict=True, timeout=DEFAULT_TIMEOUT, background=False):
        argv = self._script(body, strict)
        out_path, err_path = self.work / f"o{self.n}", self.work / f"e{self.n}"
        with open(out_path, "w") as o, open(err_path, "w") as e:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                 env=self.env, start_new_session=True)
        if background:
            self.bg.append((p, out_path, err_path))
            return p, out_path, err_path
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise DocFailure(f"hung for {timeout} s:\n{body}\nstdout:\n{out_path.read_text()}"
                             f"\nstderr:\n{err_path.read_text()}")
        self.last_rc = rc
        out, err = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
        self.log.append((body, rc, out, err))
        return rc, out, err

    def wait_for(self, proc, out_path, err_path, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            both = out_path.read_text(errors="replace") + err_path.read_text(errors="replace")
            if text in both:
                return
            if proc.poll() is not None:
                raise DocFailure(f"the background block ended (exit {proc.returncode}) before "
                                 f"printing {text!r}:\n{both}")
            time.sleep(0.05)
        raise DocFailure(f"the background block did not print {text!r} in {timeout} s")

    def close(self):
        # FUSE mounts the page left, then every process of the page, then its namespaces
        mounts = self._mounts()
        for m in mounts:
            subprocess.run((self.enter or []) + ["fusermount3", "-u", "-z", m],
                           capture_output=True)
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
            pids = self._pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace
            while self._pids() and time.monotonic() < deadline:
                time.sleep(0.05)
        for p, _, _ in self.bg:
            p.poll()
        if self.enter:
            _sandbox_drop(self.token)
        else:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def _mounts(self):
        """FUSE mount points of the page: in its mount namespace, or under its directory."""
        argv = (self.enter or []) + ["cat", "/proc/self/mounts"]
        p = subprocess.run(argv, capture_output=True, text=True)
        out = []
        for ln in p.stdout.splitlines():
            f = ln.split()
            if len(f) > 2 and f[2].startswith("fuse") and (
                    self.enter or f[1].startswith(str(self.root.parent))):
                out.append(f[1].replace("\\040", " "))
        return out

    def _pids(self):
        me = os.getpid()
        key = f"UNVME_DOC_TOKEN={self.token}".encode()
        found = []
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == me:
                continue
            try:
                with open(f"/proc/{d}/environ", "rb") as f:
                    if key in f.read().split(b"\0"):
                        found.append(int(d))
            except OSError:
                pass
        return found


# ---- one page ----

def _describe(b: Block, what, rc=None, out="", err=""):
    s = f"{b.where}: {what}\n--- block ---\n{b.text}"
    if rc is not None:
        s += f"--- exit {rc} ---\n--- stdout ---\n{out}--- stderr ---\n{err}"
    return s


def run_transcript(pg: Page, b: Block):
    cmds = split_transcript(b.text)
    timeout = b.marker.get("timeout", DEFAULT_TIMEOUT)
    for n, (cmd, expected) in enumerate(cmds):
        rc, out, err = pg.run(cmd, strict=False, timeout=timeout)
        # a failure is what the page shows when it shows its exit code (a next "echo $?") or
        # every line of its stderr
        checked_next = n + 1 < len(cmds) and cmds[n + 1][0].strip() == "echo $?"
        if rc != 0 and not checked_next and not b.marker.get("any order") and not (
                err.strip() and output_matches(expected, out, err, errors_shown=True)):
            raise DocFailure(_describe(b, f"'{cmd.strip()}' failed, and the page shows neither "
                                          "its error lines nor its exit code", rc, out, err))
        if b.marker.get("any order"):
            good = output_matches_any_order(expected, out, err)
        else:
            good = output_matches(expected, out, err)
        if not good:
            raise DocFailure(_describe(b, f"the output of '{cmd.strip()}' is not what the page "
                                          "shows:\n" + "\n".join(expected) + "\n", rc, out, err))


def run_c(pg: Page, b: Block, n):
    src = pg.work / f"prog{n}.c"
    src.write_text(b.text)
    pc = pg.build / "meson-uninstalled"
    body = (f"export PKG_CONFIG_PATH={pc} LD_LIBRARY_PATH={pg.build}\n"
            f"cc -Wall -Werror -o {pg.work}/prog{n} {src} $(pkg-config --cflags --libs unvme-kv)\n"
            f"{pg.work}/prog{n}\n")
    rc, out, err = pg.run(body, strict=True, timeout=b.marker.get("timeout", DEFAULT_TIMEOUT))
    want = b.marker.get("exit", 0)
    if rc != want:
        raise DocFailure(_describe(b, f"the C program exited {rc}, not {want}", rc, out, err))
    return out, err


def run_page(page, blocks, build, tmp):
    """Runs every block of the page; returns the blocks not run (with their reasons)."""
    pg = Page(page, build, tmp)
    not_run = []
    last = None  # (out, err) of the last block run, for an output block
    written = []  # files written by file blocks: a later block must use each
    try:
        for n, b in enumerate(blocks):
            k = b.kind
            timeout = b.marker.get("timeout", DEFAULT_TIMEOUT)
            if k == "unclassified":
                raise DocFailure(_describe(b, f"a ```{b.lang} block with no doc-test marker: "
                                              "say what runs it (file NAME, ...) or why not"))
            if k == "not run":
                not_run.append((b.where, b.marker["not run"]))
                continue
            if k == "file":
                name = b.marker["file"]
                top = Path(name).parts[0]
                if not Path(name).is_absolute() and (REPO / top).exists():
                    raise DocFailure(_describe(b, f"file {name} would write into the tree"))
                # written by the page's shell: relative to its directory, and an absolute
                # path lands in the page's private /tmp, /var/tmp, ...
                src = pg.work / f"file{n}"
                src.write_text(b.text)
                rc, out, err = pg.run(f"mkdir -p \"$(dirname '{name}')\" && cp {src} '{name}'\n")
                if rc != 0:
                    raise DocFailure(_describe(b, f"cannot write {name}", rc, out, err))
                # a file another file names (kv.json in a program) is used when that one is
                for wn, wb in list(written):
                    if wn in b.text:
                        written.remove((wn, wb))
                written.append((name, b))
                continue
            if k == "excerpt":
                path = REPO / b.marker["excerpt"]
                squash = lambda s: re.sub(r"\s+", " ", s).strip()  # noqa: E731
                if squash(b.text) not in squash(path.read_text()):
                    raise DocFailure(_describe(b, f"not an excerpt of {b.marker['excerpt']}"))
                continue
            if k == "output":
                if last is None:
                    raise DocFailure(_describe(b, "an output block with no block run before it"))
                if not output_matches(b.text.splitlines(), *last):
                    raise DocFailure(_describe(b, "the output of the block before is not this",
                                               None) + f"--- stdout ---\n{last[0]}"
                                     f"--- stderr ---\n{last[1]}")
                continue
            used = b.text
            if k == "transcript":
                run_transcript(pg, b)
                last = None
            elif k == "sh":
                rc, out, err = pg.run(b.text, strict=True, timeout=timeout)
                if rc != 0:
                    raise DocFailure(_describe(b, "failed", rc, out, err))
                last = (out, err)
            elif k == "background":
                p, o, e = pg.run(b.text, strict=True, background=True)
                pg.wait_for(p, o, e, b.marker["background"], timeout)
                last = None
            elif k == "c":
                last = run_c(pg, b, n)
            elif k == "python":
                src = pg.work / f"prog{n}.py"
                src.write_text(b.text)
                rc, out, err = pg.run(f"python3 {src}\n", strict=True, timeout=timeout)
                if rc != 0:
                    raise DocFailure(_describe(b, "failed", rc, out, err))
                last = (out, err)
            elif k == "device ids":
                for ln in b.text.splitlines():
                    if not ln.strip():
                        continue
                    devid = ln.split()[0]
                    rc, out, err = pg.run(f"unvme list-ns '{devid}'\n", strict=True,
                                          timeout=timeout)
                    if rc != 0:
                        raise DocFailure(_describe(b, f"device id {devid} does not open", rc,
                                                   out, err))
                last = None
            for name, fb in list(written):
                if name in used:
                    written.remove((name, fb))
        if written:
            name, fb = written[0]
            raise DocFailure(_describe(fb, f"file {name} is written but no later block uses it"))
    finally:
        pg.close()
    return not_run
