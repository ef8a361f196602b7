"""The examples in README.md and docs/*.md run as written and print what the pages show.

Every ```python block runs in a fresh process in a scratch folder; a block that says where its data
comes from (a ``# ... written by: likewise datasets ...`` or ``as above (likewise datasets ...)``
comment) gets that command run first, so the comment is true too. A script block that reads
``sys.argv`` runs with the arguments the text gives it, scaled down (``DOC_ARGS``).

Shell blocks and transcripts marked ``<!-- docs-test -->`` on the line above run in page order, all
the marked blocks of one page in one scratch folder, as a reader following the page would (a later
block uses the files an earlier one wrote); the ``likewise`` on PATH is this environment's:

- a marked ```sh / ```bash block runs with ``bash -e``; its output is not compared (the page shows none);
- a marked ```console block is a **transcript**, the one way a page shows output: a line starting
  ``$ `` is a command (a line ending in ``\\``, or an open quote, continues it on the next), and
  the lines after it, up to the next ``$ ``, are what it printed, stdout and stderr together. Each
  command runs (in one ``bash`` per block, so variables carry over) and its output must match:

  * text word for word, with runs of spaces counting as one (table columns may widen), and a table's
    rule (``---  -----``) matching a rule of the same number of columns;
  * a number matches when the printed value rounds to the digits shown (``0.208`` matches a printed
    ``0.20812``; ``183,077`` matches ``183077``);
  * what depends on the machine matches anything: a number in a line whose first word is
    ``seconds`` (the summaries' timing row), and a number followed by a unit of time or memory
    (``2.05 s``, ``12 ms``, ``357 MiB``);
  * ``...`` left out: a line that is only ``...`` stands for any number of lines, ``...`` inside a
    line for any text (a long path);
  * a command whose shown output holds ``error:`` must fail (exit status 1), every other must succeed.

Unmarked ```console / ```text blocks are quotes of measured runs (benchmarks over minutes, a GPU, a
server) and name the command that produced them; ``test_pages_that_walk_through_commands_check_them``
keeps the walk-through pages (README, retail, evaluate) from quoting: every transcript there is marked.
The whole file takes about three minutes on the 2-core machine.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
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
# pages that walk a reader through commands: every transcript on them is run and compared
WALKTHROUGHS = ("README.md", "retail.md", "evaluate.md")

NUMBER = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?"
# a number standing alone (not part of a key such as tent-00005 or lw1-2351...)
SHOWN_NUMBER = re.compile(rf"(?<![\w.\-]){NUMBER}(?![\w.]|\.\d)")
RULE = re.compile(r"-+(?:\s+-+)*")
UNIT = re.compile(r"\s?(?:s|ms|µs|us|min|h|KiB|MiB|GiB|KB|MB|GB)\b")


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
SHELL = [b for b in BLOCKS if b[2] in ("sh", "bash", "console") and b[4]]
PAGES = sorted({b[0] for b in SHELL}, key=[p.name for p in DOCS].index)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env["MPLBACKEND"] = "Agg"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as a terminal shows them
    env["COLUMNS"] = "100"  # argparse wraps --help as the pages show it
    return env


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    res = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, (
        f"{what} failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    )


# --- transcripts ----------------------------------------------------------------------------------


def transcript(code: str) -> list[tuple[str, list[str]]]:
    """The (command, shown output lines) of a ```console block."""
    steps: list[tuple[str, list[str]]] = []
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd = [line[2:]]
            while (cmd[-1].endswith("\\") or not _complete("\n".join(cmd))) and i + 1 < len(lines):
                i += 1
                cmd.append(lines[i])
            steps.append(("\n".join(cmd), []))
        elif steps:
            steps[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"output before the first command: {line!r}")
        i += 1
    return [(cmd, _trim(shown)) for cmd, shown in steps]


def _complete(cmd: str) -> bool:
    """Whether a command's quotes are closed (a ``python -c "`` command goes on over lines)."""
    try:
        shlex.split(cmd, comments=True)
    except ValueError:
        return False
    return True


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _line_pattern(shown: str) -> tuple[re.Pattern[str], list[tuple[str, bool]]]:
    """A regex for one shown line, and each captured number with whether it is compared."""
    shown = shown.strip()
    machine = shown.split()[:1] == ["seconds"]
    parts, numbers, pos = [], [], 0
    for m in SHOWN_NUMBER.finditer(shown):
        parts.append(_text_pattern(shown[pos : m.start()]))
        parts.append(f"({NUMBER})")
        numbers.append((m.group(), not (machine or UNIT.match(shown, m.end()))))
        pos = m.end()
    parts.append(_text_pattern(shown[pos:]))
    return re.compile("".join(parts)), numbers


def _text_pattern(text: str) -> str:
    out = []
    for piece in re.split(r"(\.\.\.|\s+)", text):
        if piece == "...":
            out.append(".*?")
        elif piece and piece.isspace():
            out.append(r"\s+")
        else:
            out.append(re.escape(piece))
    return "".join(out)


def _rounds_to(printed: str, shown: str) -> bool:
    digits = len(shown.split(".")[1].split("e")[0]) if "." in shown else 0
    a, b = float(printed.replace(",", "")), float(shown.replace(",", ""))
    if "e" in shown.lower():
        return abs(a - b) <= abs(b) * 10.0 ** (-digits) / 2 * (1 + 1e-9)
    return abs(a - b) <= 10.0 ** (-digits) / 2 * (1 + 1e-9) + 1e-12


def line_matches(shown: str, printed: str) -> bool:
    """Whether one printed line is what the page shows (the rules of the module docstring)."""
    if shown.strip() == "" or printed.strip() == "":
        return shown.strip() == printed.strip()
    if RULE.fullmatch(shown.strip()):  # a table's rule is as wide as its widest cell
        return RULE.fullmatch(printed.strip()) is not None and len(shown.split()) == len(printed.split())
    pattern, numbers = _line_pattern(shown)
    m = pattern.fullmatch(printed.strip())
    if m is None:
        return False
    pairs = zip(m.groups(), numbers, strict=True)
    return all(not check or _rounds_to(got, want) for got, (want, check) in pairs)


def output_matches(shown: list[str], printed: list[str]) -> bool:
    """Whether the printed lines are the shown ones, a line of ``...`` standing for any lines."""
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(shown):
                ok = j == len(printed)
            elif shown[i].strip() == "...":
                ok = go(i + 1, j) or (j < len(printed) and go(i, j + 1))
            else:
                ok = j < len(printed) and line_matches(shown[i], printed[j]) and go(i + 1, j + 1)
            memo[i, j] = ok
        return memo[i, j]

    return go(0, 0)


def _run_transcript(code: str, cwd: Path, where: str) -> None:
    steps = transcript(code)
    sep = "\x1edocs-test-rc="
    script = ["exec 2>&1"]
    for cmd, _ in steps:
        script += [cmd, f'printf "\\n{sep}%d\\n" $?']
    res = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600
    )
    pieces = res.stdout.split(sep)
    for n, (cmd, shown) in enumerate(steps):
        assert n + 1 < len(pieces), f"{where}: the block stopped before `{cmd}`:\n{res.stdout[-3000:]}"
        rc = int(pieces[n + 1].split("\n", 1)[0])
        body = pieces[n].split("\n", 1)[1] if n else pieces[n]
        printed = _trim(body[:-1].splitlines() if body.endswith("\n") else body.splitlines())
        failing = any("error:" in line for line in shown)
        assert (rc != 0) == failing, (
            f"{where}: `{cmd}` exited {rc}"
            + (" (the page shows an error)" if failing else "")
            + "\n"
            + "\n".join(printed[-40:])
        )
        if not output_matches(shown, printed):
            diff = "\n".join(difflib.unified_diff(shown, printed, "page", "printed", lineterm=""))
            pytest.fail(f"{where}: `{cmd}` printed other than the page shows:\n{diff}")


# --- tests ----------------------------------------------------------------------------------------


def test_the_docs_have_examples_to_check() -> None:
    assert len(PYTHON) >= 6 and len(SHELL) >= 1
    assert sum(b[2] == "console" for b in SHELL) >= 10


def test_pages_that_walk_through_commands_check_them() -> None:
    quoted = [f"{b[0]}:{b[1]}" for b in BLOCKS if b[0] in WALKTHROUGHS and b[2] == "console" and not b[4]]
    assert not quoted, f"transcripts not run by the docs test (mark them <!-- docs-test -->): {quoted}"


#: How the work was done, which a user's page or the code's comments do not need: issue numbers and
#: sessions (the developers' guide keeps ``grep -rniE "issue [0-9]+|previous session"`` empty).
HISTORY = re.compile(r"issue [0-9]+|previous session", re.IGNORECASE)


def test_the_pages_and_the_code_speak_to_users_not_of_the_work() -> None:
    """README.md, docs/ and the package say what the tool does and how well, never the history of the work."""
    files = [
        *DOCS,
        *(p for p in sorted((ROOT / "likewise").rglob("*")) if p.is_file() and "__pycache__" not in p.parts),
    ]
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a picture or other binary file
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not found, "history of the work in user-facing text:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "shown,printed,ok",
    [
        ("1  sleeping-bag-00009  0.2081", "1  sleeping-bag-00009   0.20812", True),
        ("1  sleeping-bag-00009  0.2081", "1  sleeping-bag-00009  0.2085", False),
        ("1  sleeping-bag-00009  0.2081", "1  sleeping-bag-00007  0.2081", False),
        ("lines        183,077", "lines  183077", True),
        ("seconds      0.2311", "seconds      3.9", True),
        ("generated in 2.05 s (peak 357 MiB)", "generated in 9.1 s (peak 12 MiB)", True),
        ("wrote 200 customers", "wrote 150 customers", False),
        ("skipped (.../questions-words.txt)", "skipped (/a/b/questions-words.txt)", True),
        ("loss -0.0588", "loss -0.05877", True),
        ("----  -----", "--------------  ---", True),
        ("----  -----", "----", False),
    ],
)
def test_a_shown_line_matches_by_the_documented_rules(shown: str, printed: str, ok: bool) -> None:
    assert line_matches(shown, printed) is ok


def test_an_elided_run_of_lines_matches_any_lines() -> None:
    assert output_matches(["a", "...", "z"], ["a", "b", "c", "z"])
    assert output_matches(["a", "...", "z"], ["a", "z"])
    assert not output_matches(["a", "...", "z"], ["a", "b"])
    assert not output_matches(["a", "b"], ["a", "b", "c"])


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


@pytest.mark.parametrize("doc", PAGES)
def test_marked_blocks_run_and_print_what_the_page_shows(doc: str, tmp_path: Path) -> None:
    for page, line, lang, code, _ in (b for b in SHELL if b[0] == doc):
        if "gensim" in code:
            pytest.importorskip("gensim")
        if lang == "console":
            _run_transcript(code, tmp_path, f"{page}:{line}")
        else:
            _run(["bash", "-e", "-c", code], tmp_path, f"{page}:{line}")


def test_install_lines_work_from_a_clone() -> None:
    """likewise is not on PyPI: an install line names the clone (``.``) and extras it declares."""
    import tomllib

    from likewise.errors import MissingDependencyError

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    texts = {p.name: p.read_text(encoding="utf-8") for p in DOCS}
    texts["MissingDependencyError"] = str(MissingDependencyError("torch", "torch", "the torch backend"))
    for where, text in texts.items():
        assert "install 'likewise[" not in text and "install likewise" not in text, where
        for named in re.findall(r"pip install (?:-e )?'\.\[([\w,]+)\]'", text):
            assert set(named.split(",")) <= extras, f"{where}: unknown extra in .[{named}]"
