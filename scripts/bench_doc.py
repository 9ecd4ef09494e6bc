#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""make bench-doc: puts the figures of a make bench run into docs/performance.md.

The document's text says what each comparison does; its figures live between markers,
<!-- bench:SECTION --> ... <!-- /bench:SECTION -->, and this script replaces what is between
them with the section's table, rendered from the results JSON by the same function that
printed it during the run (each script's render()). <!-- bench:meta --> gets the date and
the machine. The plots are copied to docs/img/. Sections the results do not have (a failed or
skipped section) keep their old text, and the script says which.

  python3 scripts/bench_doc.py [bench/results/<stamp>.json] [--doc docs/performance.md]
"""
import argparse
import importlib.util
import json
import pathlib
import re
import shutil
import sys

import bench_common as bc
from bench import SECTIONS


def load(script):
    spec = importlib.util.spec_from_file_location(script.stem, script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def newest(results_dir):
    files = sorted(p for p in results_dir.glob("*.json") if re.fullmatch(r"\d{8}-\d{6}\.json", p.name))
    if not files:
        sys.exit(f"bench-doc: no results in {results_dir}; run 'make bench' first")
    return files[-1]


def replace_block(text, name, body):
    pat = re.compile(rf"(<!-- bench:{re.escape(name)} -->\n).*?(\n<!-- /bench:{re.escape(name)} -->)", re.S)
    if not pat.search(text):
        return text, False
    return pat.sub(lambda m: m.group(1) + body.strip("\n") + m.group(2), text), True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", help="a make bench results JSON (default: the newest)")
    ap.add_argument("--doc", default=str(bc.ROOT / "docs" / "performance.md"))
    ap.add_argument("--img", default=str(bc.ROOT / "docs" / "img"))
    a = ap.parse_args()
    path = pathlib.Path(a.results) if a.results else newest(bc.ROOT / "bench" / "results")
    res = json.loads(path.read_text())
    meta = res["meta"]
    if meta.get("quick"):
        print("bench-doc: warning: these are BENCH_QUICK results, not figures to publish",
              file=sys.stderr)
    doc = pathlib.Path(a.doc)
    text = doc.read_text()
    minutes = sum(res.get("seconds", {}).values()) / 60
    huge = (meta.get("hugepages") or {}).get("reserved")
    text, ok = replace_block(text, "meta", f"Latest figures: `make bench` of {meta['started']} on "
                             f"{meta['cpus']} CPUs, {meta['os']}, Linux {meta['kernel']}; median "
                             f"of {meta['rounds']} runs per figure, the range of the runs in "
                             f"brackets; " + (f"{huge} 2 MiB hugepages reserved; " if huge is not None
                                              else "") +
                             f"the run took {minutes:.0f} minutes. Results file: "
                             f"`bench/results/{path.name}`.")
    missing = [] if ok else ["meta (no marker)"]
    img = pathlib.Path(a.img)
    for key, (_, script) in SECTIONS.items():
        data = res["sections"].get(key)
        if data is None:
            missing.append(f"{key} ({res.get('failed', {}).get(key, 'not in the results')[:200]})")
            continue
        text, ok = replace_block(text, key, load(script).render(data))
        if not ok:
            missing.append(f"{key} (no marker in {doc.name})")
        for png in (data.get("plots") or {}).values():
            if png and pathlib.Path(png).exists():
                img.mkdir(parents=True, exist_ok=True)
                shutil.copy(png, img / pathlib.Path(png).name)
    doc.write_text(text)
    print(f"bench-doc: {doc} updated from {path}")
    if missing:
        print("bench-doc: kept the old text of: " + "; ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
