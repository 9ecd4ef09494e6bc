# SPDX-License-Identifier: BSD-3-Clause
"""list, devices and the Identify commands, as text and JSON."""
from conftest import json_docs


def with_aliases(unvme, aliases):
    unvme.env["UNVME_DEVICES"] = ";".join(f"{k}={v}" for k, v in aliases.items())


def test_list_shows_emu0_and_aliases_with_namespaces(unvme):
    dev = unvme.file_dev("two", nslist=[("8M", 512), ("16M", 4096)])
    with_aliases(unvme, {"mydev": dev})
    r = unvme.ok("list")
    assert "emu0" in r.out and "mydev" in r.out
    assert "4096 B" in r.out and "512 B" in r.out

    devs = {d["name"]: d for d in unvme.ok("list", "-o", "json").json()["devices"]}
    assert set(devs) >= {"emu0", "mydev"}
    mine = devs["mydev"]
    assert mine["address"] == dev
    assert mine["serial"] and mine["model"] and mine["firmware"]
    ns = {n["nsid"]: n for n in mine["namespaces"]}
    assert ns[1]["lba_size"] == 512 and ns[1]["size_bytes"] == 8 << 20
    assert ns[2]["lba_size"] == 4096 and ns[2]["size_bytes"] == 16 << 20
    assert ns[2]["nlbas"] == (16 << 20) // 4096


def test_list_keeps_going_past_a_broken_device(unvme):
    with_aliases(unvme, {"broken": "emu://x?ns=mem:1M:513", "fine": "emu://y?ns=mem:1M:512"})
    r = unvme.ok("list")
    line = next(l for l in r.out.splitlines() if l.startswith("broken"))
    assert "not available" in line and "513" in line
    assert any(l.startswith("fine") for l in r.out.splitlines())
    devs = {d["name"]: d for d in unvme.ok("list", "-o", "json").json()["devices"]}
    assert "513" in devs["broken"]["error"]
    assert devs["fine"]["namespaces"][0]["lba_size"] == 512


def test_devices_shows_what_aliases_resolve_to(unvme, tmp_path):
    cfg = tmp_path / "devices.json"
    cfg.write_text('{"devices": {"fromfile": "emu://f?ns=mem:1M:512", "chain": "fromfile"}}')
    unvme.env["UNVME_CONFIG"] = str(cfg)
    with_aliases(unvme, {"fromenv": "emu://e?ns=mem:2M:512"})
    r = unvme.ok("devices")
    assert "fromenv" in r.out and "fromfile" in r.out and "emu0" in r.out
    assert "emu://f?ns=mem:1M:512" in r.out
    j = {d["name"]: d for d in unvme.ok("devices", "-o", "json").json()["devices"]}
    assert j["chain"]["resolved"] == "emu://f?ns=mem:1M:512"
    assert j["fromenv"]["resolved"] == "emu://e?ns=mem:2M:512"
    assert j["emu0"]["resolved"].startswith("emu://")
    # aliases work as device arguments
    assert unvme.ok("id-ctrl", "chain", "-o", "json").json()["nn"] >= 1


def test_id_ctrl_text_and_json(unvme):
    dev = unvme.file_dev(extra="serial=SN12345")
    r = unvme.ok("id-ctrl", dev)
    assert "NVMe Identify Controller" in r.out
    for f in ("vid", "sn", "mn", "fr", "mdts", "oacs", "nn"):
        assert f in r.out
    j = unvme.ok("id-ctrl", dev, "-o", "json").json()
    assert j["sn"] == "SN12345"
    assert j["nn"] >= 1
    assert j["mn"]


def test_default_device_is_emu0(unvme):
    j = unvme.ok("id-ctrl", "-o", "json").json()
    assert j["mn"]
    assert (unvme.tmp / "state").exists()


def test_id_ns_sizes_and_lba_formats(unvme):
    dev = unvme.file_dev(nslist=[("8M", 512), ("16M", 4096)])
    j1 = unvme.ok("id-ns", dev, "-n", "1", "-o", "json").json()
    j2 = unvme.ok("id-ns", dev, "-n", "2", "-o", "json").json()
    assert j1["nsze"] == (8 << 20) // 512
    assert j2["nsze"] == (16 << 20) // 4096
    assert j1["lbaf"][j1["flbas"] & 0xF]["lbads"] == 9
    assert j2["lbaf"][j2["flbas"] & 0xF]["lbads"] == 12
    r = unvme.ok("id-ns", dev, "-n", "2")
    assert "nsze" in r.out and "lbaf" in r.out
    # the I/O command set specific form
    unvme.ok("id-ns", dev, "-n", "1", "--csi", "0")
    unvme.ok("id-ns", dev, "-n", "1", "--csi", "0", "-o", "json").json()


def test_list_ns_and_ns_descs(unvme):
    dev = unvme.file_dev(nslist=[("4M", 512), ("4M", 512), ("4M", 4096)])
    j = unvme.ok("list-ns", dev, "-o", "json").json()
    assert j["nsid_list"] == [{"nsid": 1}, {"nsid": 2}, {"nsid": 3}]
    r = unvme.ok("list-ns", dev)
    assert "0x3" in r.out or "3" in r.out
    d = unvme.ok("ns-descs", dev, "-n", "2", "-o", "json").json()
    assert len(d["descriptors"]) >= 1
    d1 = unvme.ok("ns-descs", dev, "-n", "1", "-o", "json").json()
    assert d1 != d, "namespaces need distinct identifiers"


def test_show_regs(unvme):
    dev = unvme.file_dev(extra="mqes=128")
    r = unvme.ok("show-regs", dev)
    assert "mqes" in r.out and "csts" in r.out
    j = unvme.ok("show-regs", dev, "-o", "json").json()
    # nvme-cli's shape: each register a number; our decodes under <register>_fields
    assert j["cap"] & 0xffff == 127 and j["cap_fields"]["mqes"] == 127
    # the controller is enabled and ready while the tool holds it
    assert j["cc"] & 1 == 1 and j["cc_fields"]["en"] == 1 and j["csts_fields"]["rdy"] == 1
    assert j["cc_fields"]["iosqes"] == 6 and j["cc_fields"]["iocqes"] == 4
    assert all(isinstance(j[k], int) for k in ("cap", "vs", "cc", "csts", "aqa", "asq", "acq"))


def test_features(unvme):
    dev = unvme.file_dev()
    r = unvme.ok("get-feature", dev, "-f", "7")
    assert "Number of Queues" in r.out
    j = unvme.ok("get-feature", dev, "-f", "6", "-o", "json").json()
    assert j["feature"] == "Volatile Write Cache"
    r = unvme.batch(dev, "set-feature -f 6 -v 0\nget-feature -f 6 -o json\n"
                         "set-feature -f 6 -v 1\nget-feature -f 6 -o json\n")
    assert r.rc == 0, r
    docs = json_docs("\n".join(l for l in r.out.splitlines() if not l.startswith("set-feature")))
    assert [d["value"] & 1 for d in docs] == [0, 1]
    # a feature that does not exist is the device's call
    r = unvme.run("get-feature", dev, "-f", "0x7f")
    assert r.rc == 1 and "Invalid Field" in r.err
