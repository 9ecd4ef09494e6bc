# SPDX-License-Identifier: BSD-3-Clause
"""One device handle per process, and what the tool says about bad input: kv-* and block
commands in one batch on the same device, long arguments echoed by their start, emu:// URIs
refused alike for every kind of empty parameter, UNVME_QUIET meaning what it says, and the
SWALLOW fault accepted by inject-fault."""
import pytest

BIG = "x" * (1 << 20)


@pytest.mark.parametrize("backing", ["file", "memory"])
def test_batch_mixes_kv_and_block_commands_on_one_device(unvme, backing):
    if backing == "file":
        dev = (f"emu://mix?ns=file:1M:512:{unvme.tmp / 'blk.img'}"
               f"&ns=kv:16M::{unvme.tmp / 'kv.log'}")
    else:
        dev = "emu://mixmem?ns=mem:1M:512&ns=kv:16M"
    val = unvme.tmp / "v.bin"
    val.write_bytes(bytes(range(200)))
    script = (f"write -s 3 -c 0 --pattern 0x5a\n"
              f"kv-write -k mixed-key -v {val}\n"
              f"read -s 3 -c 0 -o json\n"
              f"kv-read -k mixed-key -s 512 --output-format json\n"
              f"id-ctrl -o json\n"
              f"kv-exist -k mixed-key\n")
    r = unvme.batch(dev, script)
    assert r.rc == 0, r
    assert "cannot" not in r.err and "in use" not in r.err, r.err
    assert "5a5a5a5a" in r.out                       # the block written before the SDK started
    assert bytes(range(200)).hex() in r.out           # the pair stored through the SDK


def test_file_backed_kv_then_block_then_kv_again(unvme):
    # the SDK first, block commands after it, the SDK again: still one device
    dev = f"emu://mix2?ns=kv:16M::{unvme.tmp / 'kv2.log'}"
    r = unvme.batch(dev, "kv-write -k abcd -s 32\nid-ctrl\nid-ns -n 1\nkv-read -k abcd -s 64\n")
    assert r.rc == 0, r


@pytest.mark.parametrize("line", [
    f"id-ctrl {BIG}",
    f"id-ctrl emu://{BIG}",
    f"read emu:// --{BIG}",
    f"read emu:// -s {BIG}",
    f"id-ctrl -o {BIG}",
    f"help {BIG}",
    BIG,
    f"write emu:// --data {BIG}",
])
def test_a_huge_argument_is_echoed_by_its_start(unvme, line):
    r = unvme.batch("emu://b?ns=mem:1M:512", line + "\n")
    assert r.rc in (2, 3), r
    assert len(r.err) < 2000, f"{len(r.err)} bytes of stderr"
    assert r.err.startswith("unvme: ")


@pytest.mark.parametrize("uri, why", [
    ("emu://u?ns=mem:1M:512&&&", "empty parameter"),
    ("emu://u?&ns=mem:1M:512", "empty parameter"),
    ("emu://u?ns=mem:1M:512&", "empty parameter"),
    ("emu://u?=5", "empty key"),
    ("emu://u?", "nothing after '?'"),
])
def test_empty_uri_parameters_are_refused_alike(unvme, uri, why):
    r = unvme.run("id-ctrl", uri)
    assert r.rc == 3 and why in r.err, r


def test_unvme_quiet(unvme):
    # the notice about missing hugepages is the library's; only a value other than 0 hides it
    env = {k: v for k, v in unvme.env.items() if k != "UNVME_QUIET"}
    notices = {}
    for value in (None, "", "0", "1", "yes"):
        e = dict(env)
        if value is not None:
            e["UNVME_QUIET"] = value
        unvme.env, saved = e, unvme.env
        try:
            r = unvme.ok("id-ctrl", "emu://quiet?ns=mem:1M:512")
        finally:
            unvme.env = saved
        notices[value] = "unvme: " in r.err
    if not notices[None]:
        pytest.skip("no library notice on this machine (hugepages are reserved)")
    assert notices == {None: True, "": True, "0": True, "1": False, "yes": False}, notices


def test_inject_fault_swallow(unvme):
    r = unvme.batch("emu://sw?ns=mem:1M:512", "inject-fault --swallow 2\ninject-fault --clear\n"
                    "read -s 0 -c 0\n")
    assert r.rc == 0, r
    assert "lost for good" in r.out
    r = unvme.run("inject-fault", "emu://sw?ns=mem:1M:512", "--swallow", "1", "--drop", "1")
    assert r.rc == 2 and "--swallow N" in r.err, r
