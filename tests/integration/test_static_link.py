# SPDX-License-Identifier: BSD-3-Clause
"""libunvme.a exports only the public API, as libunvme.so does: a program that defines
functions named like the library's internals (qpair_free, ctrlr_enable) links statically
against it and runs, each side calling its own functions; and no global symbol defined in
the archive is missing from the shared library's exported (UNVME_API) symbols."""
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, build_dir

SRC = Path(__file__).resolve().parent / "static_link" / "own_symbols.c"
LIBS = ["-ljson-c", "-lcrypto", "-luring", "-lz", "-lpthread", "-lm"]


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


def test_program_with_internal_names_links_statically(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    exe = tmp_path / "own_symbols"
    r = subprocess.run([cc, "-std=c17", "-Wall", "-Werror", "-D_GNU_SOURCE", "-I", str(REPO / "include"),
                        str(SRC), str(archive()), *LIBS, "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"static link failed:\n{r.stderr}"
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                         env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert "own_calls=2" in run.stdout


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
