# SPDX-License-Identifier: BSD-3-Clause
"""Bad input of every kind: the device's status is printed by name with exit code 1, host-side
problems (bad URI, missing file, unknown alias) exit 3 with a message naming the problem,
nothing crashes, and data written before is still there afterwards."""
import pytest

from conftest import hex_data, json_docs


@pytest.fixture
def dev_with_data(unvme):
    dev = unvme.file_dev(size="4M")
    unvme.ok("write", dev, "-s", 0, "-c", 7, "--pattern", "0x3c")
    return dev


def data_intact(unvme, dev):
    doc = unvme.ok("read", dev, "-s", 0, "-c", 7, "-o", "json").json()
    return hex_data(doc) == b"\x3c" * 4096


def test_bad_io_opcode(unvme, dev_with_data):
    r = unvme.run("io-passthru", dev_with_data, "--opcode", "0x7f")
    assert r.rc == 1
    assert "Invalid Command Opcode (SCT 0h, SC 1h)" in r.err
    assert data_intact(unvme, dev_with_data)


def test_bad_admin_opcode(unvme, dev_with_data):
    r = unvme.run("admin-passthru", dev_with_data, "--opcode", "0x3f")
    assert r.rc == 1
    assert "Invalid Command Opcode" in r.err
    assert data_intact(unvme, dev_with_data)


def test_passthru_success_paths(unvme, dev_with_data):
    # Identify Controller through admin-passthru: CNS 1 in CDW10
    r = unvme.ok("admin-passthru", dev_with_data, "--opcode", "6", "--cdw10", "1",
                 "--data-len", "4096", "--read", "-o", "json")
    j = r.json()
    assert j["status"] == 0 and len(bytes.fromhex(j["data"])) == 4096
    # a read through io-passthru: SLBA 0, one block
    j = unvme.ok("io-passthru", dev_with_data, "--opcode", "2", "--data-len", "512", "--read",
                 "-o", "json").json()
    assert bytes.fromhex(j["data"]) == b"\x3c" * 512
    # a write through io-passthru with an input file
    src = unvme.tmp / "pt.bin"
    src.write_bytes(b"\xab" * 512)
    unvme.ok("io-passthru", dev_with_data, "--opcode", "1", "--cdw10", "20", "--data-len", "512",
             "--write", "--input-file", src)
    assert hex_data(unvme.ok("read", dev_with_data, "-s", 20, "-o", "json").json()) == b"\xab" * 512


@pytest.mark.parametrize("cmd", [["read"], ["write", "--pattern", "1"], ["compare", "--pattern", "1"],
                                 ["write-zeroes"], ["deallocate"]])
def test_past_the_end_is_lba_out_of_range(unvme, dev_with_data, cmd):
    nlbas = (4 << 20) // 512
    r = unvme.run(*cmd, dev_with_data, "-s", nlbas - 1, "-c", 1)
    assert r.rc == 1, r
    assert "LBA Out of Range (SCT 0h, SC 80h)" in r.err
    r = unvme.run(*cmd, dev_with_data, "-s", 1 << 40)
    assert r.rc == 1 and "LBA Out of Range" in r.err
    assert data_intact(unvme, dev_with_data)


@pytest.mark.parametrize("cmd", [["read"], ["write", "--pattern", "1"], ["flush"], ["ns-descs"]])
def test_unknown_namespace(unvme, dev_with_data, cmd):
    r = unvme.run(*cmd, dev_with_data, "-n", 9)
    assert r.rc == 1, r
    assert "Invalid Namespace or Format" in r.err
    assert data_intact(unvme, dev_with_data)


def test_identify_namespace_inactive_and_invalid(unvme, dev_with_data):
    # an inactive NSID (at most NN) gets a zero-filled structure, a larger one is invalid
    assert unvme.ok("id-ns", dev_with_data, "-n", 9, "-o", "json").json()["nsze"] == 0
    r = unvme.run("id-ns", dev_with_data, "-n", "0xfffffff0")
    assert r.rc == 1 and "Invalid Namespace or Format" in r.err
    assert data_intact(unvme, dev_with_data)


CREATE_CQ = ["admin-passthru", "--opcode", "5", "--cdw11", "1", "--data-len", "4096"]


def create_cq(qid, entries):
    return CREATE_CQ + ["--cdw10", str(((entries - 1) << 16) | qid)]


def device_here(unvme):
    """Runs the device in the tool's own process (UNVME_MP=0): raw queue creation and
    controller resets are the business of the process that runs the controller; a client of
    a device process is refused them (docs/multi-process.md)."""
    unvme.env = dict(unvme.env, UNVME_MP="0")


def test_create_cq_with_an_invalid_queue_id(unvme):
    device_here(unvme)
    dev = unvme.file_dev(size="4M")
    r = unvme.run(*create_cq(0, 16), dev)
    assert r.rc == 1 and "Invalid Queue Identifier" in r.err
    r = unvme.run(*create_cq(0xFFFF, 16), dev)
    assert r.rc == 1 and "Invalid Queue Identifier" in r.err


