# SPDX-License-Identifier: BSD-3-Clause
"""unvme's key-value commands (kv-write, kv-read, kv-delete, kv-exist, kv-open-it,
kv-read-it, kv-close-it, kv-it-info), through the SDK on emulated KV namespaces."""
import json

import pytest

from conftest import json_docs


def kv_file_dev(unvme, name="kv", size="64M"):
    """A KV namespace kept in a file under tmp_path: its pairs outlive the process."""
    return f"emu://{name}?ns=kv:{size}::{unvme.tmp / (name + '.kv')}"


MEM = "emu://kvmem?ns=kv:64M"


def test_write_read_across_processes(unvme):
    dev = kv_file_dev(unvme)
    val = unvme.tmp / "v.bin"
    payload = bytes((i * 7) & 0xFF for i in range(3000))
    val.write_bytes(payload)
    r = unvme.ok("kv-write", dev, "-k", "hello-key", "-v", val)
    assert "key 'hello-key' stored, 3000-byte value" in r.out
    out = unvme.tmp / "out.bin"
    r = unvme.ok("kv-read", dev, "-k", "hello-key", "-s", 4096, "-v", out)
    assert out.read_bytes() == payload
    assert "3000 bytes written" in r.out and "value size 3000" in r.out
    # JSON with the data as hex; a value offset skips the first 512 bytes
    j = unvme.ok("kv-read", dev, "-k", "hello-key", "-s", 4096, "--offset", 512,
                 "--output-format", "json").json()
    assert j["value_size"] == 3000 - 512 and bytes.fromhex(j["data"]) == payload[512:]
    assert j["result"] == "KV_SUCCESS (0x00)"
    unvme.ok("kv-exist", dev, "-k", "hello-key")


def test_value_size_and_text_dump(unvme):
    dev = kv_file_dev(unvme)
    val = unvme.tmp / "v.txt"
    val.write_bytes(b"0123456789abcdef")
    unvme.ok("kv-write", dev, "-k", "abcd", "-v", val, "-s", 8)
    r = unvme.ok("kv-read", dev, "-k", "abcd", "-s", 64)
    assert "8 bytes (value size 8)" in r.out and '"01234567"' in r.out
    # no file: --value-size zeros
    unvme.ok("kv-write", dev, "-k", "zero", "-s", 12)
    j = unvme.ok("kv-read", dev, "-k", "zero", "--output-format", "json").json()
    assert j["data"] == "00" * 12


def test_exist_after_delete(unvme):
    dev = kv_file_dev(unvme)
    unvme.ok("kv-write", dev, "-k", "gone", "-s", 16)
    r = unvme.ok("kv-delete", dev, "-k", "gone")
    assert "deleted" in r.out
    r = unvme.run("kv-exist", dev, "-k", "gone")
    assert r.rc == 1 and "KV_ERR_NOT_EXIST_KEY (0x10)" in r.err and r.out == ""
    r = unvme.run("kv-read", dev, "-k", "gone")
    assert r.rc == 1 and "KV_ERR_NOT_EXIST_KEY" in r.err


@pytest.mark.parametrize("args", [["-k", "abc"], ["-k", "abcd", "-l", 256], ["-k", "abc", "-l", 3]])
def test_bad_key_sizes(unvme, args):
    r = unvme.run("kv-write", MEM, *args, "-s", 8)
    assert r.rc == 1 and "KV_ERR_INVALID_KEY_SIZE (0x03)" in r.err, r


def test_longest_key_and_padding(unvme):
    dev = kv_file_dev(unvme)
    r = unvme.ok("kv-write", dev, "-k", "long", "-l", 255, "-s", 4)
    assert "'long' + '251 zero bytes'" in r.out
    unvme.ok("kv-exist", dev, "-k", "long", "-l", 255)
    assert unvme.run("kv-exist", dev, "-k", "long").rc == 1


def test_show_args_latency_async(unvme):
    dev = kv_file_dev(unvme)
    r = unvme.ok("kv-write", dev, "-k", "akey", "-s", 100, "-w", "-t", "-a")
    assert "key:          'akey'" in r.out and "value size:   100" in r.out
    assert "mode:         async" in r.out and "latency:" in r.out
    j = unvme.ok("kv-exist", dev, "-k", "akey", "-a", "-t", "--output-format", "json").json()
    assert j["latency_us"] >= 0 and j["result"].startswith("KV_SUCCESS")


def test_usage_errors(unvme):
    r = unvme.run("kv-write", MEM, "-s", 8)
    assert r.rc == 2 and "--key" in r.err
    r = unvme.run("kv-write", MEM, "-k", "abcd")
    assert r.rc == 2 and "--value" in r.err
    r = unvme.run("kv-write", MEM, "-k", "abcd", "-Z")
    assert r.rc == 2 and "-Z" in r.err
    r = unvme.run("kv-read-it", MEM)
    assert r.rc == 2 and "--id" in r.err
    r = unvme.run("kv-write", MEM, "-k", "abcd", "-v", unvme.tmp / "missing.bin")
    assert r.rc == 3 and "missing.bin" in r.err


def test_bad_device(unvme):
    env = {k: v for k, v in unvme.env.items() if k != "UNVME_QUIET"}
    unvme.env = env
    r = unvme.run("kv-write", "emu://x?ns=kv:3Q", "-k", "abcd", "-s", 4)
    assert r.rc == 3 and "3Q" in r.err and "cannot initialize the SDK" in r.err


