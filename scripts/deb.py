#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""make deb: Debian packages from a build, with Debian's dpkg-deb and dpkg-shlibdeps.

  libunvme0       the shared library
  libunvme-dev    headers, pkg-config files, libunvme.so and the static library
  unvme-tools     unvme, the KV tools (kv_nvme, kv_perf, sdk_perf...), kv_db_bench, blobfs_perf,
                  man pages, bash completion, the demo (/usr/share/unvme/demo.sh)
  unvme-fio       the fio ioengine (when the build has it)
  unvme-rocksdb   the BlobFS RocksDB plugin (when the build has it)
  python3-unvme   the Python bindings (python/)

The build is installed into a staging tree (meson install --destdir) and split into the
packages. A build configured for /usr/local (make's default) is moved under /usr: the files
that record the prefix are the pkg-config files, whose prefix line is rewritten, and the
packages are checked to mention /usr/local nowhere. Dependencies on Debian's libraries come
from dpkg-shlibdeps; the packages' own, from their version.

  python3 scripts/deb.py --build build --out build/deb
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAINTAINER = "uNVMe developers <unvme@localhost>"


def sh(cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"deb: {' '.join(map(str, cmd))}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout


def introspect(build, what):
    return json.loads(sh(["meson", "introspect", build, what]))


def stage(build, dest):
    sh(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"])
    prefix = next(o["value"] for o in introspect(build, "--buildoptions") if o["name"] == "prefix")
    top = dest / prefix.lstrip("/")
    usr = dest / "usr"
    if prefix != "/usr":
        # the packages install under /usr: move the tree there
        moved = dest / ".moved"
        shutil.move(str(top), moved)
        shutil.rmtree(dest / prefix.lstrip("/").split("/")[0])
        shutil.move(str(moved), usr)
        for pc in usr.rglob("*.pc"):
            text = pc.read_text()
            pc.write_text(re.sub(r"^prefix=.*$", "prefix=/usr", text, flags=re.M))
    return usr, prefix


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def shlibdeps(files):
    elves = [f for f in files if f.is_file() and not f.is_symlink() and is_elf(f)]
    if not elves:
        return []
    with tempfile.TemporaryDirectory() as d:
        (pathlib.Path(d) / "debian").mkdir()
        (pathlib.Path(d) / "debian" / "control").write_text(
            "Source: unvme\n\nPackage: unvme\nArchitecture: any\n")
        out = sh(["dpkg-shlibdeps", "-O", *elves], cwd=d)
    m = re.search(r"^shlibs:Depends=(.*)$", out, re.M)
    return [x.strip() for x in m.group(1).split(",")] if m else []


def package(usr, name, files, summary, description, version, arch, depends, out, section):
    root = out / "root" / name
    if root.exists():
        shutil.rmtree(root)
    for f in files:
        dest = root / f.relative_to(usr.parent)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if f.is_symlink():
            os.symlink(os.readlink(f), dest)
        else:
            shutil.copy2(f, dest)
    deps = shlibdeps([root / f.relative_to(usr.parent) for f in files]) + depends
    size_kb = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink()) // 1024
    (root / "DEBIAN").mkdir()
    body = "\n".join(" " + (line or ".") for line in description.strip().splitlines())
    control = [f"Package: {name}", f"Version: {version}", f"Architecture: {arch}",
               f"Maintainer: {MAINTAINER}", f"Installed-Size: {size_kb}", f"Section: {section}",
               "Priority: optional", "Homepage: https://github.com/OpenMPDK/uNVMe"]
    if deps:
        control.append("Depends: " + ", ".join(dict.fromkeys(deps)))
    control.append(f"Description: {summary}\n{body}")
    (root / "DEBIAN" / "control").write_text("\n".join(control) + "\n")
    if name.startswith("lib") and not name.endswith("-dev"):
        (root / "DEBIAN" / "triggers").write_text("activate-noawait ldconfig\n")
    deb = out / f"{name}_{version}_{arch}.deb"
    sh(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", root, deb])
    return deb


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    build = pathlib.Path(a.build).resolve()
    out = pathlib.Path(a.out or build / "deb").resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    version = introspect(build, "--projectinfo")["version"]
    arch = sh(["dpkg", "--print-architecture"]).strip()
    usr, prefix = stage(build, out / "stage")
    all_files = sorted(p for p in usr.rglob("*") if p.is_file() or p.is_symlink())

    def take(pred):
        picked = [f for f in all_files if pred(str(f.relative_to(usr)))]
        for f in picked:
            all_files.remove(f)
        return picked

    libdir = next(p.parent for p in usr.rglob("libunvme.so.0"))
    lib_rel = str(libdir.relative_to(usr))
    exact = f"{version}"
    made = []
    fio = take(lambda r: r.startswith(lib_rel + "/fio/"))
    if fio:
        made.append(package(usr, "unvme-fio", fio, "fio ioengine for uNVMe devices",
                            "Lets fio drive NVMe devices through the uNVMe user-space driver\n"
                            "(ioengine=external:unvme-fio.so).", version, arch, ["fio"], out, "admin"))
    rocks = take(lambda r: "libblobfs_rocksdb" in r)
    if rocks:
        made.append(package(usr, "unvme-rocksdb", rocks, "BlobFS file system plugin for RocksDB",
                            "A RocksDB FileSystem on an NVMe namespace through BlobFS; db_bench and\n"
                            "ldb load it with LD_PRELOAD and use it through --fs_uri.", version,
                            arch, [], out, "libs"))
    lib = take(lambda r: re.search(r"/libunvme\.so\.0(\.|$)", r) is not None)
    made.append(package(usr, "libunvme0", lib, "uNVMe user-space NVMe driver and KV SDK (library)",
                        "A user-space NVMe driver (VFIO, io_uring passthrough, NVMe/TCP, emulated\n"
                        "controllers) with a key-value SDK compatible with Samsung's uNVMe 2.0.",
                        version, arch, [], out, "libs"))
    dev = take(lambda r: r.startswith("include/") or r.endswith(".pc") or
               r.endswith("/libunvme.so") or r.endswith("/libunvme.a"))
    made.append(package(usr, "libunvme-dev", dev, "uNVMe driver and KV SDK (development files)",
                        "Headers, pkg-config files (unvme, unvme-kv) and the static library.",
                        version, arch, [f"libunvme0 (= {exact})"], out, "libdevel"))
    # the demo, run from the installed tool
    demo = usr / "share" / "unvme" / "demo.sh"
    demo.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "scripts" / "demo.sh", demo)
    all_files.append(demo)
    tools = take(lambda r: r.startswith("bin/") or r.startswith("share/"))
    made.append(package(usr, "unvme-tools", tools, "uNVMe tools: unvme, KV tools, kv_db_bench",
                        "The unvme management and benchmark tool (nvme-cli style), the original\n"
                        "SDK's KV tools (kv_nvme, kv_perf, sdk_perf...), kv_db_bench (db_bench's\n"
                        "workloads over the KV SDK) and\n"
                        "blobfs_perf, with man pages, bash completion and a demo.", version,
                        arch, [], out, "admin"))
    # the Python bindings: pure Python, loading libunvme.so.0 at run time
    pyroot = out / "stage" / "python"
    pydir = pyroot / "usr" / "lib" / "python3" / "dist-packages" / "unvme"
    shutil.copytree(ROOT / "python" / "unvme", pydir,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    made.append(package(pyroot / "usr", "python3-unvme", sorted(p for p in pydir.rglob("*") if p.is_file()),
                        "Python bindings for uNVMe (ctypes)",
                        "Controllers, namespaces, queue pairs and the KV SDK from Python.",
                        version, "all", ["python3", f"libunvme0 (= {exact})"], out, "python"))
    if all_files:
        sys.exit("deb: files in no package: " + ", ".join(str(f.relative_to(usr)) for f in all_files))
    for d in made:
        print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
