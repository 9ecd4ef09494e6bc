# SPDX-License-Identifier: BSD-3-Clause
"""make reliability in miniature: scripts/reliability.py regenerates the figures of a copy of
docs/reliability.md from short runs of every harness, and each section then holds figures
(not the 'not run' text), with no violation, lost write or unexpected answer."""
import re
import subprocess
import sys
from pathlib import Path

from conftest import build_dir

REPO = Path(__file__).resolve().parents[2]


def test_make_reliability_regenerates_every_figure(tmp_path):
    doc = tmp_path / "reliability.md"
    doc.write_text((REPO / "docs" / "reliability.md").read_text())
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "reliability.py"), "--build",
                        str(build_dir()), "--fuzz-build", str(tmp_path / "no-fuzz-build"),
                        "--results", str(tmp_path / "results"), "--mode", "short",
                        "--crash-rounds", "2", "--soak-seconds", "3", "--doc", str(doc),
                        "--check"], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    text = doc.read_text()
    crash = text.split("<!-- figures:crash -->")[1].split("<!-- /figures:crash -->")[0]
    assert "Mode **short**" in crash and "0 acknowledged writes lost, 0 violations" in crash
    for comp in ("block", "kv-sync", "kv-async", "kv-std", "ctrl"):
        assert re.search(rf"^\| {comp} \| 2 \|", crash, re.M), crash
    soak = text.split("<!-- figures:soak -->")[1].split("<!-- /figures:soak -->")[0]
    assert "0 violations" in soak and "Mode **short**" in soak
    bad = text.split("<!-- figures:badinput -->")[1].split("<!-- /figures:badinput -->")[0]
    m = re.search(r"\*\*(\d+) bad inputs tried, (\d+) answered as documented, 0 otherwise", bad)
    assert m and int(m.group(1)) >= 150 and m.group(1) == m.group(2), bad[:500]
    assert "UNEXPECTED" not in bad
    # the committed doc's figures are kept where there is nothing new (no fuzz build here)
    fuzz = text.split("<!-- figures:fuzz -->")[1].split("<!-- /figures:fuzz -->")[0]
    committed = (REPO / "docs" / "reliability.md").read_text()
    assert fuzz in committed
