"""A reproducible train/test split of sequences, and the folder it is saved in.

:func:`split_sequences` holds out a seeded share of the sequences (one item of each hidden);
:func:`save_split` / :func:`load_split` write and read it, so ``likewise split`` and ``eval --holdout``
(and :mod:`likewise.training.tune`) score the same cases.

Split folder format (version 1)
-------------------------------
``train.txt``
    One training sequence per line, item keys separated by one space -- or by the input's ``delimiter``
    when one was given (then ``likewise train train.txt --delimiter D`` reads it).
``test.tsv``
    A header line ``context<TAB>target``, then one test case per line: the visible items (separated as in
    ``train.txt``, in their original order) and the hidden item.
``split.json``
    ``{"format": "likewise.split", "version": 1, "mode", "seed", "test_fraction", "delimiter", "n_train",
    "n_test", "n_short", "input", "files": {name: {"sha256", "bytes"}}}``.

A key that could not be read back -- one holding whitespace (or, with a delimiter, the delimiter, a tab
or a line break), or an empty one -- is refused when the split is written.

"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .._fileio import atomic_folder, file_entry, file_sha256, finite_json, write_text
from .._readfile import field as manifest_field
from .._readfile import inside, open_regular, read_json
from ..errors import CorruptModelError, InputError

__all__ = ["SPLIT_FORMAT", "SPLIT_VERSION", "Split", "load_split", "save_split", "split_sequences"]

SPLIT_FORMAT = "likewise.split"
SPLIT_VERSION = 1


@dataclass
class Split:
    """A train/test split of sequences (see the module docstring for the folder format).

    Attributes
    ----------
    train : list of list of str
    contexts : list of list of str
        Visible items of each test case.
    targets : list of str
        The hidden item of each test case.
    mode : {"basket", "sequence"}
    seed : int
    test_fraction : float
    n_short : int
        Sequences too short to hide an item from (they stay in the training part).
    input : dict
        Description of where the data came from.
    delimiter : str or None
        Separator of keys in the files; None: one space (read back as any whitespace).
    """

    train: list[list[str]]
    contexts: list[list[str]]
    targets: list[str]
    mode: str = "basket"
    seed: int = 0
    test_fraction: float = 0.2
    n_short: int = 0
    input: dict[str, Any] = field(default_factory=dict)
    delimiter: str | None = None


def split_sequences(
    sequences: Iterable[Sequence[str]],
    *,
    mode: Literal["basket", "sequence"] = "basket",
    test_fraction: float = 0.2,
    seed: int = 0,
) -> Split:
    """Hold out a seeded random share of the sequences, hiding one item of each.

    In basket mode a test basket is first reduced to its distinct items (order kept) and one of them,
    chosen at random, is hidden; in sequence mode the last item is hidden and the items before it are
    the context. Only sequences with at least two (distinct, in basket mode) items can be test cases;
    the others stay in the training part. Test sequences are removed from the training part whole.

    Parameters
    ----------
    sequences : iterable of sequence of str
    mode : {"basket", "sequence"}
    test_fraction : float
        Share of the eligible sequences held out, in (0, 1).
    seed : int

    Returns
    -------
    Split
    """
    if mode not in ("basket", "sequence"):
        raise InputError(f"mode == {mode!r}, must be 'basket' or 'sequence'")
    if not 0 < test_fraction < 1:
        raise InputError(f"test_fraction == {test_fraction!r}, must be in (0, 1)")
    seqs = [list(s) for s in sequences]
    if mode == "basket":
        views = [list(dict.fromkeys(s)) for s in seqs]
    else:
        views = seqs
    eligible = np.flatnonzero(np.fromiter((len(v) >= 2 for v in views), dtype=bool, count=len(views)))
    rng = np.random.default_rng(seed)
    n_test = int(round(test_fraction * len(eligible)))
    if n_test == 0:
        raise InputError(
            f"no test case: {len(eligible)} of {len(seqs)} sequences have 2 or more items and "
            f"test_fraction={test_fraction} of them rounds to 0"
        )
    test = np.sort(rng.choice(eligible, size=n_test, replace=False))
    is_test = np.zeros(len(seqs), dtype=bool)
    is_test[test] = True
    contexts, targets = [], []
    hide = rng.random(n_test)
    for j, i in enumerate(test.tolist()):
        v = views[i]
        p = int(hide[j] * len(v)) if mode == "basket" else len(v) - 1
        targets.append(v[p])
        contexts.append(v[:p] + v[p + 1 :])
    train = [s for s, t in zip(seqs, is_test.tolist(), strict=True) if not t]
    return Split(train, contexts, targets, mode, seed, test_fraction, len(seqs) - len(eligible))


def delimiter_for(sequences: Sequence[Sequence[str]], given: str | None = None) -> str | None:
    """The separator a split's files need so every key reads back: ``given`` if set, else None (one
    space) while no key holds whitespace, else the first of ``,`` ``;`` ``|`` that no key holds (keys such
    as ``red tent`` from a log then survive, and ``likewise train --delimiter`` reads them)."""
    if given:
        return given
    keys = {k for seq in sequences for k in seq}
    if not any(ch.isspace() for k in keys for ch in k):
        return None
    for sep in (",", ";", "|"):
        if not any(sep in k for k in keys):
            return sep
    raise InputError("item keys hold whitespace and each of ',', ';' and '|': no separator can write them")


def _key_checker(delimiter: str | None):
    def check(key: str) -> str:
        if delimiter is None:
            bad = not key or any(ch.isspace() for ch in key)
            why = "whitespace (keys are separated by spaces; read the input with --delimiter to keep them)"
        else:
            bad = not key or key != key.strip() or any(ch in key for ch in (delimiter, "\t", "\n", "\r"))
            why = f"the delimiter {delimiter!r}, a tab, a line break or edge spaces"
        if bad:
            raise InputError(
                f"item key {key!r} is empty or holds {why}: it could not be read back from a split"
            )
        return key

    return check


def save_split(split: Split, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write a split folder (see the module docstring) through :func:`~likewise._fileio.atomic_folder`.

    Parameters
    ----------
    split : Split
    path : str or path-like
        The folder to write.
    overwrite : bool
        Replace an existing split folder at ``path``.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        ``path`` exists and ``overwrite`` is False; ``path`` exists and is not a split folder (never
        replaced); or a key could not be read back. Nothing is left at ``path`` or beside it then.
    """
    final = Path(path)
    # Checked here rather than by _targets.check_target: a split's manifest is split.json, and these
    # messages are the ones the CLI has always shown.
    if final.exists():
        if not overwrite:
            raise InputError(
                f"{str(final)!r} already exists: pass overwrite=True (--overwrite) to replace it"
            )
        if not (final / "split.json").is_file():
            raise InputError(f"{str(final)!r} exists and is not a split folder: refusing to replace it")
    check = _key_checker(split.delimiter)
    sep = split.delimiter or " "
    with atomic_folder(final) as tmp:
        with open(tmp / "train.txt", "w", encoding="utf-8", newline="\n") as f:
            for s in split.train:
                if s:
                    f.write(sep.join(check(k) for k in s) + "\n")
        with open(tmp / "test.tsv", "w", encoding="utf-8", newline="\n") as f:
            f.write("context\ttarget\n")
            for c, t in zip(split.contexts, split.targets, strict=True):
                f.write(sep.join(check(k) for k in c) + "\t" + check(t) + "\n")
        manifest = {
            "format": SPLIT_FORMAT,
            "version": SPLIT_VERSION,
            "mode": split.mode,
            "seed": split.seed,
            "test_fraction": split.test_fraction,
            "delimiter": split.delimiter,
            "n_train": sum(1 for s in split.train if s),
            "n_test": len(split.targets),
            "n_short": split.n_short,
            "input": split.input,
            "files": {n: file_entry(tmp / n) for n in ("train.txt", "test.tsv")},
        }
        write_text(
            tmp / "split.json", finite_json(manifest, "split.json", indent=2, ensure_ascii=False) + "\n"
        )
    return final


