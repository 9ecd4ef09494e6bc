# SPDX-License-Identifier: BSD-3-Clause
"""Imported by every test here before unvme: the bindings come from the source tree (python/)
and use the built library ($UNVME_BUILD/libunvme.so, default build/), with private state and
run directories and the library's notices silenced (test_pip.py installs them with pip as a
user would). Not a conftest.py: tests/integration's conftest is imported as "conftest" by its
tests, and a second one run in the same pytest session would take its place."""
import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("UNVME_BUILD", "build"))
BUILD = BUILD if BUILD.is_absolute() else REPO / BUILD
LIB = BUILD / "libunvme.so"

os.environ["UNVME_LIB"] = str(LIB)
os.environ["UNVME_QUIET"] = "1"
os.environ["UNVME_STATE_DIR"] = tempfile.mkdtemp(prefix="unvme-py-")
os.environ.pop("UNVME_DEVICES", None)
os.environ["UNVME_CONFIG"] = os.path.join(os.environ["UNVME_STATE_DIR"], "devices.json")
# where processes sharing a device meet, this session's own: a named emulated device outlives
# the process that opened it (it runs in a device process), and one left by another session
# under the same name would hand these tests its data
os.environ["UNVME_RUN_DIR"] = tempfile.mkdtemp(prefix="unvme-pyrun-", dir="/tmp")
# its device processes end once their socket files are gone
atexit.register(shutil.rmtree, os.environ["UNVME_RUN_DIR"], ignore_errors=True)
sys.path.insert(0, str(REPO / "python"))
