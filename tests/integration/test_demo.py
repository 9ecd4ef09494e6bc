# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo.sh, the README's first command, works with no hardware and in under 30 s."""
import subprocess
import time

from conftest import REPO, build_dir


def test_demo_runs(env, tmp_path):
    env = dict(env, BUILD=str(build_dir()), TMPDIR=str(tmp_path))
    env.pop("UNVME_STATE_DIR")  # the demo picks a temporary one itself
    start = time.monotonic()
    r = subprocess.run(["bash", str(REPO / "scripts" / "demo.sh")], env=env, capture_output=True,
                       text=True, timeout=60)
    took = time.monotonic() - start
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the data read back is identical" in r.stdout
    assert "Invalid Command Opcode" in r.stdout + r.stderr
    assert r.stdout.count("ns per I/O (process CPU time") == 2
    assert "were ever written" not in r.stdout + r.stderr  # filled before it is read
    assert took < 30, f"demo took {took:.1f} s"
    # it cleaned up after itself and left the user's state alone
    assert list(tmp_path.glob("unvme-demo.*")) == []
    assert not (tmp_path / "home" / ".local").exists()
