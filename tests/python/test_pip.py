# SPDX-License-Identifier: BSD-3-Clause
"""pip installs the bindings from the repository (python/pyproject.toml) and they work from the
installed files against the built library; DmaBuffers are numpy arrays without a copy. Run
with Debian's python3, which has setuptools, wheel and numpy (scripts/deps.d/python.txt)."""
import os
import shutil
import subprocess

import pytest

from unvme_env import LIB, REPO

DEB_PY = "/usr/bin/python3"


def deb_python_has(*modules):
    if not os.path.exists(DEB_PY):
        return False
    return subprocess.run([DEB_PY, "-c", "import " + ", ".join(modules)],
                          capture_output=True).returncode == 0


needs_pip = pytest.mark.skipif(not deb_python_has("setuptools", "wheel", "pip"),
                               reason="Debian's python3 with pip, setuptools and wheel is needed")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    # a copy, so the build leaves nothing in the repository
    src = tmp_path_factory.mktemp("src") / "python"
    shutil.copytree(REPO / "python", src, ignore=shutil.ignore_patterns("*.egg-info", "build",
                                                                         "__pycache__"))
    p = subprocess.run([DEB_PY, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--no-build-isolation", "--no-index", "--target", str(target), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return target


def run(target, code):
    env = dict(os.environ, PYTHONPATH=str(target), UNVME_LIB=str(LIB), UNVME_QUIET="1")
    p = subprocess.run([DEB_PY, "-c", code], capture_output=True, text=True, env=env,
                       cwd=str(target), timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


@needs_pip
def test_pip_install_works(installed):
    out = run(installed, "import unvme, sys\n"
                         "print(unvme.__file__)\n"
                         "with unvme.Controller('emu://pip?ns=mem:4M:512') as c:\n"
                         "    print(c.identify().mn)\n")
    where, mn = out.splitlines()
    assert where.startswith(str(installed)) and mn == "uNVMe Emulated Controller"


@needs_pip
@pytest.mark.skipif(not deb_python_has("numpy"), reason="python3-numpy is not installed")
def test_numpy_zero_copy(installed):
    out = run(installed, """
import numpy as np, unvme
with unvme.Controller('emu://np?ns=mem:4M:4096') as c:
    ns = c.namespace(1)
    qp = c.queue_pair()
    src = unvme.DmaBuffer(4 * 4096)
    a = np.frombuffer(src, dtype=np.uint32)
    assert a.ctypes.data == src.address          # the array is the DMA memory
    a[:] = np.arange(a.size, dtype=np.uint32)
    qp.write(ns, 0, src)                         # zero copy out
    dst = unvme.DmaBuffer(4 * 4096)
    b = np.frombuffer(dst, dtype=np.uint32)
    qp.read(ns, 0, 4, dst)                       # zero copy in: b sees it at once
    assert (b == np.arange(b.size)).all()
    f = np.zeros(1024, dtype=np.float64)         # any numpy array goes through the bounce
    qp.read(ns, 1, 2, f)
    assert (f.view(np.uint32) == np.arange(1024, 3072)).all()
    print("ok")
""")
    assert out.strip() == "ok"


def test_library_not_found():
    env = dict(os.environ, UNVME_LIB="/nonexistent/libunvme.so",
               PYTHONPATH=str(REPO / "python"))
    p = subprocess.run(["python3", "-c", "import unvme"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.returncode != 0 and "UNVME_LIB=/nonexistent/libunvme.so" in p.stderr


@pytest.mark.skipif(not deb_python_has("matplotlib"), reason="python3-matplotlib is not installed")
def test_qd_curve_example(tmp_path):
    """docs/python.md's example runs and draws its plot."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), UNVME_LIB=str(LIB), UNVME_QUIET="1",
               MPLCONFIGDIR=str(tmp_path))
    out = tmp_path / "qd.png"
    p = subprocess.run([DEB_PY, str(REPO / "python/examples/qd_curve.py"), "--depths", "1,4",
                        "--seconds", "0.1", "--out", str(out)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = [line.split() for line in p.stdout.splitlines() if line.startswith("QD")]
    assert [r[1] for r in rows] == ["1:", "4:"] and all(float(r[2]) > 0 for r in rows)
    assert out.stat().st_size > 1000 and out.read_bytes()[:4] == b"\x89PNG"
