# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures the BlobFS integration tests share (imported by their modules)."""
import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def shm(env):
    """A directory in memory for namespace images and lock files: syncs cost nothing there,
    whatever the disk under /tmp is doing."""
    d = Path(tempfile.mkdtemp(prefix="blobfs-", dir="/dev/shm"))
    env["UNVME_LOCK_DIR"] = str(d)
    env["UNVME_QUIET"] = "1"
    yield d
    shutil.rmtree(d, ignore_errors=True)
