#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bad-input matrix of the command-line tools (docs/reliability.md): the `unvme` tool (bad
numbers, out-of-range LBAs, missing files, malformed device ids, huge counts) and the fio
engine's options. Each case is one command line, the exit code it must end with (the tool's
documented codes: 1 device status, 2 usage, 3 host-side failure; fio: non-zero) and words its
message must hold; a signal, a hang (timeout) or an undocumented exit code fails the case.

    tests/badinput/tools_matrix.py [--build build] [--markdown] [NAME-SUBSTRING]

tests/integration/test_badinput.py runs every case under pytest.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KEY256 = "k" * 256

# (case, argv after `unvme`, exit code, words of the message); {tmp} is a scratch directory
UNVME = [
    ("unknown command", ["frobnicate", "emu0"], 2, "unknown command"),
    ("unknown option", ["read", "emu0", "--bogus"], 2, "unknown option '--bogus'"),
    ("option without its value", ["read", "emu0", "--namespace-id"], 2, "needs a value (NSID)"),
    ("start block a word", ["read", "emu0", "-s", "abc"], 2, "invalid value 'abc' for --start-block"),
    ("start block negative", ["read", "emu0", "-s", "-1"], 2, "invalid value '-1' for --start-block"),
    ("start block 2^64", ["read", "emu0", "-s", "18446744073709551616"], 2, "invalid value '18446744073709551616'"),
    ("start block '0x'", ["read", "emu0", "-s", "0x"], 2, "invalid value '0x'"),
    ("block count 0 (one block) under the data size", ["read", "emu0", "-c", "0", "-z", "1024"], 2, "more than the 512 bytes of 1 blocks"),
    ("block count 2^32-1", ["read", "emu0", "-c", "4294967295"], 2, "4294967296 blocks (0's based) of 512 bytes; at most 1073741824 bytes per command line"),
    ("block count 2^36", ["read", "emu0", "-c", "68719476736"], 2, "out of range (0..4294967295)"),
    ("read past the end", ["read", "emu0", "-s", "99999999999999"], 1, "LBA Out of Range (SCT 0h, SC 80h)"),
    ("write across the end", ["write", "emu://m?ns=mem:1M", "-s", "2047", "-c", "1", "-p", "1"], 1, "LBA Out of Range"),
    ("namespace 0", ["read", "emu0", "-n", "0"], 1, "Invalid Namespace or Format"),
    ("namespace 9", ["read", "emu0", "-n", "9"], 1, "Invalid Namespace or Format"),
    ("pattern not a number", ["write", "emu0", "-p", "zz"], 2, "invalid value 'zz' for --pattern"),
    ("data file missing", ["write", "emu0", "-d", "/nonexistent/data"], 3, "cannot open /nonexistent/data: No such file"),
    ("data file a directory", ["write", "emu0", "-d", "/tmp"], 3, "/tmp is not a regular file"),
    ("output format xml", ["read", "emu0", "-o", "xml"], 2, "expected normal, json or binary"),
    ("binary output where there is none", ["list-ns", "emu0", "-o", "binary"], 2, "list-ns has no binary output"),
    ("log length 7", ["get-log", "emu0", "--log-id", "2", "--log-len", "7"], 2, "a non-zero multiple of 4"),
    ("opcode 0x100", ["admin-passthru", "emu0", "--opcode", "0x100"], 2, "out of range (0..255)"),
    ("I/O opcode 7Fh", ["io-passthru", "emu0", "--opcode", "0x7f"], 1, "Invalid Command Opcode (SCT 0h, SC 1h)"),
    ("Number of Queues 0xffff", ["set-feature", "emu0", "-f", "7", "-v", "0xffff"], 1, "Invalid Field in Command"),
    ("format without a target", ["format", "emu0", "--lbaf", "9"], 2, "give either --namespace-id (-n) or --all"),
    ("format with LBA format 9", ["format", "emu0", "-n", "1", "--lbaf", "9", "--force"], 1, "Invalid Format"),
    ("firmware slot 9", ["fw-commit", "emu0", "-s", "9", "-a", "1"], 2, "slots are 0..7"),
    ("firmware file missing", ["fw-download", "emu0", "-f", "/nonexistent/fw.bin"], 3, "cannot open /nonexistent/fw.bin"),
    ("perf queue depth 0", ["perf", "emu0", "-q", "0"], 2, "for --queue-depth (-q): 1..65535"),
    ("perf 100000 seconds", ["perf", "emu0", "-t", "100000"], 2, "1..86400 seconds"),
    ("unknown scheme", ["read", "nvme://x"], 3, "unknown scheme (known: emu://, "),
    ("unknown alias", ["read", "no-such-ssd"], 3, "'no-such-ssd' is not a URI, a PCI address or a known alias"),
    ("short PCI address", ["read", "0000:00:00"], 3, "'0000:00:00' is not a URI"),
    ("PCI address with no device", ["read", "0000:7f:1f.7"], 3, "0000:7f:1f.7"),
    ("URI size with a bad suffix", ["read", "emu://x?ns=mem:1X"], 3, "size '1X' is not a number"),
    ("URI queues=0", ["reset", "emu://x?ns=mem:1M&queues=0"], 3, "queues=0: not a number 1..1023"),
    ("URI misspelt key", ["read", "emu://x?ns=mem:1M&qeues=8"], 3, "unknown key 'qeues'"),
    ("URI backing file in a missing directory", ["read", "emu://x?ns=file:1M:512:/nonexistent/d/f.img"], 3, "/nonexistent/d/f.img"),
    ("KV key of 3 bytes", ["kv-write", "emu://k?ns=kv:1M", "-k", "abc", "-s", "16"], 1, "KV_ERR_INVALID_KEY_SIZE"),
    ("KV key of 256 bytes", ["kv-write", "emu://k?ns=kv:1M", "-k", KEY256, "-s", "16"], 1, "KV_ERR_INVALID_KEY_SIZE"),
    ("KV value of 3 MB", ["kv-write", "emu://k?ns=kv:1M", "-k", "abcd", "--value-size", "3000000"], 2, "at most 2097152"),
    ("KV value file missing", ["kv-write", "emu://k?ns=kv:1M", "-k", "abcd", "-v", "/nonexistent/v"], 3, "cannot open /nonexistent/v"),
    ("KV read of a missing key", ["kv-read", "emu://k?ns=kv:1M", "-k", "abcd"], 1, "KV_ERR_NOT_EXIST_KEY (0x10)"),
    ("KV iterator never opened", ["kv-read-it", "emu://k?ns=kv:1M", "-i", "9"], 1, "KV_ERR_ITERATE_REQUEST_FAIL"),
    ("KV iterator 17", ["kv-close-it", "emu://k?ns=kv:1M", "-i", "17"], 1, "KV_ERR_SDK_INVALID_PARAM"),
    ("KV command on a block namespace", ["kv-write", "emu://b?ns=mem:1M", "-k", "abcd", "-s", "16"], 1, "KV_ERR_DD_NO_DEVICE"),
    ("target without an allow-list", ["target", "--listen", "127.0.0.1:0", "-d", "emu://t?ns=mem:1M"], 2, "no host may connect: name them with --allow-host"),
    ("target queue depth 1", ["target", "-d", "emu://t?ns=mem:1M", "--allow-any-host", "--max-queue-depth", "1"], 2, "--max-queue-depth: \"max_queue_depth\" must be 2..1024"),
    ("target connection memory 2 MiB", ["target", "-d", "emu://t?ns=mem:1M", "--allow-any-host", "--max-connection-memory", "2"], 2, "\"max_connection_memory_mb\" must be 4..1048576"),
    ("target connection memory above the total", ["target", "-d", "emu://t?ns=mem:1M", "--allow-any-host", "--max-memory", "8", "--max-connection-memory", "16"], 2, "\"max_connection_memory_mb\" (16) is above \"max_memory_mb\" (8)"),
    ("target config limit not a number", ["target", "-c", "{tmp}/target-limit-word.json"], 2, "\"max_connections\" must be a number"),
    ("target config limit misspelt", ["target", "-c", "{tmp}/target-limit-typo.json"], 2, "unknown key \"max_conections\""),
    ("target --allow-any-host with a config file", ["target", "-c", "{tmp}/target-ok.json", "--allow-any-host"], 2, "--allow-any-host and --tls-key go in the file"),
]

