# SPDX-License-Identifier: BSD-3-Clause
"""The tools' bad-input matrix (tests/badinput/tools_matrix.py, docs/reliability.md): every
case ends with its documented exit code and a message holding the expected words, and never
with a signal, a hang or a sanitizer report. The C API matrices (driver, KV SDK, JSON config)
run in the unit suites (meson test --suite badinput) and under ASan."""
import sys
from pathlib import Path

import pytest

from conftest import build_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "badinput"))
import tools_matrix  # noqa: E402

CASES = tools_matrix.cases(build_dir())
# the unvme tool of the ASan + UBSan build (make test-asan builds it first): no leak, no report
ASAN = build_dir().parent / "build-asan"
ASAN_CASES = tools_matrix.UNVME if (ASAN / "tools" / "unvme" / "unvme").exists() else []


@pytest.mark.parametrize("area,case,fn", CASES, ids=[f"{a}: {c[0]}" for a, c, _ in CASES])
def test_bad_input_is_answered_as_documented(area, case, fn, tmp_path):
    how, msg, ok = fn(build_dir(), case, tmp_path, tools_matrix.tool_env())
    assert ok, f"{area}: {case[0]}: {how}: {msg}"


@pytest.mark.parametrize("case", ASAN_CASES, ids=[c[0] for c in ASAN_CASES])
def test_bad_input_under_asan(case, tmp_path):
    how, msg, ok = tools_matrix.run_unvme(ASAN, case, tmp_path, tools_matrix.tool_env())
    assert ok, f"ASan build: {case[0]}: {how}: {msg}"


def test_the_matrix_catches_a_wrong_answer(tmp_path):
    # a case whose expectation is wrong must fail: the matrix checks something
    name, argv, rc, words = tools_matrix.UNVME[3]
    assert not tools_matrix.run_unvme(build_dir(), (name, argv, rc, "words it never prints"),
                                      tmp_path, tools_matrix.tool_env())[2]
    assert not tools_matrix.run_unvme(build_dir(), (name, argv, 0, words), tmp_path,
                                      tools_matrix.tool_env())[2]
