# SPDX-License-Identifier: BSD-3-Clause
"""The command line itself: help, version, exit codes for usage errors, and no crash whatever
the arguments."""
import re

import pytest

from conftest import REPO

COMMANDS = ["list", "devices", "id-ctrl", "id-ns", "list-ns", "ns-descs", "smart-log",
            "error-log", "fw-log", "get-log", "get-feature", "set-feature", "format",
            "fw-download", "fw-commit", "fw-activate", "fw-image", "reset", "show-regs", "read", "write",
            "compare", "flush", "write-zeroes", "verify", "deallocate", "admin-passthru", "io-passthru",
            "effects-log", "self-test-log", "device-self-test", "sanitize-log", "ns-rescan",
            "inject-fault", "unplug", "plug", "monitor", "perf", "batch", "help", "version"]


def test_help_lists_every_command_and_the_exit_codes(unvme):
    r = unvme.ok("help")
    for c in COMMANDS:
        assert f"  {c} " in r.out, c
    for code in ("0  success", "1  the device returned an NVMe error status", "2  usage error",
                 "3  the device could not be opened"):
        assert code in r.out


def test_no_arguments_is_a_usage_error(unvme):
    r = unvme.run()
    assert r.rc == 2
    assert "usage: unvme" in r.err


def test_version(unvme):
    r = unvme.ok("version")
    assert r.out.startswith("unvme ")
    # --version is the same, with the library's version and how it was built
    assert unvme.ok("--version").out == r.out
    tool, lib, build = r.out.splitlines()
    version = tool.split()[1]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert lib == f"library: libunvme {version}"
    opts = dict(w.split("=", 1) for w in build.removeprefix("build: ").split())
    assert {"buildtype", "compiler", "sanitize", "liburing", "json-c", "libcrypto",
            "zlib"} <= set(opts)
    meson = (REPO / "meson.build").read_text()
    assert f"version: '{version}'" in meson


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_command_has_help(unvme, cmd):
    r = unvme.ok(cmd, "--help")
    assert r.out.startswith(f"usage: unvme {cmd}")
    assert r.out == unvme.ok("help", cmd).out


def test_unknown_command(unvme):
    r = unvme.run("frobnicate")
    assert r.rc == 2
    assert "frobnicate" in r.err and "unknown command" in r.err


@pytest.mark.parametrize("args, names", [
    (["read", "-s", "abc"], ["--start-block", "abc"]),
    (["read", "--block-count=12x"], ["--block-count", "12x"]),
    (["id-ns", "-n", "99999999999"], ["--namespace-id", "99999999999", "out of range"]),
    (["id-ctrl", "-o", "yaml"], ["--output-format", "yaml"]),
    (["id-ctrl", "--frobnicate"], ["--frobnicate"]),
    (["read", "-n"], ["--namespace-id", "needs a value"]),
    (["get-log", "-l", "512"], ["--log-id", "required"]),
    (["get-log", "-i", "2", "-l", "511"], ["--log-len", "511"]),
    (["perf", "-w", "sideways"], ["--workload", "sideways"]),
    (["perf", "-b", "1000"], ["--block-size", "1000"]),
    (["perf", "-q", "0"], ["--queue-depth", "0"]),
    (["perf", "-c", "0,x"], ["--cores", "0,x"]),
    (["perf", "-c", "4096"], ["--cores", "4096"]),
    (["perf", "-M", "101", "-w", "randrw"], ["--rwmixread", "101"]),
    (["fw-image", "--revision", "TOOLONGREV", "--output", "x.bin"], ["--revision", "TOOLONGREV"]),
    (["fw-image", "--revision", "R1", "-o", "x.bin"], ["-o"]),
    (["set-feature", "-f", "6"], ["--value", "required"]),
    (["inject-fault"], ["exactly one"]),
    (["inject-fault", "--fatal", "--clear"], ["exactly one"]),
    (["admin-passthru", "--opcode", "0x100"], ["--opcode", "0x100"]),
    (["io-passthru", "--opcode", "2", "--read"], ["--data-len"]),
    (["read", "-c", "4294967295"], ["--block-count", "'4294967295'", "0's based"]),
    (["list-ns", "-o", "binary"], ["--output-format", "no binary output"]),
    (["get-log", "-i", "2", "-l", "512", "--lsp", "128"], ["--lsp", "128"]),
    (["read", "emu0", "extra"], ["extra"]),
    (["version", "--flag-of-doom"], ["--flag-of-doom"]),
])
def test_bad_option_values_exit_2_naming_the_option(unvme, args, names):
    r = unvme.run(*args)
    assert r.rc == 2, r
    for n in names:
        assert n in r.err, (n, r)
    assert r.out == ""


def test_numbers_accept_hex_and_sizes_accept_suffixes(unvme):
    # parsed fine, then rejected for another reason (device-independent): proves the parse
    r = unvme.run("perf", "-b", "4k", "-q", "0x0")
    assert r.rc == 2 and "--queue-depth" in r.err and "'0'" in r.err


GARBAGE = [
    ["--cdw10", "-1"], ["-n", "0"], ["-n", "0xffffffff"], ["-s", "18446744073709551615"],
    ["-c", "4294967295"], ["-z", "99999999999999999999"], ["--data", "/nonexistent/x"],
    ["-l", "0"], ["--offset", "3"], ["-e", "0"], ["-e", "100000"], ["--", "--not-an-option"],
    ["-f", ""], ["-i", "255", "-l", "4"], ["--sel", "9"], ["-x", "3"], ["-a", "9"],
]

# (monitor runs until a signal when its arguments are fine)
SAFE_TO_FUZZ = [c for c in COMMANDS if c not in ("perf", "batch", "format", "reset", "fw-commit",
                                                  "fw-activate", "device-self-test", "inject-fault",
                                                  "fw-image", "list", "help", "monitor")]


@pytest.mark.parametrize("cmd", SAFE_TO_FUZZ)
def test_nothing_crashes_on_odd_input(unvme, cmd):
    dev = unvme.file_dev(size="4M")
    for g in GARBAGE:
        # Result checks: no signal, only documented exit codes
        unvme.run(cmd, dev, *g, timeout=60)


def test_batch_runs_lines_and_semicolons_and_stops_at_the_first_failure(unvme):
    r = unvme.batch("emu://b?ns=mem:1M:512",
                    "version; version\n# a comment\nread -s 999999999\nversion\n")
    assert r.rc == 1, r
    assert sum(line.startswith("unvme ") for line in r.out.splitlines()) == 2
    assert "LBA Out of Range" in r.err


def test_batch_keep_going_reports_the_first_failure(unvme):
    r = unvme.batch("emu://b?ns=mem:1M:512", "read -s 999999999\nid-ctrl --bogus\nversion\n",
                    keep_going=True)
    assert r.rc == 1
    assert "unvme " in r.out
    assert "--bogus" in r.err


def test_batch_quoting_and_usage_errors(unvme):
    r = unvme.batch("emu://b?ns=mem:1M:512", "help 'id-ctrl'\n")
    assert r.rc == 0 and r.out.startswith("usage: unvme id-ctrl")
    r = unvme.batch("emu://b?ns=mem:1M:512", "help 'id-ctrl\n")
    assert r.rc == 2 and "unterminated" in r.err
    r = unvme.batch("emu://b?ns=mem:1M:512", "batch\n")
    assert r.rc == 2 and "inside batch" in r.err
