# SPDX-License-Identifier: BSD-3-Clause
"""nvme-cli's option semantics (docs/tools.md, "nvme-cli compatibility"): -c is 0's based,
-o is the output format everywhere (binary too), -b/-H, '-d -' for stdin/stdout with the
status on stderr, list-ns -n/-a/-y, get-log --lpo/--lsp/--rae/--csi, passthru's short
dword options and --dry-run/--show-command, format -o json."""
import json

from conftest import json_docs, hex_data

MEM = "emu://c?ns=mem:1M:512"


def test_block_count_is_zeros_based(unvme):
    r = unvme.batch(MEM, "write -s 0 -c 0 -p 0x11\nread -s 0 -c 0 -o json\nread -s 0 -c 1 -o json\n")
    assert r.rc == 0, r
    assert "1 blocks at LBA 0" in r.out
    one, two = json_docs(r.out[r.out.index("{"):])
    assert hex_data(one) == b"\x11" * 512
    assert hex_data(two) == b"\x11" * 512 + b"\x00" * 512


def test_write_from_stdin_and_read_data_only_to_stdout(unvme, tmp_path):
    dev = unvme.file_dev(size="1M")
    data = bytes(range(256)) * 6  # 1536 bytes: three blocks
    r = unvme.run("write", dev, "-s", 10, "-c", 2, "-d", "-", input=data, binary=True)
    assert r.rc == 0, r
    for args in (["-d", "-"], ["-b"]):
        r = unvme.run("read", dev, "-s", 10, "-c", 2, *args, binary=True)
        assert r.rc == 0, r
        assert r.out == data, "stdout must hold the data and nothing else"
        assert b"1536 bytes" in r.err
    # more data on stdin than the blocks hold: a usage error naming stdin
    r = unvme.run("write", dev, "-s", 10, "-c", 0, "-d", "-", input=data, binary=True)
    assert r.rc == 2 and b"stdin holds 1536 bytes" in r.err and b"0's based" in r.err


def test_binary_and_human_readable_structures(unvme):
    dev = unvme.file_dev(size="1M")
    ident = unvme.run("id-ctrl", dev, "-o", "binary", binary=True)
    assert ident.rc == 0 and len(ident.out) == 4096
    j = unvme.ok("id-ctrl", dev, "-H", "-o", "json").json()
    assert int.from_bytes(ident.out[0:2], "little") == j["vid"]
    assert unvme.run("id-ctrl", dev, "-b", binary=True).out == ident.out
    assert len(unvme.run("id-ns", dev, "-b", binary=True).out) == 4096
    assert len(unvme.run("smart-log", dev, "-b", binary=True).out) == 512
    assert len(unvme.run("fw-log", dev, "-o", "binary", binary=True).out) == 512
    assert len(unvme.run("error-log", dev, "-e", 2, "-b", binary=True).out) == 128
    assert unvme.ok("show-regs", dev, "-H").rc == 0
    r = unvme.run("list-ns", dev, "-o", "binary")
    assert r.rc == 2 and "list-ns has no binary output" in r.err


def test_list_ns_start_all_and_csi(unvme):
    dev = unvme.file_dev(nslist=[("1M", 512), ("1M", 512), ("1M", 512)])
    assert unvme.ok("list-ns", dev, "-o", "json").json() == unvme.ok("list-ns", dev, "-y", 0, "-o", "json").json()
    every = unvme.ok("list-ns", dev, "-o", "json").out
    above = unvme.ok("list-ns", dev, "-n", 1, "-o", "json").out
    assert "1" in every and every != above
    ids = [int(x) for x in "".join(c if c.isdigit() else " " for c in above).split()]
    assert 1 not in ids and 2 in ids and 3 in ids
    # CNS 10h (allocated namespaces) goes to the device, which answers by itself: the emulated
    # controller has no namespace management, so Invalid Field in Command
    r = unvme.run("list-ns", dev, "-a")
    assert r.rc == 1 and "Invalid Field in Command" in r.err


def test_get_log_offset_lsp_rae_csi(unvme):
    dev = unvme.stateful_dev(name="gl")
    whole = unvme.run("get-log", dev, "-i", 2, "-l", 512, "-b", binary=True).out
    part = unvme.run("get-log", dev, "-i", 2, "-l", 8, "--lpo", 4, "--rae", "-s", 0, "-y", 0,
                     "-b", binary=True)
    assert part.rc == 0, part
    assert part.out == whole[4:12]
    assert unvme.run("get-log", dev, "-i", 2, "-l", 8, "--lpo", 3).rc == 2


def test_passthru_short_dwords_dry_run_and_show_command(unvme):
    dev = unvme.file_dev(size="1M")
    ident = unvme.run("id-ctrl", dev, "-b", binary=True).out
    # Identify (06h) CNS 1 through -O and -4 (cdw10), the data raw on stdout
    r = unvme.run("admin-passthru", dev, "-O", 6, "-4", 1, "-l", 4096, "-r", "-b", binary=True)
    assert r.rc == 0 and r.out == ident
    r = unvme.run("admin-passthru", dev, "--opcode", 6, "-4", 1, "-l", 4096, "-r", "-d")
    assert r.rc == 0 and r.out == "" and "dry run" in r.err and "0x06" in r.err.lower()
    r = unvme.run("admin-passthru", dev, "-O", 6, "-4", 1, "-l", 4096, "-r", "-s", "-T", "-o", "json")
    assert r.rc == 0 and json.loads(r.out)["opcode"] == 6 and "latency" in r.err
    # --prefill fills the buffer a write sends when no file is given: Write (01h) of one block
    r = unvme.batch(MEM, "io-passthru -O 1 -n 1 -l 512 -w -p 0x7e\nread -s 0 -o json\n")
    assert r.rc == 0, r
    assert hex_data(json_docs(r.out[r.out.index("{"):])[0]) == b"\x7e" * 512


def test_format_dry_run_prints_json(unvme):
    r = unvme.run("format", MEM, "-n", 1, "-o", "json")
    assert r.rc == 2 and "add --force" in r.err
    j = json.loads(r.out)
    assert j["would_erase"] == [1] and j["done"] is False


def test_output_format_is_o_everywhere(unvme):
    # the key-value commands too (their value offset is --offset)
    assert unvme.run("kv-exist", "emu://k?ns=kv:8M", "-k", "x", "-o", "json").rc in (0, 1)
    r = unvme.run("kv-read", "emu://k?ns=kv:8M", "-k", "x", "-o", "512")
    assert r.rc == 2 and "--output-format" in r.err
