"""The examples in README.md and docs/*.md run as written.

Every ```python block runs in a fresh process in a scratch folder; a block that says where its data
comes from (a ``# ... written by: likewise datasets ...`` or ``as above (likewise datasets ...)``
comment) gets that command run first, so the comment is true too. Shell blocks marked
``<!-- docs-test ... -->`` on the line above run with ``bash -e`` (the ``likewise`` on PATH is this
environment's). A script block that reads ``sys.argv`` runs with the arguments the text gives it,
scaled down (``DOC_ARGS``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
WRITTEN_BY = re.compile(r"(?:written by: |as above \()(likewise datasets [^\n#)]+)")
# script blocks run with smaller arguments than the measured run the text quotes (same code path)
DOC_ARGS = {"evaluate.md": ["3000", "16"]}


def _blocks() -> list[tuple[str, int, str, str, bool]]:
    """(file, line, language, code, marked) of every fenced block."""
    out = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if m and m.group(1):
                start, lang = i, m.group(1)
                j = i + 1
                while j < len(lines) and not lines[j].startswith("```"):
                    j += 1
                marked = start > 0 and "docs-test" in lines[start - 1]
                out.append((path.name, start + 1, lang, "\n".join(lines[i + 1 : j]) + "\n", marked))
                i = j
            i += 1
    return out


BLOCKS = _blocks()
PYTHON = [b for b in BLOCKS if b[2] == "python"]
SHELL = [b for b in BLOCKS if b[2] in ("sh", "bash") and b[4]]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env["MPLBACKEND"] = "Agg"
    return env


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    res = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, (
        f"{what} failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    )


def test_the_docs_have_examples_to_check() -> None:
    assert len(PYTHON) >= 6 and len(SHELL) >= 1


@pytest.mark.parametrize("doc,line,lang,code,marked", PYTHON, ids=[f"{b[0]}:{b[1]}" for b in PYTHON])
def test_python_example_runs(doc: str, line: int, lang: str, code: str, marked: bool, tmp_path: Path) -> None:
    if "import torch" in code:
        pytest.importorskip("torch")
    if "gensim" in code:
        pytest.importorskip("gensim")
    if "import scipy" in code:
        pytest.importorskip("scipy")  # not a dependency of likewise: implicit's users have it
    for cmd in WRITTEN_BY.findall(code):
        _run(cmd.split(), tmp_path, f"{doc}:{line} data: {cmd}")
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    _run([sys.executable, str(script), *DOC_ARGS.get(doc, [])], tmp_path, f"{doc}:{line}")


@pytest.mark.parametrize("doc,line,lang,code,marked", SHELL, ids=[f"{b[0]}:{b[1]}" for b in SHELL])
def test_marked_shell_example_runs(
    doc: str, line: int, lang: str, code: str, marked: bool, tmp_path: Path
) -> None:
    _run(["bash", "-e", "-c", code], tmp_path, f"{doc}:{line}")
