# SPDX-License-Identifier: BSD-3-Clause
"""What installing and building from the tree leaves, as README.md and docs/python.md describe:
make install honours PREFIX and DESTDIR whenever they are given (a build configured with
another prefix takes the new one), the uninstalled pkg-config files compile a program against
the build tree, building the Python package or running the fio examples leaves nothing git
would see, and `unvme connect --alias` creates the devices file $UNVME_CONFIG names."""
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import REPO, TOOL, build_dir

needs_make = pytest.mark.skipif(not shutil.which("make") or not shutil.which("meson"),
                                reason="make and meson are needed")


def prefix_of(build):
    p = subprocess.run(["meson", "introspect", str(build), "--buildoptions"],
                       capture_output=True, text=True, check=True)
    return next(o["value"] for o in json.loads(p.stdout) if o["name"] == "prefix")


@needs_make
def test_make_install_takes_prefix_and_destdir_after_a_build(tmp_path):
    """The Makefile's install on a build configured with another prefix (a small meson project
    of the same form, so the build under test keeps its configuration): PREFIX given is
    applied (meson configure), DESTDIR is prepended, and without PREFIX the build keeps the
    prefix it has."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "meson.build").write_text(
        "project('p', 'c')\nexecutable('hello', 'hello.c', install: true)\n"
        "import('pkgconfig').generate(name: 'p', description: 'p', version: '1')\n")
    (src / "hello.c").write_text("int main(void) { return 0; }\n")
    build = tmp_path / "build"
    subprocess.run(["meson", "setup", str(build), str(src), "--prefix=/usr/local"],
                   capture_output=True, check=True, timeout=300)
    dest = tmp_path / "stage"
    prefix = "/opt/unvme-doc-test"

    def make(*args, env=None):
        r = subprocess.run(["make", "-C", str(REPO), "install", f"BUILD={build}", *args],
                           capture_output=True, text=True, timeout=600, env=env)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        return r

    make(f"PREFIX={prefix}", f"DESTDIR={dest}")
    root = dest / prefix.lstrip("/")
    assert os.access(root / "bin" / "hello", os.X_OK)
    pcs = list(root.rglob("pkgconfig/p.pc"))
    assert len(pcs) == 1 and f"prefix={prefix}\n" in pcs[0].read_text(), pcs
    assert {p.name for p in dest.iterdir()} == {"opt"}, "installed outside PREFIX"
    assert prefix_of(build) == prefix
    # DESTDIR from the environment (scripts/setup.sh install), PREFIX not given: the build's
    dest2 = tmp_path / "stage2"
    r = make(env=dict(os.environ, DESTDIR=str(dest2)))
    assert "meson configure" not in r.stdout
    assert (dest2 / prefix.lstrip("/") / "bin" / "hello").exists()


def test_uninstalled_pkg_config_compiles_against_the_build_tree(tmp_path):
    if not shutil.which("pkg-config") or not shutil.which("cc"):
        pytest.skip("pkg-config and cc are needed")
    env = dict(os.environ, PKG_CONFIG_PATH=str(build_dir() / "meson-uninstalled"))
    for pc, inc in (("unvme", REPO / "include"), ("unvme-kv", REPO / "include" / "unvme" / "kv")):
        p = subprocess.run(["pkg-config", "--cflags", pc], env=env, capture_output=True,
                           text=True, check=True)
        assert f"-I{inc} " in p.stdout + " ", p.stdout
    src = tmp_path / "p.c"
    src.write_text('#include <unvme/unvme.h>\n#include "kv_apis.h"\n#include "kv_errmsg.h"\n'
                   '#include <stdio.h>\nint main(void) { printf("%s|%s\\n", unvme_version(), '
                   'kv_errmsg()); return 0; }\n')
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "unvme-kv"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["cc", "-Wall", "-Werror", "-o", str(tmp_path / "p"), str(src), *flags],
                   check=True, capture_output=True)
    out = subprocess.run([str(tmp_path / "p")], capture_output=True, text=True, check=True,
                         env=dict(env, LD_LIBRARY_PATH=str(build_dir()))).stdout
    assert out.endswith("|\n") and out[0].isdigit(), out


def git_status(path):
    return subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--ignored=no",
                           "--", str(path)], capture_output=True, text=True, check=True).stdout


def test_leftovers_of_pip_and_fio_are_ignored(tmp_path):
    """The files pip leaves in python/ and fio's verify state in the directory it runs in are
    ignored by git, wherever in the tree they appear."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    names = [REPO / "python" / "unvme.egg-info" / "PKG-INFO",
             REPO / "python" / "build" / "lib" / "unvme" / "x.py",
             REPO / "local-kv_seq_write-0-verify.state"]
    made = []
    try:
        for n in names:
            if n.exists():
                continue
            n.parent.mkdir(parents=True, exist_ok=True)
            n.write_text("")
            made.append(n)
        for n in names:
            assert git_status(n) == "", f"{n} is not ignored"
    finally:
        for n in made:
            n.unlink()
        for d in (REPO / "python" / "unvme.egg-info", REPO / "python" / "build"):
            if d.exists() and not any(p.is_file() for p in d.rglob("*")):
                shutil.rmtree(d)


def test_fio_examples_save_no_verify_state():
    for f in (REPO / "plugins" / "fio" / "examples").glob("*.fio"):
        text = f.read_text()
        if "\nverify=" in text:
            assert "\nverify_state_save=0\n" in text, f


def test_connect_alias_creates_the_devices_file(unvme, env, tmp_path):
    """connect --alias writes the alias into the file $UNVME_CONFIG names, creating it (and
    its directory) when it does not exist yet; the alias then opens the remote namespace."""
    port_file = tmp_path / "port"
    target = subprocess.Popen([str(TOOL), "target", "--listen", "127.0.0.1:0", "--port-file",
                               str(port_file), "--nqn", "nqn.2024-01.io.example:alias", "-d",
                               "emu://aliasdisk?ns=mem:64M", "--allow-any-host"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(600):
            if port_file.exists() and port_file.read_text().strip():
                break
            assert target.poll() is None, target.stdout.read()
            time.sleep(0.05)
        port = port_file.read_text().strip()
        cfg = tmp_path / "new" / "dir" / "devices.json"
        e = dict(env, UNVME_CONFIG=str(cfg))
        addr = f"nvme-tcp://127.0.0.1:{port}/nqn.2024-01.io.example:alias"
        unvme.env = e
        r = unvme.ok("connect", addr, "--alias", "disk1")
        assert "connected to" in r.out and "device 'disk1' = " in r.out
        assert json.loads(cfg.read_text()) == {"devices": {"disk1": addr}}
        assert "nsze" in unvme.ok("id-ns", "disk1", "-o", "json").out
        unvme.ok("disconnect", "disk1")
        assert json.loads(cfg.read_text()) == {"devices": {}}
        # forgetting from a file that does not exist is still an error naming it
        e2 = dict(env, UNVME_CONFIG=str(tmp_path / "none.json"))
        unvme.env = e2
        r = unvme.run("disconnect", "disk1")
        assert r.rc == 3 and "none.json" in r.err
    finally:
        target.terminate()
        target.wait(timeout=30)
