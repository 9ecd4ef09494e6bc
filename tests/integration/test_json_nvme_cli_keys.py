# SPDX-License-Identifier: BSD-3-Clause
"""JSON documents carry nvme-cli 2.x's keys with nvme-cli's types (`nvme ... -o json`), so its
scripts work on `unvme ... -o json`; our own decodes may come as extra keys. The expected key
lists are nvme-cli's documented JSON output for these commands (id-ctrl, id-ns, smart-log,
error-log, list-ns, list, show-regs). fw-log keeps our shape (docs/tools.md says why)."""
import json
import subprocess

from conftest import TOOL, json_docs

DEV = "emu://keys?ns=mem:1M:512"

ID_CTRL = {
    "vid", "ssvid", "sn", "mn", "fr", "rab", "ieee", "cmic", "mdts", "cntlid", "ver", "rtd3r",
    "rtd3e", "oaes", "ctratt", "rrls", "cntrltype", "fguid", "crdt1", "crdt2", "crdt3", "nvmsr",
    "vwci", "mec", "oacs", "acl", "aerl", "frmw", "lpa", "elpe", "npss", "avscc", "apsta",
    "wctemp", "cctemp", "mtfa", "hmpre", "hmmin", "tnvmcap", "unvmcap", "rpmbs", "edstt", "dsto",
    "fwug", "kas", "hctma", "mntmt", "mxtmt", "sanicap", "hmminds", "hmmaxd", "nsetidmax",
    "endgidmax", "anatt", "anacap", "anagrpmax", "nanagrpid", "pels", "domainid", "megcap",
    "sqes", "cqes", "maxcmd", "nn", "oncs", "fuses", "fna", "vwc", "awun", "awupf", "icsvscc",
    "nwpc", "acwu", "ocfs", "sgls", "mnan", "maxdna", "maxcna", "subnqn", "ioccsz", "iorcsz",
    "icdoff", "fcatt", "msdbd", "ofcs", "psds",
}
ID_CTRL_STRINGS = {"sn", "mn", "fr", "fguid", "subnqn"}
PSD = {"max_power", "max_power_scale", "non-operational_state", "entry_lat", "exit_lat",
       "read_tput", "read_lat", "write_tput", "write_lat", "idle_power", "idle_scale",
       "active_power", "active_power_work", "active_scale"}
ID_NS = {
    "nsze", "ncap", "nuse", "nsfeat", "nlbaf", "flbas", "mc", "dpc", "dps", "nmic", "rescap",
    "fpi", "dlfeat", "nawun", "nawupf", "nacwu", "nabsn", "nabo", "nabspf", "noiob", "nvmcap",
    "nsattr", "nvmsetid", "mssrl", "mcl", "msrc", "anagrpid", "endgid", "eui64", "nguid", "lbafs",
}
LBAF = {"ms", "ds", "rp"}
SMART = {
    "critical_warning", "temperature", "avail_spare", "spare_thresh", "percent_used",
    "endurance_grp_critical_warning_summary", "data_units_read", "data_units_written",
    "host_read_commands", "host_write_commands", "controller_busy_time", "power_cycles",
    "power_on_hours", "unsafe_shutdowns", "media_errors", "num_err_log_entries",
    "warning_temp_time", "critical_comp_time", "thm_temp1_trans_count", "thm_temp2_trans_count",
    "thm_temp1_total_time", "thm_temp2_total_time",
}
ERROR = {"error_count", "sqid", "cmdid", "status_field", "phase_tag", "parm_error_location",
         "lba", "nsid", "vs", "trtype", "cs", "trtype_spec_info"}
LIST = {"NameSpace", "DevicePath", "Firmware", "Index", "ModelNumber", "SerialNumber",
        "UsedBytes", "MaximumLBA", "PhysicalSize", "SectorSize"}


def missing(doc, keys):
    return sorted(keys - set(doc))


def ints(doc, keys):
    return sorted(k for k in keys if not isinstance(doc[k], int) or isinstance(doc[k], bool))


