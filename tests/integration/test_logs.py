# SPDX-License-Identifier: BSD-3-Clause
"""Log pages: SMART counters move with I/O and survive the process for file-backed devices;
the error log records failed commands; get-log returns raw pages."""
from conftest import hex_data, json_docs


def smart(unvme, dev):
    return unvme.ok("smart-log", dev, "-o", "json").json()


def test_smart_counters_increase_and_persist(unvme):
    dev = "emu0"  # the built-in file-backed device, under this test's UNVME_STATE_DIR
    before = smart(unvme, dev)
    unvme.ok("write", dev, "-s", 0, "-c", 1999, "--pattern", "0x11")  # 1000 KiB: 2 data units
    mid = smart(unvme, dev)
    assert mid["host_writes"] > before["host_writes"]
    assert mid["data_units_written"] >= before["data_units_written"] + 2
    assert mid["host_reads"] == before["host_reads"]
    unvme.ok("read", dev, "-s", 0, "-c", 1999, "-d", unvme.tmp / "o.bin")
    after = smart(unvme, dev)
    assert after["host_reads"] > mid["host_reads"]
    assert after["data_units_read"] >= mid["data_units_read"] + 2
    assert after["host_writes"] == mid["host_writes"]
    # the device outlives the commands (its device process); stopped, it shuts down normally,
    # which is not counted as unsafe, and the next open is a power cycle
    unvme.ok("serve", dev, "--stop", "-q")
    again = smart(unvme, dev)
    assert again["unsafe_shutdowns"] == before["unsafe_shutdowns"]
    assert again["power_cycles"] > before["power_cycles"]
    assert again["host_writes"] == after["host_writes"]
    text = unvme.ok("smart-log", dev).out
    assert "data_units_written" in text and "host_writes" in text


def test_smart_counters_persist_for_a_file_backed_uri(unvme):
    dev = unvme.file_dev(size="4M")
    unvme.ok("write", dev, "-s", 0, "-c", 3, "--pattern", "1")
    first = smart(unvme, dev)["host_writes"]
    unvme.ok("write", dev, "-s", 0, "-c", 3, "--pattern", "1")
    assert smart(unvme, dev)["host_writes"] > first


def test_error_log_records_a_failed_command(unvme):
    dev = "emu://e?ns=mem:1M:512"
    r = unvme.batch(dev, "error-log -o json\nio-passthru --opcode 0x7f\nerror-log -o json\n"
                         "smart-log -o json\n", keep_going=True)
    assert r.rc == 1
    assert "Invalid Command Opcode" in r.err
    before, after, sm = json_docs(r.out)
    assert len(after["errors"]) == len(before["errors"]) + 1
    newest = max(after["errors"], key=lambda e: e["error_count"])
    assert newest["status_name"] == "Invalid Command Opcode"
    assert newest["nsid"] == 1
    assert sm["num_err_log_entries"] >= 1
    text = unvme.batch(dev, "io-passthru --opcode 0x7f\nerror-log\n", keep_going=True).out
    assert "Invalid Command Opcode" in text
    r = unvme.batch(dev, "io-passthru --opcode 0x7f\nerror-log -e 1 -o json\n", keep_going=True)
    assert len(json_docs(r.out)[0]["errors"]) == 1


def test_fw_log(unvme):
    j = unvme.ok("fw-log", unvme.file_dev(), "-o", "json").json()
    assert j["afi"] & 7 == 1
    assert j["frs1"]
    assert "afi" in unvme.ok("fw-log", unvme.file_dev()).out


def test_get_log_raw_matches_the_smart_log(unvme):
    dev = unvme.file_dev(size="4M")
    unvme.ok("write", dev, "-s", 0, "-c", 2, "--pattern", "1")
    raw = hex_data(unvme.ok("get-log", dev, "-i", 2, "-l", 512, "-o", "json").json())
    host_writes = int.from_bytes(raw[80:96], "little")
    assert host_writes == smart(unvme, dev)["host_writes"]
    # an offset into the page
    part = hex_data(unvme.ok("get-log", dev, "-i", 2, "-l", 16, "--offset", 80, "-o", "json").json())
    assert part == raw[80:96]
    r = unvme.run("get-log", dev, "-i", 2, "-l", 512, "-b", binary=True)
    assert r.rc == 0 and len(r.out) == 512
    assert "0000" in unvme.ok("get-log", dev, "-i", 2, "-l", 64).out
    r = unvme.run("get-log", dev, "-i", 0x7e, "-l", 512)
    assert r.rc == 1 and "Invalid Log Page" in r.err
