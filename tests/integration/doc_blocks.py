# SPDX-License-Identifier: BSD-3-Clause
"""The fenced blocks of the documentation, with what each is (docs are tests: test_docs.py).

Pages: README.md, docs/*.md and the hand-written man page sources (tools/**/*.scd, with the
command sections `unvme --man-scdoc` writes into them at build time). Every fenced block is
one of:

- a shell block (```sh, ``` with no language, ```console): run with bash -e -o pipefail;
- a transcript: a block whose first line starts with "$ ": each "$ " line (with its
  here-document or backslash continuation) is a command, the lines after it until the next
  "$ " are its output, checked line by line ("..." alone stands for any lines, "..." inside
  a line for any text); a command that fails must show it: every line it wrote on stderr
  is on the page, or the next command is "echo $?";
- a C program (```c): compiled against the built library and run;
- a Python program (```python): run with the python3 the page's shell has;
- or what its marker says. A marker is an HTML comment on the line before the fence
  (invisible when rendered), or in a man page an scdoc comment ("; doc-test: ..."):

    <!-- doc-test: not run: REASON -->     not runnable here; the reason is required
    <!-- doc-test: file NAME -->           saved as NAME in the page's directory; a later
                                           block of the page must name it
    <!-- doc-test: output -->              the output of the block before it
    <!-- doc-test: excerpt PATH -->        text of the file PATH (repository-relative), which
                                           a block of the page runs
    <!-- doc-test: background until TEXT --> a shell block started in the background; the
                                           next block runs once TEXT is in its output, and it
                                           is stopped when the page is done
    <!-- doc-test: device ids -->          one device id per line (first word): each opened
    <!-- doc-test: any order -->           a transcript whose output lines come in any
                                           order (threads print as they go); a failing
                                           command then needs a next "echo $?"
    <!-- doc-test: exit N -->              a C program that exits N
    <!-- doc-test: timeout S -->           seconds before the block counts as hung (60)

  Directives combine with ";", except "not run:", whose reason is the rest of the marker (a
  block is run or it is not).

  python3 doc_blocks.py [--not-run] [PAGE...]   lists the blocks (or those not run, with why)
"""
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+)(?P<info>[^`]*)$")
MD_MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(?P<body>.*?)\s*-->\s*$")
SCD_MARKER = re.compile(r"^;\s*doc-test:\s*(?P<body>.*?)\s*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<tag>[A-Za-z_][A-Za-z_0-9]*)\1")

RUN_LANGS = {"", "sh", "bash", "shell", "console"}


class MarkerError(ValueError):
    pass


@dataclass
class Block:
    page: str          # repository-relative path
    line: int          # line of the opening fence, 1-based
    lang: str
    text: str          # the content, dedented to the fence's indentation
    marker: dict = field(default_factory=dict)

    @property
    def where(self):
        return f"{self.page}:{self.line}"

    @property
    def kind(self):
        m = self.marker
        for k in ("not run", "file", "output", "excerpt", "device ids"):
            if k in m:
                return k
        if "background" in m:
            return "background"
        if self.lang == "c":
            return "c"
        if self.lang == "python":
            return "python"
        if self.lang in RUN_LANGS:
            first = next((ln for ln in self.text.splitlines() if ln.strip()), "")
            return "transcript" if first.startswith("$ ") else "sh"
        return "unclassified"


def parse_marker(body, where):
    """The directives of one marker, as a dict."""
    out = {}
    if body.startswith("not run:"):  # the rest is the reason, ";" included
        reason = body[len("not run:"):].strip()
        if len(reason) < 10:
            raise MarkerError(f"{where}: 'not run' needs a reason, got {reason!r}")
        return {"not run": reason}
    for part in [p.strip() for p in body.split(";") if p.strip()]:
        if part.startswith("not run"):
            raise MarkerError(f"{where}: a block that is not run has no other directive")
        elif part.startswith("file "):
            out["file"] = part[5:].strip()
        elif part == "output":
            out["output"] = True
        elif part.startswith("excerpt "):
            out["excerpt"] = part[8:].strip()
        elif part.startswith("background"):
            m = re.fullmatch(r"background until (.+)", part)
            if not m:
                raise MarkerError(f"{where}: write 'background until TEXT'")
            out["background"] = m.group(1).strip().strip('"')
        elif part == "device ids":
            out["device ids"] = True
        elif part == "any order":
            out["any order"] = True
        elif re.fullmatch(r"exit \d+", part):
            out["exit"] = int(part.split()[1])
        elif re.fullmatch(r"timeout \d+", part):
            out["timeout"] = int(part.split()[1])
        else:
            raise MarkerError(f"{where}: unknown doc-test directive {part!r}")
    return out


def _dedent(lines, indent):
    out = []
    for ln in lines:
        out.append(ln[len(indent):] if ln.startswith(indent) else ln.lstrip())
    return "\n".join(out) + ("\n" if out else "")


def blocks_of_text(text, page, scd=False):
    lines = text.split("\n")
    found = []
    i = 0
    marker_re = SCD_MARKER if scd else MD_MARKER
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence) and
                                      lines[j].strip().strip("`") == ""):
            j += 1
        if j >= len(lines):
            raise MarkerError(f"{page}:{i + 1}: fence never closed")
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = {}
        if k >= 0:
            mm = marker_re.match(lines[k])
            if mm:
                marker = parse_marker(mm.group("body"), f"{page}:{k + 1}")
        found.append(Block(page, i + 1, info.split()[0] if info else "",
                           _dedent(lines[i + 1:j], indent), marker))
        i = j + 1
    return found


def man_example_blocks(text, page):
    """Examples inside the prose of generated command sections: an indented block after a
    line ending with 'Example:' or 'Example, ...:' in a fenced details block."""
    out = []
    for b in blocks_of_text(text, page, scd=True):
        ls = b.text.splitlines()
        for n, ln in enumerate(ls):
            if re.search(r"\bExample\b[^:]*:\s*$", ln):
                body = []
                for x in ls[n + 1:]:
                    if not x.startswith("  "):
                        break
                    body.append(x[2:])
                if body:
                    out.append(Block(page, b.line, "", "\n".join(body) + "\n", {}))
    return out


def pages():
    """Every page whose blocks are tests, repository-relative."""
    ps = ["README.md"] + sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))
    ps += sorted(str(p.relative_to(REPO)) for p in (REPO / "tools").rglob("*.scd"))
    return ps


def blocks(page, generated=None):
    """The blocks of one page. generated: for an scdoc page with an @COMMANDS@ line, the text
    the tool writes there (its command sections)."""
    text = (REPO / page).read_text()
    scd = page.endswith(".scd")
    bs = blocks_of_text(text, page, scd=scd)
    if scd and generated:
        bs += man_example_blocks(generated, page + " (generated command sections)")
    return bs


def main(argv):
    only_not_run = "--not-run" in argv
    names = [a for a in argv if not a.startswith("--")] or pages()
    for p in names:
        for b in blocks(p):
            if only_not_run and b.kind != "not run":
                continue
            extra = f": {b.marker['not run']}" if b.kind == "not run" else ""
            first = b.text.strip().splitlines()[0][:70] if b.text.strip() else ""
            print(f"{b.where}\t{b.kind}{extra}\t{first}")


if __name__ == "__main__":
    main(sys.argv[1:])