def test_id_ctrl_has_nvme_cli_keys(unvme):
    j = unvme.ok("id-ctrl", DEV, "-o", "json").json()
    assert not missing(j, ID_CTRL)
    assert not ints(j, ID_CTRL - ID_CTRL_STRINGS - {"psds"})
    assert all(isinstance(j[k], str) for k in ID_CTRL_STRINGS)
    assert len(j["psds"]) == j["npss"] + 1
    for psd in j["psds"]:
        assert not missing(psd, PSD) and not ints(psd, PSD)
    # the same facts under both names
    assert j["ocfs"] == j["cdfs"] and j["psds"][0]["max_power"] == j["psd"][0]["mp"]


def test_id_ns_has_nvme_cli_keys(unvme):
    j = unvme.ok("id-ns", DEV, "-o", "json").json()
    assert not missing(j, ID_NS)
    assert not ints(j, ID_NS - {"eui64", "nguid", "lbafs"})
    assert len(j["lbafs"]) == j["nlbaf"] + 1
    for lbaf, ours in zip(j["lbafs"], j["lbaf"]):
        assert not missing(lbaf, LBAF) and lbaf["ds"] == ours["lbads"]
    assert 1 << j["lbafs"][j["flbas"] & 0xf]["ds"] == 512


def test_smart_log_has_nvme_cli_keys(unvme):
    r = unvme.batch(DEV, "write -s 0 -c 7 -p 1\nread -s 0 -c 7 -o json\nsmart-log -o json\n")
    assert r.rc == 0, r
    j = json_docs(r.out[r.out.index("{"):])[-1]
    assert not missing(j, SMART) and not ints(j, SMART)
    assert j["host_write_commands"] == j["host_writes"] >= 1
    assert j["host_read_commands"] == j["host_reads"] >= 1


def test_error_log_entries_have_nvme_cli_keys(unvme):
    r = unvme.batch(DEV, "read -s 99999999\nerror-log -o json\n", keep_going=True)
    j = json_docs(r.out[r.out.index("{"):])[-1]
    assert j["errors"], r
    e = j["errors"][0]
    assert not missing(e, ERROR) and not ints(e, ERROR)
    assert e["cmdid"] == e["cid"] and e["status_field"] == e["status"] >> 1
    assert e["status_field"] & 0x7ff == 0x80  # LBA Out of Range (SCT 0h, SC 80h)


def test_show_regs_registers_are_numbers(unvme):
    j = unvme.ok("show-regs", DEV, "-o", "json").json()
    regs = {"cap", "vs", "cc", "csts", "aqa", "asq", "acq"}
    assert not missing(j, regs) and not ints(j, regs)
    assert (j["vs"] >> 16, (j["vs"] >> 8) & 0xff) == (j["vs_fields"]["mjr"], j["vs_fields"]["mnr"])


def test_list_ns_and_list_have_nvme_cli_shapes(unvme):
    dev = unvme.file_dev(nslist=[("1M", 512), ("2M", 4096)])
    assert unvme.ok("list-ns", dev, "-o", "json").json() == {"nsid_list": [{"nsid": 1}, {"nsid": 2}]}
    unvme.ok("write", dev, "-s", 0, "-c", 1, "-p", 1)  # two blocks used on namespace 1
    env_alias = dict(unvme.env, UNVME_DEVICES=f"two={dev}")
    r = subprocess.run([str(TOOL), "list", "-o", "json"], capture_output=True, text=True,
                       env=env_alias, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [d for d in json.loads(r.stdout)["Devices"] if d["DevicePath"] == "two"]
    assert [d["NameSpace"] for d in rows] == [1, 2]
    for d in rows:
        assert not missing(d, LIST)
    assert rows[1]["SectorSize"] == 4096 and rows[1]["PhysicalSize"] == 2 << 20
    assert rows[1]["MaximumLBA"] == (2 << 20) // 4096
    assert rows[0]["UsedBytes"] >= 1024