def test_create_cq_twice(unvme):
    device_here(unvme)
    dev = "emu://q?ns=mem:1M:512"
    line = " ".join(create_cq(3, 16))
    r = unvme.batch(dev, f"{line}\n{line}\n")
    assert r.rc == 1, r
    assert r.out.count("success") == 1
    assert "Invalid Queue Identifier" in r.err


def test_create_cq_too_large(unvme):
    device_here(unvme)
    dev = unvme.file_dev(size="4M", extra="mqes=64")
    r = unvme.run(*create_cq(2, 65), dev)
    assert r.rc == 1 and "Invalid Queue Size" in r.err
    r = unvme.run(*create_cq(2, 64), dev)
    assert r.rc == 0, r


@pytest.mark.parametrize("uri, words", [
    ("emu://x?bogus=1", ["bogus"]),
    ("emu://x?ns=mem:1M:513", ["513"]),
    ("emu://x?ns=mem:1000:512", ["1000"]),
    ("emu://x?ns=tape:1M:512", ["tape"]),
    ("emu://x?mode=sideways", ["sideways"]),
    ("foo://bar", ["foo://"]),
])
def test_bad_uri(unvme, uri, words):
    r = unvme.run("id-ctrl", uri)
    assert r.rc == 3, r
    for w in words:
        assert w in r.err, (w, r)
    assert r.out == ""


def test_missing_backing_file(unvme, tmp_path):
    path = tmp_path / "nowhere" / "x.img"
    r = unvme.run("id-ctrl", f"emu://m?ns=file:0:512:{path}")
    assert r.rc == 3
    assert str(path) in r.err


def test_unreadable_backing_file(unvme, tmp_path):
    d = tmp_path / "adir"
    d.mkdir()
    r = unvme.run("id-ctrl", f"emu://m?ns=file:0:512:{d}")
    assert r.rc == 3
    assert str(d) in r.err


def test_unknown_alias(unvme):
    r = unvme.run("id-ctrl", "nosuchdevice")
    assert r.rc == 3
    assert "nosuchdevice" in r.err
    assert "UNVME_DEVICES" in r.err


def test_media_error_injection(unvme):
    dev = "emu://f?ns=mem:1M:512"
    r = unvme.batch(dev, "write -s 0 --pattern 0x10\ninject-fault --media-error 1\n"
                         "read -s 0 -o json\nread -s 0 -o json\nsmart-log -o json\n",
                    keep_going=True)
    assert r.rc == 1, r
    assert "media error" in r.out
    assert "(SCT 2h" in r.err
    docs = json_docs("\n".join(l for l in r.out.splitlines()
                               if not l.startswith(("write:", "inject-fault:"))))
    assert hex_data(docs[0]) == b"\x10" * 512  # the fault hit only one command
    assert docs[1]["media_errors"] >= 1


def test_fatal_controller_resets_by_itself(unvme):
    """CSTS.CFS: the command caught by it fails with SQ deletion, the driver resets the
    controller and says so when asked (-v: the library's notices), and the next command works
    with the data intact."""
    device_here(unvme)
    dev = "emu://f?ns=mem:1M:512"
    script = "write -s 0 --pattern 0x20\ninject-fault --fatal\nread -s 0\nread -s 0 -o json\n"
    quiet = unvme.batch(dev, script, keep_going=True)
    assert quiet.rc == 1 and "reset automatically" not in quiet.err, quiet
    r = unvme.run("batch", dev, "--keep-going", "-v", input=script)
    assert r.rc == 1, r
    assert "fatal" in r.out
    assert "reset automatically" in r.err
    assert "Command Aborted due to SQ Deletion" in r.err
    doc = json_docs(r.out[r.out.index("{"):])[0]
    assert hex_data(doc) == b"\x20" * 512


def test_fatal_controller_manual_reset(unvme):
    device_here(unvme)
    dev = "emu://f?ns=mem:1M:512"
    r = unvme.batch(dev, "write -s 0 --pattern 0x20\ninject-fault --fatal\nreset\n"
                         "read -s 0 -o json\n")
    assert r.rc == 0, r
    doc = json_docs(r.out[r.out.index("{"):])[0]
    assert hex_data(doc) == b"\x20" * 512


def test_inject_fault_clear(unvme):
    dev = "emu://f?ns=mem:1M:512"
    r = unvme.batch(dev, "inject-fault --media-error 5\ninject-fault --clear\nread -s 0\n")
    assert r.rc == 0, r


def test_errors_print_nothing_on_stdout_in_json_mode(unvme, dev_with_data):
    r = unvme.run("read", dev_with_data, "-s", 1 << 40, "-o", "json")
    assert r.rc == 1 and r.out == ""
