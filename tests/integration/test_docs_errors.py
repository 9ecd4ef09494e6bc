# SPDX-License-Identifier: BSD-3-Clause
"""Errors name their cause without switches (docs/kv-sdk.md "Results and errors",
docs/tools.md, docs/kv-tools.md): kv_errmsg() gives the reason of a failed SDK call, a failed
kv_sdk_init is printed by default (and not when the program prints it itself or the user
silenced the library), the tools and Python print the SDK's reason, and a key-value command on
a block namespace or a block command on a key-value namespace names the namespace."""
import os
import shutil
import subprocess

import pytest

from conftest import REPO, build_dir

PROG = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unvme/unvme.h>
#include "kv_apis.h"
#include "kv_errmsg.h"

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[2], "quiet"))
		unvme_set_log(0);
	int rc = kv_sdk_init(KV_SDK_INIT_FROM_JSON, argv[1]);
	printf("init 0x%x [%s]\n", rc, kv_errmsg());
	if (rc)
		return 1;
	uint64_t h[NR_MAX_SSD];
	int n;
	kv_get_device_handles(&n, h);
	char key[300], val[16] = "v";
	memset(key, 'k', sizeof(key));
	kv_pair kv = { .key = { key, 300 }, .value = { val, sizeof(val) } };
	printf("store 0x%x [%s]\n", kv_store(h[0], &kv), kv_errmsg());
	kv.key.length = 8;
	printf("store 0x%x [%s]\n", kv_store(h[0], &kv), kv_errmsg());
	kv_sdk_finalize();
	printf("after 0x%x [%s]\n", kv_store(h[0], &kv), kv_errmsg());
	return 0;
}
'''


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    if not shutil.which("cc") or not shutil.which("pkg-config"):
        pytest.skip("cc and pkg-config are needed")
    d = tmp_path_factory.mktemp("kverr")
    (d / "p.c").write_text(PROG)
    env = dict(os.environ, PKG_CONFIG_PATH=str(build_dir() / "meson-uninstalled"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "unvme-kv"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["cc", "-Wall", "-Werror", "-o", str(d / "p"), str(d / "p.c"), *flags],
                   check=True, capture_output=True)
    return d / "p"


def run(prog, env, *args):
    e = dict(env, LD_LIBRARY_PATH=str(build_dir()))
    return subprocess.run([str(prog), *args], env=e, capture_output=True, text=True, timeout=60)


def test_init_failure_is_printed_by_default_and_in_kv_errmsg(prog, env, tmp_path):
    missing = str(tmp_path / "missing.json")
    reason = f"config file '{missing}': cannot be read: No such file or directory"
    p = run(prog, env, missing)
    assert p.returncode == 1
    assert p.stdout == f"init 0x206 [{reason}]\n"
    assert p.stderr == f"kvsdk: kv_sdk_init failed: {reason}\n"
    # the program prints it itself, or the user silenced the library: once, in kv_errmsg
    for args, extra in (((missing, "quiet"), {}), ((missing,), {"UNVME_QUIET": "1"}),
                        ((missing,), {"UNVME_LOG": "0"})):
        p = run(prog, dict(env, **extra), *args)
        assert p.stdout == f"init 0x206 [{reason}]\n" and p.stderr == "", (args, extra, p)


def test_kv_errmsg_names_a_refused_argument_and_empties_on_success(prog, env, tmp_path):
    cfg = tmp_path / "kv.json"
    cfg.write_text('{"slab_alloc_policy": "posix", "device_description": '
                   '[{"dev_id": "emu://e?ns=kv:64M"}]}')
    p = run(prog, env, str(cfg))
    assert p.returncode == 0, p
    lines = p.stdout.splitlines()
    assert lines[0] == "init 0x0 []"
    assert lines[1] == "store 0x3 [kv_store: key length 300 is not 4..255]", lines
    assert lines[2] == "store 0x0 []"
    assert lines[3].startswith("after 0x201 [kv_store: the SDK is not initialized"), lines
    assert p.stderr == ""


def test_tools_print_the_sdks_reason_once(unvme, env, tmp_path):
    kv = build_dir() / "tools" / "kv"
    p = subprocess.run([str(kv / "sdk_perf"), "-d", "nvme7", "-n", "1"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 3
    assert p.stderr.startswith("sdk_perf: cannot initialize the SDK on nvme7: "
                               "KV_ERR_DD_NO_DEVICE (0x100): device id 'nvme7' is not a URI")
    assert p.stderr.count("\n") == 1, p.stderr
    missing = str(tmp_path / "gone.json")
    for tool, args in (("sdk_perf", ["-j", missing]), ("kv_perf", ["-j", missing, "-w"])):
        p = subprocess.run([str(kv / tool), *args, "-n", "1"], env=env, capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 3, p
        assert p.stderr == (f"{tool}: cannot initialize the SDK from {missing}: "
                            "KV_ERR_SDK_INVALID_PARAM (0x206): cannot be read: "
                            "No such file or directory\n"), p.stderr
    # asked for, the library's own line comes too
    p = subprocess.run([str(kv / "sdk_perf"), "-j", missing], env=dict(env, UNVME_LOG="1"),
                       capture_output=True, text=True, timeout=60)
    assert "kvsdk: kv_sdk_init failed:" in p.stderr and "sdk_perf: cannot" in p.stderr
    # hostkv zones too small: the engine's reason, in unvme kv-* as in the benchmarks
    dev = "hostkv://emu://z?ns=zns,zone=1M:64M:4096?format=1"
    r = unvme.run("kv-write", dev, "-k", "abcd", "-s", "16")
    assert r.rc == 3 and "zones of 1024 KiB are too small" in r.err, r


def test_namespace_of_the_wrong_kind_is_named(unvme, env):
    kvdev, blk = "emu://k?ns=kv:64M", "emu://b?ns=mem:64M"
    for cmd in (["read", kvdev, "-s", "0", "-c", "0"],
                ["write", kvdev, "-s", "0", "--pattern", "1"],
                ["deallocate", kvdev, "-s", "0", "-c", "0"]):
        r = unvme.run(*cmd)
        assert r.rc == 2 and "namespace 1 of emu://k?ns=kv:64M is a key-value namespace" in r.err
        assert "Invalid Key Size" not in r.err, r
    r = unvme.run("perf", kvdev, "-t", "1")
    assert r.rc == 2 and "is a key-value namespace" in r.err and r.out == "", r
    unvme.ok("flush", kvdev)  # Flush is common to the command sets
    for cmd in (["kv-read", blk, "-k", "abcd"], ["kv-write", blk, "-k", "abcd", "-s", "16"],
                ["kv-exist", blk, "-k", "abcd"]):
        r = unvme.run(*cmd)
        assert r.rc == 1 and f"{blk} has no key-value namespace: namespace 1 is a block " \
                             "namespace (the NVM command set)" in r.err, r
    # a missing key on a key-value namespace is only that
    r = unvme.run("kv-exist", kvdev, "-k", "abcd")
    assert r.err.strip() == "unvme: kv-exist: KV_ERR_NOT_EXIST_KEY (0x10)", r
    p = subprocess.run([str(build_dir() / "tools" / "kv" / "sdk_perf"), "-d", blk, "-n", "4"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert f"sdk_perf: {blk} has no key-value namespace: namespace 1 is a block namespace" \
        in p.stderr, p.stderr


def test_python_kvsdk_says_why_it_cannot_start(env):
    code = ("import unvme\n"
            "try:\n"
            "    unvme.KvSdk(['hostkv://emu://z?ns=zns,zone=1M:64M:4096?format=1'])\n"
            "except unvme.KvError as e:\n"
            "    print(e.name, '|', e.reason)\n")
    e = dict(env, PYTHONPATH=str(REPO / "python"), UNVME_LIB=str(build_dir() / "libunvme.so"))
    p = subprocess.run(["python3", "-c", code], env=e, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p
    name, reason = p.stdout.strip().split(" | ")
    assert name == "KV_ERR_DD_NO_DEVICE"
    assert reason.endswith("zones of 1024 KiB are too small: the KV engine needs at least "
                           "4240 KiB (a 2 MiB value and its unit, twice)"), reason
    assert not reason.startswith("config file"), reason  # the bindings' own file is not named
    assert p.stderr == "", p.stderr
