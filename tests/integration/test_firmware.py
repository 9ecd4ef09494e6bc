# SPDX-License-Identifier: BSD-3-Clause
"""Firmware: fw-image builds the emulator's format, fw-download (download only, as nvme-cli's)
then fw-commit (or its alias fw-activate) + reset changes the running revision, bad images and
read-only slot 1 are refused by the device."""
import struct
import zlib

from conftest import json_docs


def make_image(unvme, rev, payload=None):
    img = unvme.tmp / f"fw-{rev}.bin"
    args = ["fw-image", "--revision", rev, "--output", img]
    if payload is not None:
        p = unvme.tmp / f"payload-{rev}.bin"
        p.write_bytes(payload)
        args.append(p)
    r = unvme.ok(*args)
    assert str(img) in r.out
    return img


def running(unvme, dev):
    return unvme.ok("id-ctrl", dev, "-o", "json").json()["fr"]


def test_fw_image_format(unvme):
    payload = bytes(range(256)) * 10
    data = make_image(unvme, "ABC1.2", payload).read_bytes()
    magic, rev, length, crc, reserved = struct.unpack_from("<8s8sII8s", data)
    assert magic == b"UNVMEFW1"
    assert rev == b"ABC1.2  "
    assert length == len(payload)
    assert crc == zlib.crc32(payload)
    assert reserved == bytes(8)
    assert data[32:32 + length] == payload
    # the generated default payload is valid too
    data = make_image(unvme, "GEN1").read_bytes()
    _, _, length, crc, _ = struct.unpack_from("<8s8sII8s", data)
    assert crc == zlib.crc32(data[32:32 + length]) and length > 0


def test_download_and_reset_changes_the_revision(unvme):
    dev = unvme.stateful_dev()
    old = running(unvme, dev)
    img = make_image(unvme, "NEW2.0")
    r = unvme.batch(dev, f"fw-download -f {img}\nfw-commit -s 2 -a 1 --reset\n")
    assert r.rc == 0, r
    assert "running firmware revision NEW2.0" in r.out
    # the controller state is non-volatile: a new process sees the new firmware
    assert running(unvme, dev) == "NEW2.0"
    log = unvme.ok("fw-log", dev, "-o", "json").json()
    assert log["afi"] & 7 == 2
    assert log["frs2"] == "NEW2.0"
    assert log["frs1"] == old


def test_download_without_reset_says_a_reset_is_needed(unvme):
    dev = "emu://v?ns=mem:1M:512"
    img = make_image(unvme, "LATER1")
    r = unvme.batch(dev, f"id-ctrl -o json\nfw-download -f {img}\nfw-activate -s 2 -a 1\n"
                         "id-ctrl -o json\nreset\nid-ctrl -o json\nfw-log -o json\n")
    assert r.rc == 0, r
    assert "reset is needed" in r.out
    docs = json_docs("\n".join(l for l in r.out.splitlines()
                               if not l.startswith(("fw-download:", "fw-activate:", "reset:"))))
    before, still, after, log = docs
    assert still["fr"] == before["fr"] != "LATER1"
    assert after["fr"] == "LATER1"
    assert log["afi"] & 7 == 2
    j = json_docs(unvme.batch(dev, f"fw-download -f {img} -o json\nfw-commit -s 2 -a 1 -o json\n").out)
    assert j[0]["image_bytes"] == img.stat().st_size
    assert j[1]["reset_needed"] is True


def test_fw_download_only_downloads(unvme):
    dev = unvme.stateful_dev()
    old = running(unvme, dev)
    img = make_image(unvme, "ONLY1")
    r = unvme.batch(dev, f"fw-download -f {img}\nreset\nid-ctrl -o json\nfw-log -o json\n")
    assert r.rc == 0, r
    assert f"downloaded {img.stat().st_size} bytes" in r.out and "fw-commit" in r.out
    docs = json_docs("\n".join(l for l in r.out.splitlines()
                               if not l.startswith(("fw-download:", "reset:"))))
    assert docs[0]["fr"] == old
    assert "ONLY1" not in docs[1].values()
    # the commit options belong to fw-commit now
    r = unvme.run("fw-download", dev, "-f", img, "-s", 2)
    assert r.rc == 2 and "unknown option '-s'" in r.err


def test_invalid_image_is_rejected(unvme):
    dev = unvme.stateful_dev()
    old = running(unvme, dev)
    img = make_image(unvme, "BAD1", bytes(range(256)) * 4)
    data = bytearray(img.read_bytes())
    data[40] ^= 0x55  # payload no longer matches its CRC
    img.write_bytes(bytes(data))
    r = unvme.batch(dev, f"fw-download -f {img}\nfw-commit -s 2 -a 1 --reset\n")
    assert r.rc == 1, r
    assert "Invalid Firmware Image" in r.err
    assert running(unvme, dev) == old
    # not an image at all (after a reset: the device, which outlives the batch, keeps a
    # partly downloaded image until then)
    junk = unvme.tmp / "junk.bin"
    junk.write_bytes(b"\x00" * 4096)
    r = unvme.batch(dev, f"reset\nfw-download -f {junk}\nfw-commit -s 2 -a 1\n")
    assert r.rc == 1 and "Invalid Firmware Image" in r.err


def test_slot_1_is_read_only(unvme):
    dev = unvme.stateful_dev()
    assert unvme.ok("id-ctrl", dev, "-o", "json").json()["frmw"] & 1
    img = make_image(unvme, "SLOT1")
    r = unvme.batch(dev, f"fw-download -f {img}\nfw-commit -s 1 -a 1\n")
    assert r.rc == 1, r
    assert "Invalid Firmware Slot" in r.err
    assert unvme.ok("fw-log", dev, "-o", "json").json()["frs1"] != "SLOT1"


def test_fw_commit_activates_an_earlier_image(unvme):
    dev = unvme.stateful_dev()
    img = make_image(unvme, "SLOT3")
    # store in slot 3 without activating, then activate with fw-commit
    r = unvme.batch(dev, f"fw-download -f {img}\nfw-commit -s 3 -a 0\n")
    assert r.rc == 0 and "not activated" in r.out
    assert running(unvme, dev) != "SLOT3"
    r = unvme.ok("fw-commit", dev, "-s", 3, "-a", 2, "--reset")
    assert "running firmware revision SLOT3" in r.out
    assert running(unvme, dev) == "SLOT3"


def test_fw_download_file_errors(unvme):
    r = unvme.run("fw-download", unvme.file_dev(), "-f", unvme.tmp / "missing.bin")
    assert r.rc == 3 and "missing.bin" in r.err
    odd = unvme.tmp / "odd.bin"
    odd.write_bytes(b"12345")
    r = unvme.run("fw-download", unvme.file_dev(), "-f", odd)
    assert r.rc == 2 and "multiple of 4" in r.err
