# SPDX-License-Identifier: BSD-3-Clause
"""make deb: the packages build from the build directory, unpack into a clean directory tree
(dpkg -x, no root needed), and what they hold works from there: the demo run by the installed
tool, a program compiled against the -dev package through its pkg-config file, the Python
bindings, the man pages."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

pytestmark = pytest.mark.skipif(not shutil.which("dpkg-shlibdeps"),
                                reason="dpkg-dev (scripts/deps.d/deb.txt) is not installed")

PACKAGES = ["libunvme0", "libunvme-dev", "unvme-tools", "python3-unvme"]


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "deb.py"), "--build",
                        str(build_dir()), "--out", str(out)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    files = p.stdout.split()
    root = tmp_path_factory.mktemp("root")
    for f in files:
        subprocess.run(["dpkg", "-x", f, str(root)], check=True, timeout=120)
    return files, root


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", deb, name], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_packages_and_their_fields(debs):
    files, root = debs
    names = {field(f, "Package"): f for f in files}
    assert set(PACKAGES) <= set(names)
    version = field(names["libunvme0"], "Version")
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert f"libunvme0 (= {version})" in field(names["libunvme-dev"], "Depends")
    assert "libjson-c5" in field(names["libunvme0"], "Depends")
    assert field(names["python3-unvme"], "Architecture") == "all"
    listing = subprocess.run(["dpkg-deb", "-c", names["unvme-tools"]], capture_output=True,
                             text=True, check=True).stdout
    for path in ("./usr/bin/unvme", "./usr/bin/kv_db_bench", "./usr/share/man/man1/unvme.1",
                 "./usr/share/bash-completion/completions/unvme", "./usr/share/unvme/demo.sh",
                 "./usr/bin/kv_nvme", "./usr/share/man/man1/kv_nvme.1",
                 "./usr/share/bash-completion/completions/kv_nvme"):
        assert path in listing
    # everything lives under /usr and nothing records the build's prefix
    assert sorted(p.name for p in root.iterdir()) == ["usr"]
    hits = subprocess.run(["grep", "-rl", "/usr/local", str(root)], capture_output=True,
                          text=True).stdout
    assert hits == "", hits


def test_demo_runs_from_the_installed_files(debs, tmp_path):
    _, root = debs
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNVME")}
    env.update(PATH=f"{root}/usr/bin:/usr/bin:/bin", TMPDIR=str(tmp_path), BUILD="/nonexistent",
               HOME=str(tmp_path))
    r = subprocess.run(["bash", str(root / "usr/share/unvme/demo.sh")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the data read back is identical" in r.stdout


def test_dev_package_builds_a_program(debs, tmp_path):
    _, root = debs
    libdir = next(root.rglob("libunvme.so.0")).parent
    src = tmp_path / "v.c"
    src.write_text('#include <stdio.h>\n#include "unvme/unvme.h"\n#include "kv_apis.h"\n'
                   'int main(void) { printf("%s %d\\n", unvme_version(), '
                   'kv_is_sdk_initialized()); return 0; }\n')
    env = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=str(root),
               PKG_CONFIG_PATH=str(libdir / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "unvme-kv"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    assert any(f.startswith(f"-I{root}/usr/include") for f in flags), flags
    subprocess.run(["cc", "-o", str(tmp_path / "v"), str(src), *flags], check=True, timeout=120)
    out = subprocess.run([str(tmp_path / "v")], env=dict(os.environ, LD_LIBRARY_PATH=str(libdir)),
                         capture_output=True, text=True, check=True).stdout
    version = field(next(f for f in debs[0] if "libunvme0_" in f), "Version")
    assert out.split()[0] == version


def test_python_and_man_from_the_installed_files(debs, tmp_path):
    _, root = debs
    libdir = next(root.rglob("libunvme.so.0")).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNVME")}
    env.update(PYTHONPATH=str(root / "usr/lib/python3/dist-packages"), LD_LIBRARY_PATH=str(libdir),
               UNVME_QUIET="1", UNVME_STATE_DIR=str(tmp_path))
    out = subprocess.run(["python3", "-c", "import unvme; print(unvme.__file__); "
                          "c = unvme.Controller('emu://deb?ns=mem:4M:512'); print(c.identify().mn)"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    where, mn = out.stdout.splitlines()
    assert where.startswith(str(root)) and mn == "uNVMe Emulated Controller"
    if shutil.which("man"):
        page = subprocess.run(["man", "-l", str(root / "usr/share/man/man1/kv_db_bench.1")],
                              env=dict(os.environ, MANPAGER="cat", MANWIDTH="80"),
                              capture_output=True, text=True, timeout=60)
        assert page.returncode == 0 and "db_bench" in page.stdout
