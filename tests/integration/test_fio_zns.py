# SPDX-License-Identifier: BSD-3-Clause
"""fio's zoned mode (zonemode=zbd) through the uNVMe engine on emulated zoned namespaces: fio
asks the engine for the zone model, the zones and the open limit, resets write pointers, and
its verify jobs check every block, in the same process and in a second one."""
import pytest

from test_fio_engine import ENGINE, Fio, esc, fio  # noqa: F401  (fixture)


def zns_uri(tmp, name="zns", zone="1M", cap="768K", size="32M", open_zones=8):
    return (f"emu://{name}?ns=zns,zone={zone},cap={cap},open={open_zones},active={open_zones}:"
            f"{size}:4096:{tmp / (name + '.img')}")


ZBD = ["--thread=1", "--zonemode=zbd", "--direct=1"]


@pytest.mark.parametrize("rw,bs,qd", [("write", "16k", 8), ("randwrite", "4k", 4)])
def test_zone_verify(fio, tmp_path, rw, bs, qd):
    dev = zns_uri(tmp_path)
    p = fio.ok("--name=zv", f"--filename={esc(dev)}", *ZBD, f"--rw={rw}", f"--bs={bs}",
               f"--iodepth={qd}", "--size=32M", "--io_size=12M", "--verify=crc32c",
               "--max_open_zones=4", "--randrepeat=1")
    assert "zone resets" in p.stdout


def test_write_then_verify_in_another_process(fio, tmp_path):
    dev = zns_uri(tmp_path, "keep")
    args = [f"--filename={esc(dev)}", *ZBD, "--bs=8k", "--iodepth=16", "--size=16M",
            "--verify=md5"]
    fio.ok("--name=w", *args, "--rw=write", "--do_verify=0")
    # fio resets the zones of a write job with verify (even verify_only): a read job checks
    # what the first process left on the file-backed zones
    fio.ok("--name=v", *args, "--rw=read")
    # and a corrupted block is caught: the zones are rewritten with other data, then read
    fio.ok("--name=w2", *args, "--rw=write", "--do_verify=0", "--verify=crc32c")
    fio.fails("--name=v2", *args, "--rw=read", expect="verify")


def test_two_jobs_on_their_own_zones(fio, tmp_path):
    dev = zns_uri(tmp_path, "two", size="16M")
    fio.ok("--name=j", f"--filename={esc(dev)}", *ZBD, "--rw=write", "--bs=4k", "--iodepth=4",
           "--numjobs=2", "--size=8M", "--offset_increment=8M", "--verify=crc32c")


def test_zone_capacity_equal_to_size_and_reset(fio, tmp_path):
    """Writing the same zones twice: fio resets full zones (reset_wp) before rewriting them."""
    dev = zns_uri(tmp_path, "again", zone="512K", cap="512K", size="8M")
    args = [f"--filename={esc(dev)}", *ZBD, "--rw=write", "--bs=64k", "--iodepth=2",
            "--size=8M", "--verify=crc32c"]
    fio.ok("--name=first", *args)
    p = fio.ok("--name=second", *args)
    assert "zone resets" in p.stdout


def test_block_namespace_is_not_zoned(fio, tmp_path):
    """zonemode=zbd on a conventional namespace: fio is told there are no zones."""
    dev = f"emu://plain?ns=file:8M:4096:{tmp_path / 'plain.img'}"
    out = fio.run("--name=nz", f"--filename={esc(dev)}", *ZBD, "--rw=write", "--bs=4k",
                  "--size=4M")
    assert out.returncode != 0 or " err= 0" in out.stdout
