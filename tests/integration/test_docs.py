# SPDX-License-Identifier: BSD-3-Clause
"""Docs are tests: every fenced block of README.md, docs/*.md and the man page sources runs
here as the page shows it (commands, transcripts with their output, C and Python programs,
configuration files loaded by the tool they configure), or carries a marker saying why it
cannot run on this machine (doc_blocks.py has the marker language, doc_runner.py how a page
runs). The blocks are read from the pages at test time, so a page cannot drift from what
runs. `python3 tests/integration/doc_blocks.py --not-run` lists the blocks that are not run.
"""
import re
import subprocess

import pytest

from conftest import TOOL, build_dir
from doc_blocks import MarkerError, blocks, pages
from doc_runner import output_matches, run_page, split_transcript

def generated_sections(page):
    """For an unvme man page source: the command sections the build writes into it."""
    m = re.fullmatch(r"tools/unvme/man/unvme(?:-(\w+))?\.1\.scd", page)
    if not m:
        return None
    group = m.group(1) or "unvme"
    p = subprocess.run([str(TOOL), "--man-scdoc", group], capture_output=True, text=True,
                       env={"UNVME_QUIET": "1"})
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize("page", pages())
def test_page(page, tmp_path):
    bs = blocks(page, generated_sections(page))
    if not bs:
        return  # a page without blocks has nothing to run
    run_page(page, bs, build_dir(), tmp_path)


def test_every_block_is_classified():
    """Every block is run or says why not; markers parse (a typo is an error, not a skip)."""
    for page in pages():
        for b in blocks(page):
            assert b.kind != "unclassified", f"{b.where}: ```{b.lang} block without a marker"


def test_marker_errors_are_reported():
    from doc_blocks import blocks_of_text
    with pytest.raises(MarkerError, match="needs a reason"):
        blocks_of_text("<!-- doc-test: not run: -->\n```\nx\n```\n", "p.md")
    with pytest.raises(MarkerError, match="unknown doc-test directive"):
        blocks_of_text("<!-- doc-test: nto run: because -->\n```\nx\n```\n", "p.md")
    b = blocks_of_text("<!-- doc-test: not run: needs an NVMe SSD -->\n\n```sh\nx\n```\n",
                       "p.md")[0]
    assert b.kind == "not run" and b.marker["not run"] == "needs an NVMe SSD"


def test_transcript_parsing_and_matching():
    cmds = split_transcript("$ unvme batch x <<'EOF'\nread -s 0\nEOF\nout 1\n...\n$ echo $?\n1\n")
    assert cmds == [("unvme batch x <<'EOF'\nread -s 0\nEOF\n", ["out 1", "..."]),
                    ("echo $?\n", ["1"])]
    # stdout and stderr interleave in any order that keeps each stream's own
    assert output_matches(["a", "err", "b"], "a\nb\n", "err\n")
    assert output_matches(["err", "a", "b"], "a\nb\n", "err\n")
    assert not output_matches(["b", "a"], "a\nb\n", "")
    # "..." alone: any lines; inside a line: any text
    assert output_matches(["a", "...", "z"], "a\nb\nc\nz\n", "")
    assert output_matches(["x ... y"], "x 12:00 y\n", "")
    assert not output_matches(["a"], "a\nb\n", "")
    # a failure's stderr lines each shown, not covered by "..."
    assert output_matches(["...", "x"], "x\n", "oops\n")
    assert not output_matches(["...", "x"], "x\n", "oops\n", errors_shown=True)
    assert output_matches(["...", "unvme: ...: bad", "x"], "x\n", "unvme: r: bad\n",
                          errors_shown=True)


def test_rocksdb_examples_preload_the_plugin():
    """db_bench and ldb know `--fs_uri=blobfs...` only with the plugin preloaded; without it
    RocksDB ignores the unknown id and db_bench dies with SIGSEGV. Every example says so by
    preloading it, the short form `blobfs://ALIAS` included."""
    seen = 0
    for page in pages():
        for b in blocks(page):
            text = b.text.replace("\\\n", " ")
            for line in text.splitlines():
                if "--fs_uri" in line and re.search(r"\b(db_bench|ldb)\b", line):
                    seen += 1
                    assert re.search(r"LD_PRELOAD=\S*libblobfs_rocksdb\.so\s+(db_bench|ldb)\b",
                                     line), f"{b.where}: {line.strip()}"
    assert seen >= 5


SYNTHETIC = '''# A page

<!-- doc-test: file cfg.txt -->
```
hello from a file
```

```c
#include <stdio.h>
#include <unvme/unvme.h>
int main(void) { FILE *f = fopen("cfg.txt", "r"); char b[64]; fgets(b, sizeof(b), f);
                 printf("%s", b); return unvme_version()[0] ? 0 : 1; }
```

<!-- doc-test: output -->
```
hello from a file
```

```sh
export GREETING=hi
mkdir -p sub && cd sub
```

```
$ echo "$GREETING from $(basename $PWD)"
hi from sub
$ false
$ echo $?
1
```

<!-- doc-test: background until ready -->
```sh
echo ready; sleep 600
```

<!-- doc-test: device ids -->
```
emu://syn?ns=mem:16M     a memory namespace
```

```python
import os
print(os.environ["GREETING"])
```

<!-- doc-test: not run: a synthetic reason for the test -->
```
this is never run
```
'''


def test_the_runner_runs_what_a_page_shows(tmp_path):
    """The mechanism itself: every kind of block runs, state carries from block to block,
    failures are caught, background blocks and the page's processes are stopped."""
    from doc_blocks import blocks_of_text
    from doc_runner import DocFailure
    bs = blocks_of_text(SYNTHETIC, "synthetic.md")
    kinds = [b.kind for b in bs]
    assert kinds == ["file", "c", "output", "sh", "transcript", "background", "device ids",
                     "python", "not run"], kinds
    not_run = run_page("synthetic.md", bs, build_dir(), tmp_path / "ok")
    assert not_run == [(bs[-1].where, "a synthetic reason for the test")]
    # what must fail does (small pages: each failure on its own)
    bad = [
        "```\n$ echo hi\nho\n```\n",                        # output differs
        "```\n$ false\n```\n",                               # a failure the page hides
        "```\n$ ls /nonexistent\n...\n```\n",               # stderr swallowed by "..."
        "```sh\ntrue\nfalse\ntrue\n```\n",                   # a failing shell block
        "<!-- doc-test: device ids -->\n```\nemu://x?ns=mem:16Q\n```\n",
        "<!-- doc-test: file a.txt -->\n```\nx\n```\n",       # a file nobody uses
        "```json\n{}\n```\n",                                 # unclassified
        "<!-- doc-test: excerpt README.md -->\n```\nnot in the readme\n```\n",
        "<!-- doc-test: timeout 1 -->\n```sh\nsleep 30\n```\n",
    ]
    for i, text in enumerate(bad):
        with pytest.raises(DocFailure):
            run_page("bad.md", blocks_of_text(text, "bad.md"), build_dir(), tmp_path / f"b{i}")
