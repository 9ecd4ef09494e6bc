# SPDX-License-Identifier: BSD-3-Clause
"""Block I/O through the tool: round trips on file and memory namespaces, compare, flush,
write-zeroes, deallocate, and transfers larger than one command."""
import pytest

from conftest import block_pattern, hex_data, json_docs


def blocks(first, count, lba_size, seed=0):
    return b"".join(block_pattern(first + i, lba_size, seed) for i in range(count))


def read_back(unvme, dev, slba, count, nsid=1, tmpname="out.bin"):
    out = unvme.tmp / tmpname
    unvme.ok("read", dev, "-n", nsid, "-s", slba, "-c", count - 1, "-d", out)
    return out.read_bytes()


@pytest.mark.parametrize("lba", [512, 4096])
def test_file_round_trip_across_processes(unvme, lba):
    dev = unvme.file_dev(size="8M", lba=lba)
    data = blocks(100, 9, lba)
    src = unvme.tmp / "in.bin"
    src.write_bytes(data)
    r = unvme.ok("write", dev, "-s", 100, "-c", 8, "-d", src)
    assert "success" in r.out
    assert read_back(unvme, dev, 100, 9) == data
    # neighbours untouched
    assert read_back(unvme, dev, 99, 1) == bytes(lba)
    assert read_back(unvme, dev, 109, 1) == bytes(lba)
    # compare: equal data matches, different data is a Compare Failure
    assert unvme.ok("compare", dev, "-s", 100, "-c", 8, "-d", src).rc == 0
    bad = bytearray(data)
    bad[lba * 4 + 17] ^= 0xFF
    src.write_bytes(bytes(bad))
    r = unvme.run("compare", dev, "-s", 100, "-c", 8, "-d", src)
    assert r.rc == 1 and "Compare Failure" in r.err, r


def test_read_json_and_data_size(unvme):
    dev = unvme.file_dev(size="4M")
    unvme.ok("write", dev, "-s", 7, "-c", 1, "--pattern", "0x5a")
    doc = unvme.ok("read", dev, "-s", 7, "-c", 1, "-o", "json").json()
    assert hex_data(doc) == b"\x5a" * 1024
    doc = unvme.ok("read", dev, "-s", 7, "-z", 100, "-o", "json").json()
    assert hex_data(doc) == b"\x5a" * 100
    r = unvme.ok("read", dev, "-s", 7)
    assert "5a 5a" in r.out.lower()


def test_write_pads_a_short_file_with_zeroes(unvme):
    dev = unvme.file_dev(size="4M", lba=4096)
    src = unvme.tmp / "short.bin"
    src.write_bytes(b"hello")
    unvme.ok("write", dev, "-s", 3, "-d", src)
    assert read_back(unvme, dev, 3, 1) == b"hello" + bytes(4091)


def test_write_needs_data_or_pattern(unvme):
    r = unvme.run("write", unvme.file_dev(size="4M"), "-s", 0)
    assert r.rc == 2 and "--pattern" in r.err


def test_memory_namespace_round_trip_in_one_process(unvme):
    dev = "emu://m?ns=mem:16M:4096&ns=mem:4M:512"
    src = unvme.tmp / "in.bin"
    src.write_bytes(blocks(5, 3, 4096, seed=7))
    script = (f"write -n 1 -s 5 -c 2 -d {src}\n"
              "read -n 1 -s 5 -c 2 -o json\n"
              f"compare -n 1 -s 5 -c 2 -d {src}\n"
              "write -n 2 -s 0 -c 3 --pattern 0xc3 -o json\n"
              "read -n 2 -s 0 -c 3 -o json\n"
              "read -n 1 -s 4 -o json\n")
    r = unvme.batch(dev, script)
    assert r.rc == 0, r
    lines = [l for l in r.out.splitlines() if not l.startswith(("write:", "compare:"))]
    docs = json_docs("\n".join(lines))
    assert hex_data(docs[0]) == src.read_bytes()
    assert docs[1]["result"] == "success" and docs[1]["blocks"] == 4
    assert hex_data(docs[2]) == b"\xc3" * 2048
    assert hex_data(docs[3]) == bytes(4096)
    # the device (its device process) outlives the batch: the next process reads the data;
    # stopped, a memory namespace starts empty, as after a power cycle
    doc = unvme.ok("read", dev, "-n", 1, "-s", 5, "-o", "json").json()
    assert hex_data(doc) == src.read_bytes()[:4096]
    unvme.ok("serve", dev, "--stop", "-q")
    doc = unvme.ok("read", dev, "-n", 1, "-s", 5, "-o", "json").json()
    assert hex_data(doc) == bytes(4096)


def test_flush(unvme):
    dev = unvme.file_dev(size="4M")
    r = unvme.ok("flush", dev)
    assert "success" in r.out
    assert unvme.ok("flush", dev, "-o", "json").json()["result"] == "success"


@pytest.mark.parametrize("cmd", [["write-zeroes"], ["write-zeroes", "--deac"], ["deallocate"]])
def test_zeroing_commands_read_back_zeroes(unvme, cmd):
    dev = unvme.file_dev(size="4M")
    unvme.ok("write", dev, "-s", 10, "-c", 19, "--pattern", "0xee")
    unvme.ok(*cmd, dev, "-s", 12, "-c", 4)
    data = read_back(unvme, dev, 10, 20)
    assert data[: 2 * 512] == b"\xee" * 1024
    assert data[2 * 512: 7 * 512] == bytes(5 * 512)
    assert data[7 * 512:] == b"\xee" * (13 * 512)


def test_transfers_larger_than_one_command_are_split(unvme):
    dev = unvme.file_dev(size="16M")
    mdts_bytes = 4096 << unvme.ok("id-ctrl", dev, "-o", "json").json()["mdts"]
    count = mdts_bytes // 512 * 2 + 3
    data = blocks(1000, count, 512, seed=3)
    src = unvme.tmp / "big.bin"
    src.write_bytes(data)
    unvme.ok("write", dev, "-s", 1000, "-d", src)
    assert read_back(unvme, dev, 1000, count) == data
