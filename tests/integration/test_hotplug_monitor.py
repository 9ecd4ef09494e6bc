# SPDX-License-Identifier: BSD-3-Clause
"""Hot-plug of emulated devices and `unvme monitor`, driven as a user would: in a batch
(one process, where the emulated card lives), a monitor in the background prints an
Asynchronous Event (a temperature threshold set below the device's temperature) with what the
SMART log says, and the card's removal and the arrival of a replacement; I/O fails while the
card is out and works on the replacement; data on a file namespace survives the same card
being pulled and put back; bad requests are refused with a message and a documented code."""
import json
import signal
import subprocess
import time

from conftest import TOOL


def events(out):
    """The monitor's JSON lines among a batch's output."""
    found = []
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "event" in doc:
            found.append(doc)
    return found


def test_monitor_prints_a_smart_event(unvme):
    r = unvme.batch("emu://mon1", "\n".join([
        "monitor --background -o json",
        "set-feature -f 0x0b -v 2",      # Asynchronous Event Configuration: temperature
        "set-feature -f 0x04 -v 300",    # over-temperature threshold 300 K < 313 K
    ]) + "\n")
    assert r.rc == 0, r
    ev = events(r.out)
    assert len(ev) == 1, r
    e = ev[0]
    assert e["event"] == "aer" and e["device"] == "emu://mon1"
    assert e["aer_type"] == "smart" and e["aer_info"] == 1
    assert e["aer_info_name"] == "temperature threshold"
    assert e["log_page"] == 2
    assert e["critical_warning"] & 0x02          # temperature warning bit
    assert e["temperature_k"] == 313
    assert e["serial"].startswith("EMU")


def test_monitor_text_and_rearm(unvme):
    """The log page the monitor reads re-arms the event type: a second crossing (the
    threshold moved back above and below) is reported again."""
    r = unvme.batch("emu://mon2", "\n".join([
        "monitor --background",
        "set-feature -f 0x0b -v 2",
        "set-feature -f 0x04 -v 300",
        "monitor --background",          # refused: one monitor per batch
    ]) + "\n", keep_going=True)
    assert r.rc == 2, r
    assert "already runs" in r.err
    lines = [l for l in r.out.splitlines() if " aer " in l]
    assert len(lines) == 1, r
    assert "emu://mon2 aer smart: temperature threshold (information 01h, log page 02h)" in lines[0]
    assert "temperature 313 K" in lines[0]


def test_unplug_and_replacement_under_monitor(unvme):
    dev = "emu://mon3?ns=mem:16M:512"
    r = unvme.batch(dev, "\n".join([
        "monitor --background -o json",
        "write -s 0 -c 7 --pattern 0x5a",
        "unplug",
        "read -s 0 -c 7",                # fails: the card is out
        "id-ctrl",                       # fails too
        "plug --card 'emu://spare?ns=mem:32M:4096&serial=SPARE0042'",
        "write -s 0 -c 0 --pattern 0x11",
        "read -s 0 -c 0 -o json",
    ]) + "\n", keep_going=True)
    assert r.rc == 3, r                  # the first failure: the read while removed
    assert "was removed" in r.err
    ev = events(r.out)
    kinds = [e["event"] for e in ev]
    assert kinds == ["removed", "arrived"], r
    assert ev[0]["serial"].startswith("EMU")
    assert ev[1]["serial"] == "SPARE0042" and ev[1]["status"] == 0
    assert "card plugged in and attached (serial SPARE0042)" in r.out
    # the last read succeeded on the replacement, whose blocks are 4 KiB
    assert '"length":4096' in r.out.replace(" ", ""), r
    assert r.out.count("write: success") == 2, r


def test_same_card_keeps_file_data(unvme):
    dev = unvme.file_dev(name="hp", size="4M")
    r = unvme.batch(dev, "\n".join([
        "write -s 4 -c 1 --pattern 0x3c",
        "unplug",
        "plug",
        "compare -s 4 -c 1 --pattern 0x3c",
    ]) + "\n")
    assert r.rc == 0, r


def test_bad_requests(unvme, tmp_path):
    r = unvme.run("unplug", "/dev/null")
    assert r.rc in (2, 3), r            # not an emulated device (or cannot be opened)
    r = unvme.batch("emu://hpbad", "unplug\nunplug\n", keep_going=True)
    assert r.rc == 3 and "empty already" in r.err, r
    r = unvme.batch("emu://hpbad2", "plug\n")
    assert r.rc == 3 and "holds a card" in r.err, r
    r = unvme.batch("emu://hpbad3", "unplug\nplug --card 'emu://x?ns=mem:3G:513'\n")
    assert r.rc == 2 and "513" in r.err, r
    r = unvme.batch("emu://hpbad4", "unplug\nplug --card /tmp/nothing\n")
    assert r.rc == 2 and "not an emu:// URI" in r.err, r
    r = unvme.run("monitor", "emu://x?ns=bogus:1G")
    assert r.rc == 3, r