# configuration files the target cases name
TARGET_CONFIGS = {
    "target-limit-word.json": '{ "max_connections": "many", "subsystems": [] }',
    "target-limit-typo.json": '{ "max_conections": 4, "subsystems": [] }',
    "target-ok.json": '{ "subsystems": [ { "nqn": "nqn.2024-01.io.unvme.bad:x", "allow_any_host": true, '
                      '"namespaces": [ "emu://x?ns=mem:1M" ] } ] }',
}


def esc(uri):
    return uri.replace(":", "\\:")


# (case, fio arguments after the engine, words); the engine's options come after --ioengine
FIO_COMMON = ["--thread=1", "--size=4M", "--iodepth=4"]
FIO = [
    ("config file missing", ["--name=x", "--json_path=/nonexistent/kv.json", "--filename=emu0", "--rw=write", "--bs=4k"], "/nonexistent/kv.json"),
    ("config not JSON", ["--name=x", "--json_path={tmp}/bad.json", "--filename=emu0", "--rw=write", "--bs=4k"], "not valid JSON"),
    ("device not in the config", ["--name=x", "--json_path={tmp}/good.json", "--filename=" + esc("emu://other?ns=kv:16M"), "--rw=write", "--bs=4k"], "is not in json_path"),
    ("unknown device", ["--name=x", "--filename=nosuchalias", "--rw=write", "--bs=4k"], "nosuchalias"),
    ("misspelt engine option", ["--name=x", "--json_pth=/tmp/x.json", "--filename=emu0", "--rw=write", "--bs=4k"], "json_pth"),
    ("KV bs of 4 MiB", ["--name=x", "--filename=" + esc("emu://k?ns=kv:64M"), "--rw=write", "--bs=4M"], "larger than the KV value limit of 2 MiB"),
    ("bs not a multiple of the LBA size", ["--name=x", "--filename=" + esc("emu://b?ns=mem:16M:4096"), "--rw=write", "--bs=512"], "4096-byte LBA size"),
    ("thread=0", ["--name=x", "--filename=" + esc("emu://k?ns=kv:64M"), "--thread=0", "--rw=write", "--bs=4k"], "thread=1 is required"),
    ("key size 3", ["--name=x", "--filename=" + esc("emu://k?ns=kv:64M"), "--rw=write", "--bs=4k", "--ks=3"], "ks: min value out of range: 3 (4 min)"),
    ("key size 256", ["--name=x", "--filename=" + esc("emu://k?ns=kv:64M"), "--rw=write", "--bs=4k", "--ks=256"], "ks: max value out of range: 256 (255 max)"),
    ("key size a word", ["--name=x", "--filename=" + esc("emu://k?ns=kv:64M"), "--rw=write", "--bs=4k", "--ks=abc"], "failed parsing ks=abc"),
    ("json_path empty", ["--name=x", "--filename=emu0", "--rw=write", "--bs=4k", "--json_path="], "failed parsing json_path="),
]


