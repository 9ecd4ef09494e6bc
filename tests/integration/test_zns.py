# SPDX-License-Identifier: BSD-3-Clause
"""Zoned namespaces through the tool, as a user of nvme-cli's zns plugin would drive them:
identify, report zones with options, zone management, zone append returning the LBA, the zone
statuses by name, the changed zone list, and zones that outlive the process (file-backed)."""
from conftest import hex_data, json_docs

ZONE_BLOCKS = 256  # 1 MiB zones of 4 KiB blocks
CAP_BLOCKS = 192   # 768 KiB capacity


def zdev(unvme, name="z", extra=""):
    path = unvme.tmp / f"{name}.img"
    uri = f"emu://{name}?ns=zns,zone=1M,cap=768K,open=3,active=4:16M:4096:{path}"
    return uri + (f"&{extra}" if extra else "")


def zones(unvme, dev, *args):
    return unvme.ok("zns", "report-zones", dev, "-o", "json", *args).json()


def test_identify(unvme):
    dev = zdev(unvme, extra="zasl=64K")
    doc = unvme.ok("zns", "id-ctrl", dev, "-o", "json").json()
    assert doc["zasl"] == 4
    doc = unvme.ok("zns", "id-ns", dev, "-o", "json").json()
    assert doc["mor"] == 2 and doc["mar"] == 3
    assert doc["lbafe"][1]["zsze"] == ZONE_BLOCKS
    assert doc["lbafe"][0]["zsze"] == ZONE_BLOCKS * 8
    text = unvme.ok("zns-id-ns", dev).out
    assert "(in use)" in text and "zsze:0x100" in text
    # the namespace lists by command set
    doc = unvme.ok("list-ns", dev, "--csi", 2, "-o", "json").json()
    assert doc["nsid_list"] == [{"nsid": 1}]
    # a namespace that is not zoned is refused with a message
    r = unvme.run("zns", "report-zones", "emu://p?ns=mem:1M")
    assert r.rc == 2 and "not zoned" in r.err, r


def test_append_write_and_report(unvme):
    dev = zdev(unvme)
    r = unvme.ok("zns", "zone-append", dev, "-s", ZONE_BLOCKS, "--pattern", "0x41", "-c", 1)
    assert "appended data to LBA 0x100" in r.out
    doc = unvme.ok("zns", "zone-append", dev, "-s", ZONE_BLOCKS, "--pattern", "0x42",
                   "-o", "json").json()
    assert doc["lba"] == ZONE_BLOCKS + 2
    # plain writes must land on the write pointer
    r = unvme.run("write", dev, "-s", ZONE_BLOCKS + 5, "--pattern", "0x43")
    assert r.rc == 1 and "Zone Invalid Write" in r.err, r
    unvme.ok("write", dev, "-s", ZONE_BLOCKS + 3, "--pattern", "0x43")
    doc = unvme.ok("read", dev, "-s", ZONE_BLOCKS, "-c", 3, "-o", "json").json()
    data = hex_data(doc)
    assert data == b"A" * 8192 + b"B" * 4096 + b"C" * 4096
    # reads may not cross zones
    r = unvme.run("read", dev, "-s", ZONE_BLOCKS - 1, "-c", 1)
    assert r.rc == 1 and "Zone Boundary Error" in r.err, r

    # the device outlives the tool runs (its device process); stopping it is a power cycle:
    # the opened zone comes back closed
    unvme.ok("serve", dev, "--stop", "-q")
    doc = zones(unvme, dev)
    assert doc["nr_zones"] == 16
    z1 = doc["zone_list"][1]
    assert z1 == {"slba": ZONE_BLOCKS, "wp": ZONE_BLOCKS + 4, "cap": CAP_BLOCKS,
                  "state": "CLOSED", "type": 2, "attrs": 0, "attrs_info": 0}
    # reporting options and partial reports
    doc = zones(unvme, dev, "-S", "empty", "-d", 2)
    assert doc["nr_zones"] == 15 and len(doc["zone_list"]) == 2
    doc = zones(unvme, dev, "-S", "empty", "-d", 2, "--partial")
    assert doc["nr_zones"] == 2
    doc = zones(unvme, dev, "-S", "closed")
    assert [z["slba"] for z in doc["zone_list"]] == [ZONE_BLOCKS]
    r = unvme.batch(dev, f"zns zone-append -s {2 * ZONE_BLOCKS} --pattern 1 -o json\n"
                         "zns report-zones -S implicitly-open -o json\n")
    assert r.rc == 0, r
    doc = json_docs(r.out)[-1]
    assert [z["slba"] for z in doc["zone_list"]] == [2 * ZONE_BLOCKS]
    doc = zones(unvme, dev, "-s", 3 * ZONE_BLOCKS + 7, "-d", 1)
    assert doc["zone_list"][0]["slba"] == 3 * ZONE_BLOCKS
    r = unvme.run("zns", "report-zones", dev, "-S", "sideways")
    assert r.rc == 2 and "--state" in r.err, r
    r = unvme.run("zns", "report-zones", dev, "-s", 16 * ZONE_BLOCKS)
    assert r.rc == 1 and "LBA Out of Range" in r.err, r


