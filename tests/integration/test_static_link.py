# SPDX-License-Identifier: BSD-3-Clause
"""libunvme.a exports only the public API, as libunvme.so does: a program that defines
functions named like the library's internals (qpair_free, ctrlr_enable) links statically
against it and runs, each side calling its own functions; and no global symbol defined in
the archive is missing from the shared library's exported (UNVME_API) symbols. A program
linked with it sees nothing on stderr from the library unless it asks (unvme_set_log,
UNVME_LOG)."""
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, archive_libs, build_dir

SRC = Path(__file__).resolve().parent / "static_link" / "own_symbols.c"


def archive():
    a = build_dir() / "libunvme.a"
    if not a.exists():
        pytest.skip(f"{a} not built")
    return a


def defined_globals(path, dynamic=False):
    args = ["nm", "-g", "--defined-only"] + (["-D"] if dynamic else []) + [str(path)]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    names = set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            names.add(parts[2].split("@")[0])
    return names


def link(tmp_path, src):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    exe = tmp_path / src.stem
    r = subprocess.run([cc, "-std=c17", "-Wall", "-Werror", "-D_GNU_SOURCE", "-I", str(REPO / "include"),
                        str(src), str(archive()), *archive_libs(archive()), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"static link failed:\n{r.stderr}"
    return exe


def run(exe, tmp_path, *args, **env):
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **env})


def test_program_with_internal_names_links_statically(tmp_path):
    run_ = run(link(tmp_path, SRC), tmp_path)
    assert run_.returncode == 0, f"stdout:\n{run_.stdout}\nstderr:\n{run_.stderr}"
    assert "own_calls=2" in run_.stdout


def test_library_is_silent_unless_asked(tmp_path):
    exe = link(tmp_path, SRC.parent / "quiet_library.c")
    r = run(exe, tmp_path)
    assert r.returncode == 0 and r.stdout == "done\n", r
    assert r.stderr == "", "the library printed on stderr without being asked"
    assert run(exe, tmp_path, UNVME_QUIET="1").stderr == ""
    for asked in (run(exe, tmp_path, "api"), run(exe, tmp_path, UNVME_LOG="1")):
        assert asked.returncode == 0, asked
        assert "unvme_dma_free" in asked.stderr and "not DMA memory" in asked.stderr
    # the program's own decision wins over the environment; UNVME_LOG over UNVME_QUIET
    assert "not DMA memory" in run(exe, tmp_path, "api", UNVME_QUIET="1").stderr
    assert "not DMA memory" not in run(exe, tmp_path, UNVME_LOG="0").stderr
    assert "not DMA memory" in run(exe, tmp_path, UNVME_LOG="1", UNVME_QUIET="1").stderr



def test_archive_defines_only_public_symbols():
    a = archive()
    so = build_dir() / "libunvme.so"
    if not so.exists():
        pytest.skip(f"{so} not built")
    public = defined_globals(so, dynamic=True)
    static = defined_globals(a)
    assert "unvme_ctrlr_open" in static
    assert "qpair_free" not in static
    leaked = sorted(static - public)
    assert not leaked, f"libunvme.a defines non-public global symbols: {leaked[:20]}"