def run_unvme(build, case, tmp, env):
    name, argv, want_rc, words = case
    for f, text in TARGET_CONFIGS.items():
        (tmp / f).write_text(text)
    tool = build / "tools" / "unvme" / "unvme"
    # under ASan a sanitizer report exits 86, which no case expects
    env = dict(env, ASAN_OPTIONS="detect_leaks=1:exitcode=86", UBSAN_OPTIONS="halt_on_error=1")
    try:
        p = subprocess.run([str(tool), *[a.format(tmp=tmp) for a in argv]], capture_output=True,
                           text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "hang", "(timed out after 60 s)", False
    msg = (p.stderr.strip().splitlines() or [""])[-1]
    ok = p.returncode == want_rc and words in p.stderr and "Sanitizer" not in p.stderr
    return f"exit {p.returncode}" if p.returncode >= 0 else f"signal {-p.returncode}", msg, ok


def run_fio(build, case, tmp, env):
    name, args, words = case
    engine = build / "plugins" / "fio" / "unvme-fio.so"
    (tmp / "bad.json").write_text('{ "device_description": [ { "dev_id": "emu0", ')
    (tmp / "good.json").write_text('{ "ssd_type": "kv", "device_description": [ { "dev_id": '
                                   '"emu://k?ns=kv:64M", "core_mask": 1 } ] }')
    cmd = ["fio", f"--ioengine=external:{engine}", *FIO_COMMON,
           *[a.format(tmp=tmp) for a in args]]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=tmp,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "hang", "(timed out after 120 s)", False
    lines = [l.strip() for l in (p.stdout + p.stderr).splitlines() if words in l]
    msg = lines[0] if lines else (p.stderr.strip().splitlines() or [""])[-1]
    ok = p.returncode > 0 and bool(lines)
    return f"exit {p.returncode}" if p.returncode >= 0 else f"signal {-p.returncode}", msg, ok


def cases(build):
    out = [("unvme tool", c, run_unvme) for c in UNVME]
    if shutil.which("fio") and (build / "plugins" / "fio" / "unvme-fio.so").exists():
        out += [("fio engine", c, run_fio) for c in FIO]
    return out


def tool_env():
    env = dict(os.environ, UNVME_QUIET="1")
    env.pop("UNVME_DEVICES", None)
    env["HOME"] = tempfile.gettempdir()  # no user devices file
    return env


def md(s):
    return s.replace("|", "\\|").replace("\n", " ")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("UNVME_BUILD", "build"))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("only", nargs="?")
    opts = ap.parse_args(argv)
    build = Path(opts.build)
    build = build if build.is_absolute() else REPO / build
    env = tool_env()
    failed = passed = 0
    with tempfile.TemporaryDirectory(prefix="unvme-badtools-") as tmp:
        for area, case, fn in cases(build):
            if opts.only and opts.only not in case[0]:
                continue
            how, msg, ok = fn(build, case, Path(tmp), env)
            if opts.markdown:
                shown = msg if len(msg) < 200 else msg[:197] + "..."
                args = " ".join(case[1]).replace(KEY256, "k" * 8 + "...(256)")
                exe = "unvme" if area == "unvme tool" else "fio --ioengine=external:unvme-fio.so"
                print(f"| {area} | {md(case[0])} | `{md(exe + ' ' + args)}` | {how} | {md(shown)} |"
                      + ("" if ok else " **UNEXPECTED** |"))
            elif ok:
                print(f"ok   {case[0]}")
            else:
                print(f"FAIL {case[0]}: {how}: {msg}")
            passed += ok
            failed += not ok
    if not opts.markdown:
        print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