def test_zone_management(unvme):
    dev = zdev(unvme)
    script = "\n".join([
        f"zns open-zone -s {ZONE_BLOCKS} -o json",
        f"zns open-zone -s {2 * ZONE_BLOCKS} -o json",
        f"zns open-zone -s {3 * ZONE_BLOCKS} -o json",
        # a fourth open zone: the open limit is 3, none can be closed for it
        f"zns open-zone -s {4 * ZONE_BLOCKS} -o json",
        f"zns close-zone -s {ZONE_BLOCKS} -o json",
        f"zns finish-zone -s {2 * ZONE_BLOCKS} -o json",
        "zns report-zones -o json -d 5",
        f"zns open-zone -s {2 * ZONE_BLOCKS} -o json",
        "zns reset-zone -a -o json",
        "zns report-zones -o json -S empty --partial -d 16",
        "zns offline-zone -s 0 -o json",
    ]) + "\n"
    r = unvme.batch(dev, script, keep_going=True)
    assert "Too Many Open Zones" in r.err, r
    assert "Invalid Zone State Transition" in r.err, r
    docs = json_docs(r.out)
    report = [d for d in docs if "zone_list" in d]
    states = [z["state"] for z in report[0]["zone_list"]]
    # zone 1 was explicitly opened with nothing written: closing takes it back to empty
    assert states == ["EMPTY", "EMPTY", "FULL", "EXP_OPENED", "EMPTY"], states
    assert report[1]["nr_zones"] == 16
    r = unvme.run("zns", "close-zone", dev, "-s", 5)
    assert r.rc == 1 and "Invalid Field" in r.err, r
    r = unvme.run("zns", "reset-zone", dev, "-s", 0, "-a")
    assert r.rc == 2


def test_zones_survive_restart(unvme):
    dev = zdev(unvme, "keep")
    unvme.ok("zns", "zone-append", dev, "-s", 0, "--pattern", "0x5a", "-c", 2)
    unvme.ok("zns", "finish-zone", dev, "-s", ZONE_BLOCKS)
    unvme.ok("zns", "open-zone", dev, "-s", 2 * ZONE_BLOCKS)
    # a power cycle (the device process stopped, the next open starts one): opened zones come
    # back closed (or empty)
    unvme.ok("serve", dev, "--stop", "-q")
    doc = zones(unvme, dev, "-d", 3)["zone_list"]
    assert [z["state"] for z in doc] == ["CLOSED", "FULL", "EMPTY"]
    assert doc[0]["wp"] == 3
    assert hex_data(unvme.ok("read", dev, "-s", 0, "-c", 2, "-o", "json").json()) == b"\x5a" * 12288
    # a different zone geometry on the same file is refused, naming the problem
    unvme.ok("serve", dev, "--stop", "-q")
    path = unvme.tmp / "keep.img"
    r = unvme.run("zns", "report-zones", f"emu://keep?ns=zns,zone=2M:16M:4096:{path}")
    assert r.rc == 3 and "zone" in r.err, r


def test_changed_zone_list(unvme):
    dev = zdev(unvme, "chg")
    script = "\n".join([
        "zns zone-append -s 256 --pattern 1 -o json",
        "inject-fault --zone-read-only 300 -o json",
        "zns changed-zone-list -o json --rae",
        "zns changed-zone-list -o json",
        "zns changed-zone-list -o json",
        "zns zone-append -s 256 --pattern 1 -o json",
        "zns offline-zone -s 256 -o json",
        "zns report-zones -o json -S offline",
    ]) + "\n"
    r = unvme.batch(dev, script, keep_going=True)
    assert "Zone Is Read Only" in r.err, r
    docs = json_docs(r.out)
    lists = [d for d in docs if "zid_list" in d]
    assert lists[0]["zid_list"] == [256]
    assert lists[1]["zid_list"] == [256]
    assert lists[2]["zid_list"] == []
    offline = [d for d in docs if "zone_list" in d][0]
    assert offline["nr_zones"] == 1 and offline["zone_list"][0]["slba"] == 256


def test_perf_zone_workloads(unvme):
    dev = "emu://pz?ns=zns,zone=256K,cap=192K,open=8,active=8:16M:4096"
    doc = unvme.ok("perf", dev, "-w", "zone-write", "-q", 4, "-t", 1, "-o", "json").json()
    assert doc["total"]["ios"] > 0 and doc["total"]["errors"] == 0, doc
    doc = unvme.ok("perf", dev, "-w", "zone-append", "-q", 16, "-t", 1, "-c", "0,1",
                   "-o", "json").json()
    assert doc["total"]["ios"] > 0 and doc["total"]["errors"] == 0, doc
    # more zones open at once than the namespace allows, a namespace without zones
    r = unvme.run("perf", dev, "-w", "zone-write", "-q", 9, "-t", 1)
    assert r.rc == 2 and "allows 8" in r.err, r
    r = unvme.run("perf", "emu://pm?ns=mem:16M", "-w", "zone-append", "-t", 1)
    assert r.rc == 2 and "not zoned" in r.err, r
    r = unvme.run("perf", dev, "-w", "zone-append", "-t", 1, "--verify")
    assert r.rc == 2, r
