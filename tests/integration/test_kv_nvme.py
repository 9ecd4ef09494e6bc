# SPDX-License-Identifier: BSD-3-Clause
"""kv_nvme, the original SDK's tool, run with the command lines of its guide and help (app/
nvme_cli's usage text, script/test.sh) on an emulated KV SSD aliased to their 0000:02:00.0:
its commands, option letters, defaults and messages. The namespace is a file, so what one
command stores the next one finds; the iterator flow (open-it, read-it, close-it as separate
commands) runs while another process holds the device, as it did with the original."""
import json
import os
import re
import shutil
import struct
import subprocess
import zlib

import pytest

from conftest import REPO, TOOL, build_dir

KV_NVME = build_dir() / "tools" / "kv_nvme" / "kv_nvme"
DEV = "0000:02:00.0"


class KvNvme:
    def __init__(self, env, tmp_path):
        self.tmp = tmp_path
        self.env = {k: v for k, v in env.items() if k != "UNVME_QUIET"}
        self.env["UNVME_DEVICES"] = f"{DEV}=emu://guide?ns=kv:256M::{tmp_path / 'kv.img'}"

    def run(self, *args):
        assert KV_NVME.exists(), f"{KV_NVME} is not built"
        p = subprocess.run([str(KV_NVME), *map(str, args)], env=self.env, cwd=self.tmp,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode in (0, 1, 2, 3), f"undocumented exit code {p.returncode}: {p.stderr}"
        return p

    def ok(self, *args):
        p = self.run(*args)
        assert p.returncode == 0, f"{args}: rc={p.returncode}\n{p.stdout}\n{p.stderr}"
        return p

    def holder(self):
        """A process that keeps the device open (its first command opens it)."""
        p = subprocess.Popen([str(TOOL), "batch", DEV], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
                             text=True)
        p.stdin.write("id-ctrl -o json\n")
        p.stdin.flush()
        # the device is open once the answer came
        for line in p.stdout:
            if line.startswith("}"):
                break
        return p


@pytest.fixture
def kvn(env, tmp_path):
    return KvNvme(env, tmp_path)


def test_guide_write_read_exist_delete(kvn):
    (kvn.tmp / "value.txt").write_text("abcdefghijklmnopqrstuvwxyz\n")
    p = kvn.ok("write", DEV, "-k", "keyvalue12345678", "-l", 16, "-v", "value.txt", "-o", 0,
               "-s", 4096, "-a", "-w", "-t")
    assert "write: Success" in p.stderr
    assert "    key             : keyvalue12345678" in p.stdout
    assert "    value.length    : 0x001000" in p.stdout
    assert "    asynchronous    : 0x000001" in p.stdout
    assert re.search(r"^ latency \(write\): \d+ us$", p.stdout, re.M)
    p = kvn.ok("read", DEV, "-k", "keyvalue12345678", "-l", 16, "-s", 4096, "-t", "-w")
    assert "read_value=abcdefghijklmnopqrstuvwxyz\n" in p.stdout and "read: Success" in p.stderr
    p = kvn.ok("read", DEV, "-k", "keyvalue12345678", "-l", 16, "-s", 4096, "-v", "output.txt",
               "-t", "-w")
    out = (kvn.tmp / "output.txt").read_bytes()
    # the original read the file's 27 bytes into a zeroed 4096-byte value
    assert out == b"abcdefghijklmnopqrstuvwxyz\n" + bytes(4096 - 27)
    p = kvn.ok("read", DEV, "-k", "keyvalue12345678", "-i", 2)
    assert "value_size of the key(keyvalue12345678)=4096" in p.stdout
    kvn.ok("exist", DEV, "-k", "keyvalue12345678", "-l", 16, "-t", "-w")
    kvn.ok("delete", DEV, "-k", "keyvalue12345678", "-l", 16, "-t", "-w")
    p = kvn.run("exist", DEV, "-k", "keyvalue12345678", "-l", 16, "-t", "-w")
    assert p.returncode == 1 and "status of device=0x10" in p.stderr
    assert "KV_ERR_NOT_EXIST_KEY" in p.stderr
    # -d shows the command instead of sending it
    p = kvn.ok("write", DEV, "-k", "k-dry-run-000001", "-v", "value.txt", "-s", 64, "-d")
    assert "    key             : k-dry-run-000001" in p.stdout and "Success" not in p.stderr
    assert kvn.run("exist", DEV, "-k", "k-dry-run-000001").returncode == 1
    # the keyspace (-n) and a value offset (-o, a multiple of 512)
    kvn.ok("write", DEV, "-k", "meta-key", "-v", "value.txt", "-s", 1024, "-n", 1)
    assert kvn.run("exist", DEV, "-k", "meta-key").returncode == 1
    kvn.ok("exist", DEV, "-k", "meta-key", "-n", 1)
    p = kvn.run("read", DEV, "-k", "meta-key", "-n", 1, "-s", 512, "-o", 100)
    assert p.returncode == 1 and "0x9" in p.stderr  # misaligned value offset


def test_guide_get_log_list_id_ctrl_smart_log(kvn):
    p = kvn.ok("get-log", DEV, "--log-id=0xc0,", "--log-len=512")
    lines = p.stdout.splitlines()
    assert lines[0] == f"Device:{DEV} log-id:192"
    assert len([l for l in lines if re.match(r"^[0-9a-f]{4}: ", l)]) == 32
    kvn.ok("get-log", DEV, "-i", 2, "-l", 512, "-b", "smart.bin")
    assert (kvn.tmp / "smart.bin").stat().st_size == 512
    p = kvn.ok("list")
    row = next(l for l in p.stdout.splitlines() if l.startswith(DEV))
    assert " KV " in row and "%" in row
    assert p.stdout.splitlines()[0].split()[:2] == ["BDF", "Address"]
    kvn.ok("id-ctrl", DEV, "-b", "result.txt")
    ident = (kvn.tmp / "result.txt").read_bytes()
    assert len(ident) == 4096 and ident[4:7] == b"EMU"
    p = kvn.ok("id-ctrl", DEV)
    assert p.stdout.startswith("NVME Identify Controller:")
    assert json.loads(kvn.ok("id-ctrl", DEV, "-o", "json").stdout)["sn"].startswith("EMU")
    p = kvn.ok("smart-log", DEV)
    assert p.stdout.startswith(f"Smart Log for NVME device:{DEV} namespace-id:ffffffff")
    p = kvn.ok("list-ctrl", DEV)
    assert re.match(r"^\[   0\]:0x[0-9a-f]+$", p.stdout.strip())
    assert kvn.ok("version").stdout.startswith("kv_nvme version ")
    out = kvn.ok("help").stdout
    for cmd in ("list", "id-ctrl", "list-ctrl", "get-log", "smart-log", "format",
                "fw-download", "reset", "write", "read", "delete", "exist", "open-it",
                "read-it", "close-it", "list-it", "version", "help"):
        assert re.search(rf"^  {cmd} ", out, re.M), cmd
    assert "--fw" in kvn.ok("help", "fw-download").stdout


def test_guide_iterator_flow_as_separate_commands(kvn):
    (kvn.tmp / "v.txt").write_text("value-of-a-key")
    for k in ("0000key-a", "0000key-b", "keyvalue12345678"):
        kvn.ok("write", DEV, "-k", k, "-v", "v.txt", "-s", 14)
    holder = kvn.holder()
    try:
        # the defaults: prefix 0 under bitmask 0xffffffff matches no key here
        p = kvn.ok("open-it", DEV, "-p", "0x30303030", "-i", 1, "-b", "0xffffffff")
        assert "open-it: Success (returned iterate handle id=0x1)" in p.stderr
        p = kvn.ok("list-it", DEV)
        assert re.search(r"^ 0x1  \| 0x1    \| 1    \| 0x0         \| 0x30303030 \| 0xffffffff",
                         p.stdout, re.M), p.stdout
        p = kvn.ok("read-it", DEV, "-i", 1, "-w")
        assert "read-it: Success (147 returned" in p.stderr  # 0x93: end of data
        assert sorted(re.findall(r"^key=(.*)$", p.stdout, re.M)) == ["0000key-a", "0000key-b"]
        kvn.ok("close-it", DEV, "-i", 1)
        # the guide's open-it -p 0x30303030 -i 2: keys with their values, one per read
        kvn.ok("open-it", DEV, "-p", "0x30303030", "-i", 2)
        seen = {}
        for _ in range(3):
            p = kvn.ok("read-it", DEV, "-i", 1)
            keys = re.findall(r"^key=(.*)$", p.stdout, re.M)
            if keys:
                seen[keys[0]] = re.search(r"^value=(.*)$", p.stdout, re.M).group(1)
            if "end of data" in p.stderr:
                break
        assert seen == {"0000key-a": "value-of-a-key", "0000key-b": "value-of-a-key"}
        kvn.ok("close-it", DEV, "-i", 1)
        # the default bitmask is 0xffffffff: a prefix matches its 4 bytes exactly
        kvn.ok("open-it", DEV, "-p", "0x6b657976")  # "keyv"
        p = kvn.ok("read-it", DEV, "-i", 1, "-v", "it.bin")
        data = (kvn.tmp / "it.bin").read_bytes()
        count, klen = struct.unpack_from("<II", data)
        assert count == 1 and data[8:8 + klen] == b"keyvalue12345678"
        kvn.ok("close-it", DEV, "-i", 1)
        p = kvn.run("close-it", DEV, "-i", 1)
        assert p.returncode == 1 and "0x94" in p.stderr
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def test_guide_format_and_fw_download(kvn):
    (kvn.tmp / "v.txt").write_text("x" * 100)
    kvn.ok("write", DEV, "-k", "before-format", "-v", "v.txt", "-s", 100)
    p = kvn.ok("format", DEV, "--ses=1")
    assert "Success formatting namespace:ffffffff" in p.stdout
    assert kvn.run("exist", DEV, "-k", "before-format").returncode == 1
    # the emulator's image format (unvme fw-image): header, then the payload
    payload = bytes(range(256)) * 32
    img = struct.pack("<8s8sII8s", b"UNVMEFW1", b"GUIDE1.0", len(payload), zlib.crc32(payload),
                      bytes(8)) + payload
    (kvn.tmp / "EHA50K0F_ENC.bin").write_bytes(img)
    # the controller's firmware slots live as long as the device: one process holds it
    holder = kvn.holder()
    try:
        p = kvn.ok("fw-download", DEV, "--fw=EHA50K0F_ENC.bin")
        assert "Firmware download success" in p.stdout
        assert "Success activating firmware action:1 slot:2" in p.stdout
        # the firmware slot log shows the image in slot 2 (revision of slot n at 8 * n)
        kvn.ok("get-log", DEV, "--log-id=3", "--log-len=512", "-b", "fw.bin")
        assert (kvn.tmp / "fw.bin").read_bytes()[16:24] == b"GUIDE1.0"
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    kvn.ok("reset", DEV)
    p = kvn.run("fw-download", DEV, "-f", "missing.bin")
    assert p.returncode == 3 and "missing.bin" in p.stderr


@pytest.mark.parametrize("args,needle", [
    (["write", DEV, "-k", "abcd", "-v", "v.txt"], "value size"),
    (["write", DEV, "-k", "abcd", "-s", "16"], "file for the value"),
    (["read", DEV, "-k", "abcd"], "value size"),
    (["exist", DEV], "key is needed"),
    (["write"], "no device"),
    (["get-log", DEV, "--log-id=0xc0"], "--log-len"),
    (["get-log", DEV, "-i", "0x1c0", "-l", "512"], "--log-id"),
    (["open-it", DEV, "-i", "4"], "iterate_type"),
    (["read-it", DEV], "iterator_id"),
    (["read-it", DEV, "-i", "1", "-s", "4096"], "iterate read length"),
    (["id-ctrl", DEV, "-o", "xml"], "--output-format"),
    (["read", DEV, "-k", "abcd", "-s", "x"], "--value_size"),
    (["write", DEV, "--bogus"], "--bogus"),
    (["nonsense"], "invalid sub-command"),
])
def test_bad_command_lines(kvn, args, needle):
    p = kvn.run(*args)
    assert p.returncode == 2 and needle in p.stderr, (args, p.stderr)


def test_unknown_device(kvn):
    p = kvn.run("get-log", "0000:0b:00.0", "-i", 2, "-l", 512)
    assert p.returncode == 3 and "0000:0b:00.0" in p.stderr


COMMANDS = ["list", "id-ctrl", "list-ctrl", "get-log", "smart-log", "format", "fw-download",
            "list-it", "reset", "write", "read", "delete", "exist", "open-it", "read-it",
            "close-it"]


@pytest.mark.skipif(not shutil.which("man"), reason="man is not installed")
def test_man_page_lists_every_command_and_option(kvn):
    page = build_dir() / "tools" / "kv_nvme" / "kv_nvme.1"
    if not page.exists():
        pytest.skip("man pages not built (scdoc missing)")
    p = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, MANWIDTH="200", MANPAGER="cat", PAGER="cat"))
    text = re.sub(r".\x08", "", p.stdout)
    for cmd in COMMANDS:
        assert re.search(rf"^ +([\w-]+, )*{re.escape(cmd)}\b", text, re.M), cmd
        helptext = kvn.ok(cmd, "--help").stdout
        for short, long in re.findall(r"^  (?:-(\w), )?--([\w-]+)", helptext, re.M):
            assert f"--{long}" in text, f"{cmd} --{long} not in kv_nvme(1)"


def test_bash_completion_offers_commands_and_options(kvn):
    script = REPO / "tools" / "kv_nvme" / "completion" / "kv_nvme.bash"

    def complete(*words):
        cmd = (f"source {script}; COMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1};"
               " _kv_nvme; printf '%s\\n' \"${COMPREPLY[@]}\"")
        p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return p.stdout.split()
    assert set(complete(str(KV_NVME), "")) >= set(COMMANDS)
    assert complete(str(KV_NVME), "open-it", "dev", "--b") == ["--bitmask"]
    assert "--log-len" in complete(str(KV_NVME), "get-log", "dev", "--log")
