#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Regenerates the figures of docs/reliability.md (make reliability).

    scripts/reliability.py [--build build] [--fuzz-build build-fuzz] [--results DIR]
                           [--mode existing|short|long] [--doc docs/reliability.md]
                           [--check]

The doc's prose (the promises) is written by hand; the figures sit between markers
(<!-- figures:NAME --> ... <!-- /figures:NAME -->) and are replaced from these sources:

  crash     the crash harness (tests/crash/crash.py)      -> RESULTS/crash.json
  fuzz      the libFuzzer targets (scripts/fuzz.py)       -> RESULTS/fuzz.json
  soak      the soak run (tests/soak/soak)                -> RESULTS/soak.json
  badinput  the bad-input matrices (tests/badinput), always run afresh (seconds)

--mode existing (the default) uses the results the long runs left in RESULTS (make crash,
make fuzz, make soak write there) and runs the short mode only for what is missing; short
reruns everything briefly; long reruns everything in its long mode (hours). Each table says
which mode produced it, when, and how long it ran. --check exits 1 when a figure shows a
violation, a crash, a lost write or an unexpected answer (the doc is still written).
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def absdir(p):
    p = Path(p)
    return p if p.is_absolute() else REPO / p


def stamp(path):
    t = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M UTC")


def run(cmd, **kw):
    print("reliability: " + " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=REPO, **kw)


# ---------------------------------------------------------------- producing results

def merge_crash_parts(opts):
    """Long runs may go one component per process (crash.py --component C --json
    RESULTS/crash-C.json, in parallel): their newest figures per component, as one crash.json."""
    parts = sorted(opts.results.glob("crash*.json"), key=lambda p: p.stat().st_mtime)
    if not parts:
        return None
    merged = {"seed": None, "mode": None, "components": {}}
    for p in parts:
        d = json.loads(p.read_text())
        merged["seed"] = merged["seed"] if merged["seed"] is not None else d["seed"]
        merged["mode"] = merged["mode"] or d["mode"]
        for name, c in d["components"].items():
            merged["components"][name] = dict(c, seed=c.get("seed", d["seed"]))
    out = opts.results / "crash.json"
    text = json.dumps(merged, indent=1) + "\n"
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
        os.utime(out, (parts[-1].stat().st_mtime,) * 2)
    return out


def merge_fuzz_parts(opts):
    """fuzz.py runs of some targets (--target T --json RESULTS/fuzz-T.json): the newest
    figures per target, as one fuzz.json."""
    parts = sorted(opts.results.glob("fuzz*.json"), key=lambda p: p.stat().st_mtime)
    if not parts:
        return None
    targets = {}
    for p in parts:
        for t in json.loads(p.read_text())["targets"]:
            targets[t["target"]] = t
    out = opts.results / "fuzz.json"
    text = json.dumps({"targets": list(targets.values())}, indent=1) + "\n"
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
        os.utime(out, (parts[-1].stat().st_mtime,) * 2)
    return out


def produce(name, opts):
    out = opts.results / f"{name}.json"
    if opts.mode == "existing" and name == "crash" and merge_crash_parts(opts):
        return out
    if opts.mode == "existing" and name == "fuzz" and merge_fuzz_parts(opts):
        return out
    if opts.mode == "existing" and out.exists():
        return out
    mode = "long" if opts.mode == "long" else "short"
    if name == "crash":
        cmd = [sys.executable, "tests/crash/crash.py", "--build", opts.build, "--mode", mode,
               "--json", out, "--keep", opts.results / "crash-failures"]
        if mode == "short":
            cmd += ["--rounds", str(opts.crash_rounds)]
        run(cmd)
    elif name == "fuzz":
        if not (opts.fuzz_build / "tests" / "fuzz").exists():
            print("reliability: no fuzz build (make fuzz-build): the fuzz figures stay as they are",
                  flush=True)
            return out if out.exists() else None
        secs = os.environ.get("FUZZ_SECONDS", "14400") if mode == "long" else "20"
        cmd = [sys.executable, "scripts/fuzz.py", "--build", opts.fuzz_build, "--seconds", secs,
               "--json", out]
        if mode == "long":
            cmd += ["--runs", os.environ.get("FUZZ_RUNS", "10000000")]
        run(cmd)
    elif name == "soak":
        secs = os.environ.get("SOAK_SECONDS", "600") if mode == "long" else str(opts.soak_seconds)
        run([opts.build / "tests" / "soak" / "soak", "--seconds", secs, "--json", out])
        if out.exists():  # the mode goes with the figures
            d = json.loads(out.read_text())
            d["mode"] = mode
            out.write_text(json.dumps(d, indent=1) + "\n")
    return out if out.exists() else None


# ---------------------------------------------------------------- tables

def crash_tables(path):
    if not path:
        return "Not run yet: `make crash` (long) or `make reliability` (short).\n", False
    d = json.loads(path.read_text())
    comps = d["components"]
    bad = False
    rows = ["| component | rounds | random kills | crash-point kills | power cuts | damaged files "
            "| operations | acknowledged | acknowledged + flushed | records checked | lost | "
            "corrupt | resurrected | violations | seconds | seed |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    tot = dict.fromkeys(["rounds", "random", "point", "lost", "violations"], 0)
    for name, c in comps.items():
        rows.append(f"| {name} | {c['rounds']} | {c['kills']['random']} | {c['kills']['point']} | "
                    f"{c['powerloss_rounds']} | {sum(c['damage_rounds'].values())} | {c['ops']} | "
                    f"{c['acked']} | {c['durable']} | {c['checked']} | {c['lost']} | "
                    f"{c['corrupt']} | {c['resurrected']} | {c['violations']} | {c['seconds']} | "
                    f"{c.get('seed', d['seed'])} |")
        tot["rounds"] += c["rounds"]
        tot["random"] += c["kills"]["random"]
        tot["point"] += c["kills"]["point"]
        tot["lost"] += c["lost"]
        tot["violations"] += c["violations"] + len(c["failures"])
        bad |= bool(c["violations"] or c["failures"] or c["lost"] or c["corrupt"])
    head = (f"Mode **{d['mode']}**, finished {stamp(path)}: "
            f"{tot['rounds']} rounds, {tot['random'] + tot['point']} kills "
            f"({tot['point']} at crash points), **{tot['lost']} acknowledged writes lost, "
            f"{tot['violations']} violations**.\n\n")
    pts = ["| component | crash point | kills there |", "|---|---|---:|"]
    for name, c in comps.items():
        for p, n in sorted(c["points"].items()):
            pts.append(f"| {name} | `{p}` | {n} |")
    dmg = ["| component | damage | rounds |", "|---|---|---:|"]
    for name, c in comps.items():
        for k, n in sorted(c["damage_rounds"].items()):
            dmg.append(f"| {name} | {k} | {n} |")
    fails = []
    for name, c in comps.items():
        for f in c["failures"][:3]:
            fails.append(f"- {name}: {json.dumps(f)[:400]}")
    text = head + "\n".join(rows) + "\n\nKills per crash point:\n\n" + "\n".join(pts) + \
        "\n\nDamaged backing files (the checker is told which records were hit):\n\n" + \
        "\n".join(dmg) + "\n"
    if fails:
        text += "\nFailures:\n\n" + "\n".join(fails) + "\n"
    return text, bad


def fuzz_tables(path):
    if not path:
        return "Not run yet: `make fuzz` (long) or `make reliability` with a fuzz build.\n", False
    d = json.loads(path.read_text())
    rows = ["| target | what it feeds | executions | exec/s | corpus | seconds | crashes |",
            "|---|---|---:|---:|---:|---:|---:|"]
    what = {
        "emu_cmd": "random SQEs, PRP lists and payloads through real admin and I/O queues "
                   "(NVM, KV standard and vendor sets, fault injection)",
        "kv_log": "random bytes as a KV namespace log file, opened and recovered",
        "kv_config": "random bytes as the SDK's JSON configuration",
        "devid": "device ids: emu:// URIs, aliases, devices files, PCI addresses",
        "cli": "the unvme command line: batch tokenizer and option parser",
        "target_session": "whole NVMe/TCP target sessions of several hosts (ICReq, Connect, "
                          "DH-HMAC-CHAP, any command, H2C data, back-pressure, closes) over two "
                          "subsystems with canary data",
    }
    bad = False
    total = crashes = 0
    for t in d["targets"]:
        if "skipped" in t:
            rows.append(f"| {t['target']} | {what.get(t['target'], '')} | skipped: "
                        f"{t['skipped']} | | | | |")
            continue
        rows.append(f"| {t['target']} | {what.get(t['target'], '')} | {t['executions']:,} | "
                    f"{t['exec_per_sec']:,} | {t['corpus']} | {t['seconds']} | {t['crashes']} |")
        total += t["executions"]
        crashes += t["crashes"]
        bad |= bool(t["crashes"])
    regress = sorted(p.relative_to(REPO).as_posix()
                     for p in (REPO / "tests" / "fuzz" / "corpus").glob("*/regress-*"))
    head = (f"Finished {stamp(path)}: **{total:,} executions, {crashes} crashes** (ASan + UBSan, "
            f"leaks checked).\n\n")
    text = head + "\n".join(rows) + "\n\nRegression inputs kept in the corpus (crashes found "
    text += "before, replayed by every run): " + (", ".join(f"`{r}`" for r in regress)
                                                  if regress else "none so far") + ".\n"
    return text, bad


def soak_tables(path):
    if not path:
        return "Not run yet: `make soak` (long) or `make reliability` (short).\n", False
    d = json.loads(path.read_text())
    b, k = d["block"], d["kv"]
    ops = b["writes"] + b["reads"] + b["flushes"] + k["stores"] + k["retrieves"] + \
        k["deletes"] + k["exists"] + k["iterations"]
    bad = bool(d["violations"]) or d["resets"] < d["faults_injected"]
    text = (f"Mode **{d.get('mode', 'long')}**, finished {stamp(path)}: {d['seconds']} s, "
            f"{d['block_threads']} block threads and {d['kv_threads']} KV threads, "
            f"**{ops:,} operations, {d['faults_injected']} fatal faults injected, {d['resets']} "
            f"controller resets, {b['errors_in_resets'] + k['errors_in_resets']} commands failed "
            f"by the resets, {d['violations']} violations (lost or wrong data)**.\n\n"
            "| | writes / stores | reads / retrieves | flushes / deletes | exists | iterators "
            "(keys) | data checked | failed in a reset |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
            f"| block (driver API, one queue pair per thread) | {b['writes']:,} | {b['reads']:,} | "
            f"{b['flushes']:,} | | | {b['blocks_checked']:,} blocks | {b['errors_in_resets']} |\n"
            f"| KV (SDK, async stores through completion threads) | {k['stores']:,} | "
            f"{k['retrieves']:,} | {k['deletes']:,} | {k['exists']:,} | {k['iterations']:,} "
            f"({k['iterated_keys']:,}) | {k['values_checked']:,} values | {k['errors_in_resets']} |\n")
    if d["violations"]:
        text += f"\nFirst violation: {d['first_violation']}\n"
    return text, bad


def steady(line):
    """A table line without what changes from run to run (heap and stack addresses, scratch
    directories), so that regenerating the doc changes only what changed."""
    line = re.sub(r"\b0x(?:5[56]|7f)[0-9a-f]{10}\b", "0x...", line)
    return re.sub(r"/tmp/unvme-badtools-[^/ ]+/", "{tmp}/", line)


def badinput_tables(opts):
    sections = []
    counts = []
    bad = False
    for name, area in (("driver", "driver API"), ("kv", "KV API"), ("config", "JSON config"),
                       ("target", "NVMe/TCP target")):
        exe = opts.build / "tests" / "badinput" / f"bad_{name}"
        p = run([exe, "--markdown"], capture_output=True, text=True,
                env=dict(os.environ, UNVME_QUIET="1"))
        lines = [steady(l) for l in p.stdout.splitlines() if l.startswith("|")]
        bad |= p.returncode != 0 or any("UNEXPECTED" in l for l in lines)
        counts.append((area, len(lines), sum("UNEXPECTED" in l for l in lines)))
        sections.append((area, lines))
    p = run([sys.executable, "tests/badinput/tools_matrix.py", "--build", opts.build,
             "--markdown"], capture_output=True, text=True)
    lines = [steady(l) for l in p.stdout.splitlines() if l.startswith("|")]
    bad |= p.returncode != 0
    for area in ("unvme tool", "fio engine"):
        mine = [l for l in lines if l.startswith(f"| {area} |")]
        counts.append((area, len(mine), sum("UNEXPECTED" in l for l in mine)))
        sections.append((area, mine))
    total = sum(c[1] for c in counts)
    wrong = sum(c[2] for c in counts)
    text = (f"Run {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}: "
            f"**{total} bad inputs tried, {total - wrong} answered as documented, {wrong} "
            f"otherwise**; none crashed or hung (the C matrices also run under ASan + UBSan with "
            f"leak checks in `make test-asan`).\n\n| interface | cases | unexpected |\n"
            "|---|---:|---:|\n")
    text += "".join(f"| {a} | {n} | {w} |\n" for a, n, w in counts)
    for area, rows in sections:
        text += (f"\n#### {area}\n\n| area | case | input | answer | message |\n"
                 "|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    return text, bad


# ---------------------------------------------------------------- the doc

def section(doc, name):
    m = re.search(rf"<!-- figures:{name} -->\n(.*?)<!-- /figures:{name} -->", doc, re.S)
    return m.group(1) if m else ""


def replace_section(doc, name, body):
    pat = re.compile(rf"(<!-- figures:{name} -->\n).*?(<!-- /figures:{name} -->)", re.S)
    if not pat.search(doc):
        raise SystemExit(f"reliability: docs marker <!-- figures:{name} --> is missing")
    return pat.sub(lambda m: m.group(1) + body + m.group(2), doc)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    ap.add_argument("--fuzz-build", default=os.environ.get("FUZZ_BUILD", "build-fuzz"))
    ap.add_argument("--results")
    ap.add_argument("--mode", choices=["existing", "short", "long"], default="existing")
    ap.add_argument("--doc", default="docs/reliability.md")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--crash-rounds", type=int, default=24, help="rounds per component, short mode")
    ap.add_argument("--soak-seconds", type=int, default=20, help="soak length, short mode")
    opts = ap.parse_args(argv)
    opts.build = absdir(opts.build)
    opts.fuzz_build = absdir(opts.fuzz_build)
    opts.results = absdir(opts.results) if opts.results else opts.build / "reliability"
    opts.results.mkdir(parents=True, exist_ok=True)
    doc_path = absdir(opts.doc)
    doc = doc_path.read_text()
    any_bad = False
    for name, fn in (("crash", crash_tables), ("fuzz", fuzz_tables), ("soak", soak_tables)):
        path = produce(name, opts)
        if path is None and section(doc, name).strip():
            print(f"reliability: no {name} results: its figures stay as they are", flush=True)
            continue
        body, bad = fn(path)
        doc = replace_section(doc, name, body)
        any_bad |= bad
    body, bad = badinput_tables(opts)
    doc = replace_section(doc, "badinput", body)
    any_bad |= bad
    doc_path.write_text(doc)
    print(f"reliability: wrote {doc_path}" + (" (with failures)" if any_bad else ""), flush=True)
    return 1 if (opts.check and any_bad) else 0


if __name__ == "__main__":
    sys.exit(main())
