# SPDX-License-Identifier: BSD-3-Clause
"""scripts/setup.sh install installs through make install (here into a DESTDIR): the
library (the public-API-only libunvme.a and libunvme.so), its headers, pkg-config files and
the unvme tool."""
import os
import shutil
import subprocess

import pytest

from conftest import REPO, build_dir


def test_setup_install_uses_make_install(env, tmp_path):
    if not shutil.which("make") or not (build_dir() / "build.ninja").exists():
        pytest.skip("make or a configured build directory missing")
    dest = tmp_path / "dest"
    e = dict(env, DESTDIR=str(dest), BUILD=str(build_dir()))
    r = subprocess.run(["sh", str(REPO / "scripts" / "setup.sh"), "install"], env=e, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    files = {p.name for p in dest.rglob("*")}
    for want in ("libunvme.a", "libunvme.so", "unvme.h", "unvme.pc", "unvme"):
        assert want in files, want
    # what was installed is the public archive: no internal symbol such as qpair_free
    lib = next(dest.rglob("libunvme.a"))
    nm = subprocess.run(["nm", "-g", "--defined-only", str(lib)], capture_output=True, text=True)
    assert " qpair_free" not in nm.stdout and " unvme_ctrlr_open" in nm.stdout
    assert os.access(next(dest.rglob("bin/unvme")), os.X_OK)
