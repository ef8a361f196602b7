"""Every pointer works: a name that an error message or a page tells the user to call exists after a plain
``import likewise``, and every option of every command says what it does."""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"likewise(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# Dotted words that are not Python names: file and format tags, a request header, Parquet metadata keys,
# and the placeholder ``X`` of "likewise.evaluate.X is the public path".
NOT_NAMES = {
    "likewise.embeddings",  # the format tag of a saved space's manifest
    "likewise.nexttoken",  # the format tag of a saved next-token model
    "likewise.split",  # the format tag of a split folder
    "likewise.sql",  # the file `likewise export --format pgvector` writes
    "likewise.head_as_get",  # a scope key of the service's HEAD handling
    "likewise.fingerprint",  # Parquet metadata keys of to_arrow()
    "likewise.what",
}


def pointed_names() -> set[str]:
    """``likewise.x.y`` named in the string literals of the package (error messages, hints, docstrings)
    and in README.md and docs/*.md."""
    found: set[str] = set()
    for path in (ROOT / "likewise").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found |= set(NAME.findall(node.value))
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found |= set(NAME.findall(page.read_text(encoding="utf-8")))
    return {n for n in found if n not in NOT_NAMES and not n.endswith(".X")}


WALK = """
import importlib, inspect, json, sys
import likewise
bad = []
for name in json.loads(sys.argv[1]):
    obj = likewise
    for part in name.split(".")[1:]:
        if inspect.isclass(obj) and part in getattr(obj, "__dataclass_fields__", {}):
            break  # a field of a dataclass's instances (ItemAttributes.spec)
        try:
            obj = getattr(obj, part)
        except AttributeError:
            bad.append(name)
            break
print(json.dumps(bad))
"""


def test_every_name_the_messages_and_pages_point_to_exists_after_import_likewise():
    names = sorted(pointed_names())
    must = {
        "likewise.evaluate.evaluate_analogies",  # gensim's evaluate_word_analogies points here
        "likewise.data.formats.read_word2vec",  # gensim's load_word2vec_format points here
        "likewise.retail.train_from_log",  # docs/retail.md, docs/architecture.md
    }
    assert must <= set(names)
    run = subprocess.run([sys.executable, "-c", WALK, json.dumps(names)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []


def test_import_likewise_alone_loads_no_extra():
    code = "import sys, likewise; print([m for m in ('torch', 'fastapi', 'matplotlib') if m in sys.modules])"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def _actions(parser: argparse.ArgumentParser, path: list[str]):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, [*path, name])
        elif not isinstance(action, argparse._HelpAction):
            yield " ".join(path), action


def test_every_option_of_every_command_has_help():
    from likewise.cli import build_parser

    actions = list(_actions(build_parser(), ["likewise"]))
    assert len(actions) > 300
    bare = [
        f"{cmd} {'/'.join(a.option_strings) or a.dest}" for cmd, a in actions if not (a.help or "").strip()
    ]
    assert bare == []
    train = {o for cmd, a in actions if cmd == "likewise train" for o in a.option_strings}
    assert {"--half-life-days", "--popularity-power", "--name-col"} <= train