def test_monitor_foreground_seconds_and_signal(unvme):
    r = unvme.run("monitor", "emu://quiet", "-d", "emu://quiet2", "--seconds", "1", "-o", "json")
    assert r.rc == 0 and r.out == "", r
    p = subprocess.Popen([str(TOOL), "monitor", "emu://sig"], env=unvme.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, (out, err)


def test_perf_survives_unplug_and_plug(unvme):
    """unvme perf --unplug-at/--plug-after: the emulated device is pulled out under load and
    put back; the run goes on, the commands in flight are counted as failed, and the report
    says how long after the re-insertion the first I/O completed."""
    # -v: the library's notices (removal, return) on stderr
    r = unvme.run("perf", "emu://pf?ns=mem:64M:512&rlat=20us&wlat=10us", "-w", "randrw", "-q", "8",
                  "-t", "2", "--unplug-at", "400", "--plug-after", "300", "-o", "json", "-v")
    assert r.rc == 0, r
    h = r.json()["hotplug"]
    assert h["done"] is True
    assert h["attach_us"] > 0
    assert h["first_io_after_plug_us"] > 0, r
    total = r.json()["total"]
    assert total["ios"] > 0 and total["errors"] == h["failed_ios"]
    assert "was removed" in r.err and "is back" in r.err
    r = unvme.run("perf", "emu://pf2", "-t", "1", "--unplug-at", "200", "--plug-after", "100")
    assert r.rc == 0, r
    assert "hot-plug: pulled out at" in r.out and "after the re-insertion" in r.out, r


def test_perf_hotplug_bad_requests(unvme, tmp_path):
    r = unvme.run("perf", "emu://pf3", "-t", "1", "--unplug-at", "200")
    assert r.rc == 2 and "go together" in r.err, r
    r = unvme.run("perf", "emu://pf3", "-t", "1", "--unplug-at", "900", "--plug-after", "200")
    assert r.rc == 2 and "inside the run" in r.err, r
    img = tmp_path / "f.img"
    img.write_bytes(b"\0" * (4 << 20))
    r = unvme.run("perf", f"file://{img}", "-t", "1", "--unplug-at", "100", "--plug-after", "100")
    assert r.rc == 2 and "not an emulated device" in r.err, r


def test_monitor_prints_a_namespace_attribute_change(unvme):
    """A Format NVM to another LBA format changes the namespace's attributes: with
    Asynchronous Event Configuration bit 8 on, the device sends a Namespace Attribute Changed
    notice and the Changed Namespace List names the namespace; a format that changes nothing
    sends none, and with bit 8 off there is none either (the list still records the change,
    as it does whether notices are on or not)."""
    dev = "emu://nsattr?ns=mem:16M:512&ns=mem:16M:512"
    r = unvme.batch(dev, "\n".join([
        "monitor --background -o json",
        "format -n 1 -l 1 --force",        # notices off: no event
        "set-feature -f 0x0b -v 0x100",    # Namespace Attribute Notices
        "format -n 1 -l 1 --force",        # the same format again: nothing changed
        "format -n 2 -l 1 --force",        # namespace 2: 512 -> 4096-byte blocks
    ]) + "\n")
    assert r.rc == 0, r
    ev = events(r.out)
    assert len(ev) == 1, r
    e = ev[0]
    assert e["aer_type"] == "notice" and e["aer_info"] == 0
    assert e["aer_info_name"] == "namespace attribute changed"
    assert e["log_page"] == 4 and e["changed_namespaces"] == [1, 2]


def test_changed_namespace_list_empties_when_read(unvme):
    dev = "emu://nsattr2?ns=mem:16M:512"
    r = unvme.batch(dev, "\n".join([
        "set-feature -f 0x0b -v 0x100",
        "format -n 1 -l 1 --force",
        "get-log -i 4 -l 8 --rae -o json",  # retained
        "get-log -i 4 -l 8 -o json",        # read: emptied after
        "get-log -i 4 -l 8 -o json",
    ]) + "\n")
    assert r.rc == 0, r
    import re
    data = re.findall(r'"data":\s*"([0-9a-f]*)"', r.out)
    assert data == ["0100000000000000", "0100000000000000", "0000000000000000"], r
