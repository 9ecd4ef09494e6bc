# SPDX-License-Identifier: BSD-3-Clause
"""The man pages (built by meson from the scdoc sources next to the tools) render with man,
document every command and option the tools have, and are installed with the bash
completion; the completion offers what the tool offers."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO, TOOL, build_dir

B = build_dir()
UNVME_PAGES = ["unvme"] + [f"unvme-{g}" for g in ("identify", "log", "feature", "admin", "io",
                                                  "perf", "kv", "zns", "blobfs", "fabrics")]
TOOL_PAGES = {"kv_db_bench": "tools/kv_db_bench", "sdk_perf": "tools/kv",
              "sdk_iterate": "tools/kv", "kv_perf": "tools/kv", "blobfs_perf": "tools/blobfs",
              "kv_nvme": "tools/kv_nvme"}
COMPLETION = REPO / "tools" / "unvme" / "completion" / "unvme.bash"

needs_man = pytest.mark.skipif(not shutil.which("scdoc") or not shutil.which("man"),
                               reason="scdoc and man (scripts/deps.d/docs.txt) are not installed")


def page_path(name):
    d = "tools/unvme" if name.startswith("unvme") else TOOL_PAGES[name]
    return B / d / f"{name}.1"


def render(name):
    p = subprocess.run(["man", "--warnings", "-l", str(page_path(name))], capture_output=True,
                       text=True, env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="",
                                           MANPAGER="cat", PAGER="cat"), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", f"{name}: groff warnings:\n{p.stderr}"
    # man may embolden with backspaces when writing to a pipe on some setups
    return re.sub(r".\x08", "", p.stdout)


def tool(*args, env=None):
    return subprocess.run([str(TOOL), *args], capture_output=True, text=True, env=env,
                          timeout=60)


@needs_man
@pytest.mark.parametrize("name", UNVME_PAGES + list(TOOL_PAGES))
def test_page_renders(name):
    text = render(name)
    assert re.search(r"^NAME\n +" + re.escape(name.split("-")[0]), text, re.M), text[:500]
    for section in ("SYNOPSIS", "DESCRIPTION", "SEE ALSO"):
        assert re.search(rf"^{section}$", text, re.M), f"{name} has no {section}"


def commands():
    out = tool("help").stdout
    block = out.split("commands:\n")[1].split("\n\n")[0]
    return [line.split()[0] for line in block.splitlines()]


def test_every_command_has_a_page():
    pairs = [line.split() for line in tool("--man-groups").stdout.splitlines()]
    assert sorted(c for _, c in pairs) == sorted(commands())
    assert {g for g, _ in pairs} == {p.removeprefix("unvme-") for p in UNVME_PAGES}
    p = tool("--man-scdoc", "nosuch")
    assert p.returncode == 2 and "unknown group 'nosuch'" in p.stderr


@needs_man
def test_unvme_pages_list_every_option():
    pages = {g: render("unvme" if g == "unvme" else f"unvme-{g}") for g in
             {line.split()[0] for line in tool("--man-groups").stdout.splitlines()}}
    for line in tool("--man-groups").stdout.splitlines():
        group, cmd = line.split()
        text = pages[group]
        assert re.search(rf"^   {re.escape(cmd)}$", text, re.M), f"{cmd} not in unvme-{group}"
        helptext = tool(cmd, "--help").stdout
        for opt in re.findall(r"^  (?:-\w, )?(--[\w-]+)", helptext, re.M):
            assert opt in text, f"{cmd} {opt} missing from the {group} page"


def help_options(path):
    p = subprocess.run([str(path), "-h" if "kv_db_bench" not in str(path) else "--help"],
                       capture_output=True, text=True, timeout=60)
    out = p.stdout + p.stderr
    opts = set(re.findall(r"^ +(-\w|--[\w-]+)\b", out, re.M))
    opts |= set(re.findall(r"^ +-\w, (--[\w-]+)", out, re.M))
    assert opts, out
    return opts


@needs_man
@pytest.mark.parametrize("name,progs", [
    ("kv_db_bench", ["kv_db_bench/kv_db_bench"]),
    ("sdk_perf", ["kv/sdk_perf", "kv/sdk_perf_async"]),
    ("sdk_iterate", ["kv/sdk_iterate", "kv/sdk_iterate_async"]),
    ("kv_perf", ["kv/kv_perf"]),
    ("blobfs_perf", ["blobfs/blobfs_perf"]),
])
def test_tool_pages_list_every_option(name, progs):
    text = render(name)
    for prog in progs:
        for opt in help_options(B / "tools" / prog):
            assert re.search(rf"(^|[\s,]){re.escape(opt)}\b", text, re.M), \
                f"{prog} {opt} missing from {name}(1)"


@needs_man
def test_install_puts_pages_and_completion(tmp_path):
    p = subprocess.run(["meson", "install", "-C", str(B), "--destdir", str(tmp_path),
                        "--no-rebuild", "--quiet"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    man1 = list(tmp_path.rglob("share/man/man1"))
    assert len(man1) == 1, man1
    names = {f.name for f in man1[0].iterdir()}
    assert {f"{n}.1" for n in UNVME_PAGES + list(TOOL_PAGES)} <= names
    assert {"sdk_perf_async.1", "sdk_iterate_async.1"} <= names
    assert (man1[0] / "sdk_perf_async.1").resolve().name == "sdk_perf.1"
    comp = list(tmp_path.rglob("bash-completion/completions/unvme"))
    assert len(comp) == 1 and comp[0].read_text() == COMPLETION.read_text()


def complete(words, env=None):
    """COMPREPLY of _unvme for the words (the last one is completed)."""
    script = (f"source {COMPLETION}; COMP_WORDS=({' '.join(words)}); "
              f"COMP_CWORD={len(words) - 1}; _unvme; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                       env=env)
    assert p.returncode == 0, p.stderr
    return [w for w in p.stdout.splitlines() if w]


def test_completion(env, tmp_path):
    t = str(TOOL)
    assert complete([t, "id-"], env) == ["id-ctrl", "id-ns"]
    assert set(complete([t, "''"], env)) == set(commands()) | {"--help", "--version"}
    assert complete([t, "read", "--st"], env) == ["--start-block"]
    assert "-n" in complete([t, "read", "emu0", "-"], env)
    assert complete([t, "zns", "rep"], env) == ["report-zones"]
    assert "--start-lba" in complete([t, "zns", "report-zones", "--"], env)
    assert complete([t, "help", "kv-r"], env) == ["kv-read", "kv-read-it"]
    assert complete([t, "read", "emu0", "-o", "j"], env) == ["json"]
    # a FILE option completes file names; a number offers nothing
    (tmp_path / "data.bin").write_bytes(b"x")
    assert complete([t, "write", "emu0", "--data", str(tmp_path / "da")], env) == \
        [str(tmp_path / "data.bin")]
    assert complete([t, "read", "emu0", "-n", "''"], env) == []
    # the device: aliases and emu0, from unvme devices
    env2 = dict(env, UNVME_DEVICES="fast=emu://f?ns=mem:1M:512;slow=emu://s?ns=mem:1M:512")
    assert set(complete([t, "id-ctrl", "''"], env2)) == {"fast", "slow", "emu0"}
    assert complete([t, "id-ctrl", "fa"], env2) == ["fast"]
    assert complete([t, "fs", "sl"], env2) == ["slow"]
    # no device word for a command without one
    assert complete([t, "version", "''"], env2) == []