def load_split(path: str | os.PathLike, *, verify: bool = True) -> Split:
    """Read a split folder written by :func:`save_split`.

    Parameters
    ----------
    path : str or path-like
        The split folder.
    verify : bool
        Check each file against the sha256 in ``split.json``.

    Returns
    -------
    Split

    Raises
    ------
    CorruptModelError
        No ``split.json``, one that is not valid JSON (or over the manifest size limit) or of another
        format or version, a listed file missing, or (with ``verify``) a checksum that does not match.
    """
    p = Path(path)
    man_path = p / "split.json"
    if not os.path.lexists(man_path):
        raise CorruptModelError(f"{str(p)!r} is not a split folder: split.json is missing")
    # read_json bounds the bytes and the depth parsed, refuses a FIFO, and turns bad JSON or bad UTF-8
    # into CorruptModelError; every field is then checked before it is used.
    man = read_json(man_path, what="a split folder")
    if not isinstance(man, dict) or man.get("format") != SPLIT_FORMAT or man.get("version") != SPLIT_VERSION:
        got = (man.get("format"), man.get("version")) if isinstance(man, dict) else (None, None)
        raise CorruptModelError(
            f"{str(man_path)!r} has format {got[0]!r} version {got[1]!r}; "
            f"expected {SPLIT_FORMAT!r} version {SPLIT_VERSION}"
        )
    files = manifest_field(man, "files", dict, man_path)
    for name in ("train.txt", "test.tsv"):
        if not isinstance(files.get(name), dict):
            raise CorruptModelError(f"{str(man_path)!r} does not list {name}")
    for name, info in files.items():
        f = inside(p, name, manifest=man_path)  # "../x" or a symlink out of the folder is refused
        if not f.is_file():
            raise CorruptModelError(f"split file {str(f)!r} is missing")
        if verify and (not isinstance(info, dict) or file_sha256(f) != info.get("sha256")):
            raise CorruptModelError(f"split file {str(f)!r} fails its sha256 checksum (changed or truncated)")
    sep = man.get("delimiter")
    if sep is not None and (not isinstance(sep, str) or sep == ""):
        raise CorruptModelError(f"{str(man_path)!r}: delimiter {sep!r} must be a non-empty string or null")
    mode = manifest_field(man, "mode", str, man_path)
    seed = manifest_field(man, "seed", int, man_path)
    test_fraction = manifest_field(man, "test_fraction", (int, float), man_path)
    n_short = manifest_field(man, "n_short", int, man_path)
    source = manifest_field(man, "input", dict, man_path)

    def keys(text: str) -> list[str]:
        return text.split(sep) if text else []

    try:
        with open_regular(p / "train.txt") as raw:
            train = [keys(line.rstrip("\n")) for line in _lines(raw) if line.strip()]
        contexts, targets = [], []
        with open_regular(p / "test.tsv") as raw:
            for n, line in enumerate(_lines(raw), 1):
                cells = line.rstrip("\n").split("\t")
                if n == 1:
                    continue  # the header
                if len(cells) != 2:
                    raise CorruptModelError(
                        f"{str(p / 'test.tsv')!r} line {n}: {len(cells)} tab-separated cells, expected 2"
                    )
                contexts.append(keys(cells[0]))
                targets.append(cells[1])
    except UnicodeDecodeError as e:
        raise CorruptModelError(f"a file of the split {str(p)!r} is not UTF-8 ({e.reason})") from None
    return Split(train, contexts, targets, mode, seed, test_fraction, n_short, source, sep)


def _lines(raw: Any) -> Any:
    """The lines of a binary file as text, as ``save_split`` wrote them (UTF-8, ``\\n`` only)."""
    return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