def test_iterator_in_batch(unvme):
    script = "\n".join([
        "kv-write -k key1 -s 16",
        "kv-write -k key2 -s 16",
        "kv-write -k zzz3 -s 16",
        "kv-open-it -p 0x6b657900 -b 0xffffff00 -o json",
        "kv-it-info -o json",
        "kv-read-it -i 1 -o json",
        "kv-close-it -i 1 -o json",
        "kv-it-info -o json",
    ]) + "\n"
    r = unvme.batch(MEM, script)
    assert r.rc == 0, r
    docs = json_docs(r.out[r.out.index("{"):])
    opened, info, read, closed, info2 = docs
    assert opened["handle"] == 1 and opened["bitmask"] == 0xFFFFFF00
    assert info == [{"handle": 1, "type": "key", "keyspace": 0, "prefix": 0x6B657900,
                     "bitmask": 0xFFFFFF00, "eof": False}]
    assert sorted(read["keys"]) == ["key1", "key2"] and read["eof"] is True
    assert closed == {"handle": 1, "closed": True}
    assert info2 == []


def test_iterator_text_and_file(unvme):
    script = ("kv-write -k abcd -s 4\nkv-open-it\nkv-read-it -i 1 -v "
              f"{unvme.tmp / 'it.bin'}\nkv-read-it -i 1\nkv-close-it -i 1\nkv-close-it -i 1\n")
    r = unvme.batch(MEM, script)
    assert r.rc == 1
    assert "iterator 1 opened (prefix 0x00000000, bitmask 0x00000000" in r.out
    assert "iterator 1: 1 key in 12 bytes, end of data, written to" in r.out
    raw = (unvme.tmp / "it.bin").read_bytes()
    assert raw == (1).to_bytes(4, "little") + (4).to_bytes(4, "little") + b"abcd"
    assert "kv-close-it: iterator 1 closed" in r.out
    # the second close: the handle is gone
    assert "KV_ERR_ITERATE_REQUEST_FAIL" in r.err or "KV_ERR_ITERATE" in r.err


def test_seventeenth_iterator(unvme):
    lines = [f"kv-open-it -p {i} -b 0xffffffff" for i in range(1, 18)]
    r = unvme.batch(MEM, "\n".join(lines) + "\n")
    assert r.rc == 1
    assert r.out.count("opened") == 16
    assert "KV_ERR_ITERATE_NO_AVAILABLE_HANDLE (0x91)" in r.err


def test_same_iterator_twice(unvme):
    r = unvme.batch(MEM, "kv-open-it -p 7 -b 0xffffffff\nkv-open-it -p 7 -b 0xffffffff\n")
    assert r.rc == 1 and "KV_ERR_ITERATE_HANDLE_ALREADY_OPENED (0x92)" in r.err


def test_help_lists_kv_commands(unvme):
    out = unvme.ok("help").out
    for c in ("kv-write", "kv-read", "kv-delete", "kv-exist", "kv-open-it", "kv-read-it",
              "kv-close-it", "kv-it-info"):
        assert c in out
    h = unvme.ok("kv-write", "--help").out
    for opt in ("-k, --key", "-l, --key-len", "-v, --value", "-s, --value-size", "    --offset",
                "-i, --io-option", "-n, --namespace-id", "-w, --show-args", "-t, --latency",
                "-a, --async"):
        assert opt in h, opt


def test_original_kv_nvme_long_names_are_aliases(unvme):
    """--key_length, --value_size, --io_option, --show-command, --asynchronous as the original
    kv_nvme spelt them, with the same effect as ours."""
    dev = kv_file_dev(unvme, name="alias")
    r = unvme.ok("kv-write", dev, "-k", "abcdefgh", "--key_length", 6, "--value_size", 100,
                 "--io_option", 0, "--show-command", "--asynchronous")
    assert "key length:   6" in r.out and "mode:         async" in r.out
    assert "key 'abcdef' stored, 100-byte value" in r.out
    j = unvme.ok("kv-read", dev, "-k", "abcdef", "--value_size", 512, "-o", "json").json()
    assert j["value_size"] == 100 and j["key_length"] == 6
    # an alias is the same option: given twice under two names, the last value counts
    j = unvme.ok("kv-exist", dev, "-k", "abcdefgh", "--key-len", 8, "--key_length", 6,
                 "-o", "json").json()
    assert j["key_length"] == 6


def test_dry_run_sends_nothing(unvme):
    dev = kv_file_dev(unvme, name="dry")
    for dry in ("-d", "--dry-run"):
        r = unvme.ok("kv-write", dev, "-k", "never", "-s", 16, dry)
        assert "dry run, nothing sent" in r.out and "key:          'never'" in r.out
    r = unvme.run("kv-exist", dev, "-k", "never")
    assert r.rc == 1 and "KV_ERR_NOT_EXIST_KEY" in r.err
    r = unvme.ok("kv-open-it", dev, "-p", 7, "-d")
    assert "dry run" in r.out and "prefix:       0x00000007" in r.out


def test_iterator_show_latency_async(unvme):
    script = ("kv-write -k it01 -s 8\nkv-write -k it02 -s 8\n"
              "kv-open-it -w -t\n"
              "kv-read-it -i 1 -w -t -a\n"
              "kv-close-it -i 1 --show-command -t\n")
    r = unvme.batch(MEM, script)
    assert r.rc == 0, r
    assert "command:      kv-open-it" in r.out and "command:      kv-read-it" in r.out
    assert "mode:         async" in r.out and "command:      kv-close-it" in r.out
    assert r.out.count("latency:") == 3
    assert "2 keys" in r.out and "it01" in r.out and "it02" in r.out
