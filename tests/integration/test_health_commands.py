# SPDX-License-Identifier: BSD-3-Clause
"""nvme-cli's effects-log, self-test-log, device-self-test, sanitize-log, verify and ns-rescan:
real content where the emulated controller has it (the effects log, Verify, the namespace
list), the device's own status where it has not (no self-test, no sanitize)."""
DEV = "emu://h?ns=mem:1M:512"


def test_effects_log_lists_what_the_controller_supports(unvme):
    j = unvme.ok("effects-log", DEV, "-o", "json").json()
    admin = {e["opcode"]: e["effects"] for e in j["acs"]}
    io = {e["opcode"]: e["effects"] for e in j["iocs"]}
    assert admin[0x06] & 1 and admin[0x02] & 1          # Identify, Get Log Page
    assert io[0x01] & 1 and io[0x02] & 1 and io[0x0c] & 1  # Write, Read, Verify
    assert 0x14 not in admin or not admin[0x14] & 1      # no Device Self-test
    raw = unvme.run("effects-log", DEV, "-b", binary=True)
    assert raw.rc == 0 and len(raw.out) == 4096
    assert int.from_bytes(raw.out[0x0c * 4 + 1024:0x0c * 4 + 1028], "little") & 1  # IOCS[0Ch]
    assert "Commands Supported and Effects Log" in unvme.ok("effects-log", DEV).out


def test_verify_checks_blocks_on_the_device(unvme):
    r = unvme.batch(DEV, "write -s 10 -c 3 -p 0x22\nverify -s 10 -c 3\nverify -s 0 -c 2047 -o json\n")
    assert r.rc == 0, r
    assert "verify: success (namespace 1, 4 blocks at LBA 10)" in r.out
    assert '"blocks":2048' in r.out.replace(" ", "")
    r = unvme.run("verify", DEV, "-s", 2047, "-c", 1)
    assert r.rc == 1 and "LBA Out of Range" in r.err


def test_self_test_and_sanitize_answered_by_the_device(unvme):
    r = unvme.run("device-self-test", DEV, "-s", 1)
    assert r.rc == 1 and "Invalid Command Opcode" in r.err
    r = unvme.run("device-self-test", DEV, "-s", 3)
    assert r.rc == 2 and "--self-test-code" in r.err
    assert unvme.run("device-self-test", DEV).rc == 2  # the code is required
    for cmd in ("self-test-log", "sanitize-log"):
        r = unvme.run(cmd, DEV)
        assert r.rc == 1 and "Invalid Log Page" in r.err, r


def test_ns_rescan_shows_the_active_namespaces(unvme):
    dev = unvme.file_dev(nslist=[("1M", 512), ("1M", 512)])
    assert unvme.ok("ns-rescan", dev, "-o", "json").json() == unvme.ok("list-ns", dev, "-o", "json").json()
    assert "[   1]:0x2" in unvme.ok("ns-rescan", dev).out
