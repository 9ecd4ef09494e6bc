# SPDX-License-Identifier: BSD-3-Clause
"""Format NVM: changes the LBA size and erases; refuses without --force."""
from conftest import hex_data


def lba_format_index(id_ns, lbads):
    for i, f in enumerate(id_ns["lbaf"][: id_ns["nlbaf"] + 1]):
        if f["lbads"] == lbads and f["ms"] == 0:
            return i
    raise AssertionError(f"no LBA format with {1 << lbads}-byte blocks: {id_ns['lbaf']}")


def id_ns(unvme, dev, nsid=1):
    return unvme.ok("id-ns", dev, "-n", nsid, "-o", "json").json()


def test_format_changes_the_lba_size_and_erases(unvme):
    dev = unvme.file_dev(size="8M", lba=512)
    unvme.ok("write", dev, "-s", 0, "-c", 15, "--pattern", "0x77")
    before = id_ns(unvme, dev)
    target = lba_format_index(before, 12)
    r = unvme.ok("format", dev, "-n", 1, "--lbaf", target, "--force")
    assert "4096 bytes" in r.out
    after = id_ns(unvme, dev)
    assert after["lbaf"][after["flbas"] & 0xF]["lbads"] == 12
    assert after["nsze"] == (8 << 20) // 4096
    doc = unvme.ok("read", dev, "-s", 0, "-c", 1, "-o", "json").json()
    assert hex_data(doc) == bytes(8192)
    # and back, as JSON
    j = unvme.ok("format", dev, "-n", 1, "-l", lba_format_index(after, 9), "--force",
                 "-o", "json").json()
    assert j["formatted"][0]["lba_size"] == 512


def test_format_without_force_erases_nothing(unvme):
    dev = unvme.file_dev(size="4M")
    unvme.ok("write", dev, "-s", 3, "--pattern", "0x42")
    r = unvme.run("format", dev, "-n", 1)
    assert r.rc == 2
    assert "would erase" in r.out and "--force" in r.err
    assert hex_data(unvme.ok("read", dev, "-s", 3, "-o", "json").json()) == b"\x42" * 512


def test_format_all_erases_every_namespace(unvme):
    dev = unvme.file_dev(nslist=[("4M", 4096), ("4M", 4096)])
    unvme.ok("write", dev, "-n", 1, "-s", 1, "--pattern", "0x98")
    unvme.ok("write", dev, "-n", 2, "-s", 1, "--pattern", "0x99")
    r = unvme.ok("format", dev, "--all", "--force")
    assert "namespace 1" in r.out and "namespace 2" in r.out
    for nsid in (1, 2):
        assert id_ns(unvme, dev, nsid)["lbaf"][id_ns(unvme, dev, nsid)["flbas"] & 0xF]["lbads"] == 12
        doc = unvme.ok("read", dev, "-n", nsid, "-s", 1, "-o", "json").json()
        assert hex_data(doc) == bytes(4096)


def test_format_errors(unvme):
    dev = unvme.file_dev(size="4M")
    r = unvme.run("format", dev, "--force")
    assert r.rc == 2 and "--namespace-id" in r.err
    r = unvme.run("format", dev, "-n", 1, "-l", 15, "--force")
    assert r.rc == 1 and "Invalid Format" in r.err
    r = unvme.run("format", dev, "-n", 9, "--force")
    assert r.rc == 1 and "Invalid Namespace or Format" in r.err
