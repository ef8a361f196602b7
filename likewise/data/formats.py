"""Vectors in and out: word2vec text and binary (gensim, the C tool, fastText ``.vec``), and the
TensorFlow Embedding Projector's TSV files.

word2vec layouts, as gensim 4's ``save_word2vec_format`` writes them (our files are byte-identical):

* text: a header ``"V D\\n"``, then per item ``key v1 v2 ... vD\\n`` with each float32 written as Python
  prints it (``str(np.float32(x))``, the shortest text that reads back to the same float32);
* binary: the same header, then per item ``key`` + one space + ``D`` little-endian float32 (no newline;
  the C tool adds one after each vector, which the reader accepts).

Rows are written by descending count (a stable sort, so equal counts keep id order). A key holding
whitespace would make the file unreadable, so writing one is refused unless ``replace_space`` names a
replacement. fastText's ``.vec`` is the text format with a space before the newline; it reads as is.

:func:`write_word2vec` is defined in :mod:`likewise.data._word2vec`, below the space, so that
:meth:`Embeddings.save_word2vec_format <likewise.space.embeddings.Embeddings.save_word2vec_format>` writes
through the same function; it is re-exported here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._fileio import atomic_folder, write_text
from .._readfile import open_regular
from ..errors import CorruptModelError, InputError, shown
from ..space.embeddings import Embeddings
from ._word2vec import write_word2vec
from .vocab import Vocab

__all__ = ["export_projector", "read_word2vec", "write_word2vec"]

_MAX_HEADER = 1024  # bytes of the "V D" line read; a real one is a few dozen


def read_word2vec(
    path: str | os.PathLike,
    *,
    binary: bool | None = None,
    what: str = "item",
    limit: int | None = None,
    unicode_errors: str = "strict",
) -> Embeddings:
    """Read a word2vec text or binary file (gensim, the C tool, fastText ``.vec``) as a space.

    Parameters
    ----------
    path : path
    binary : bool, optional
        Default: guessed (binary when a row's bytes after the first key do not decode as text).
    what : str
        What a key names, for messages.
    limit : int, optional
        Read only the first ``limit`` vectors.
    unicode_errors : {"strict", "replace", "ignore"}
        What to do with a key that is not valid UTF-8 (the C tool may cut a multi-byte character);
        ``"strict"`` raises :class:`CorruptModelError` naming the vector.

    Returns
    -------
    Embeddings
        Rows in file order; the file keeps no counts, so counts are ``V - row`` (the order gensim
        invents too), which keeps the file order as the frequency order. ``meta["source"]`` names the file.
    """
    if unicode_errors not in ("strict", "replace", "ignore"):
        raise InputError(f"unicode_errors == {unicode_errors!r}, must be 'strict', 'replace' or 'ignore'")
    p = Path(path)
    with open_regular(p) as f:
        header = f.readline(_MAX_HEADER)
        try:
            n, dim = (int(x) for x in header.split())
        except ValueError:
            raise CorruptModelError(f"{str(p)!r}: first line {header[:60]!r} is not a 'V D' header") from None
        if n < 0 or dim < 1:
            raise CorruptModelError(f"{str(p)!r}: header says {n} vectors of {dim} dims")
        if limit is not None:
            n = min(n, int(limit))
        body_start = f.tell()
        # The table is allocated from the header's claim: check the claim against the bytes that are
        # there first (a vector takes at least 2 bytes per value as text, 4 + a space as binary).
        body = os.fstat(f.fileno()).st_size - body_start
        if n * 2 * dim > body + 1:
            raise CorruptModelError(
                f"{str(p)!r}: the header says {n} vectors of {dim} dims, more than the {body} bytes after "
                "it can hold"
            )
        if binary is None:
            probe = f.read(4096)
            rest = probe.split(b" ", 1)[-1]
            try:
                rest.decode("utf-8")
                binary = False
            except UnicodeDecodeError as e:  # a character cut at the end of the probe is still text
                binary = e.start < len(rest) - 4 or len(probe) < 4096
            f.seek(body_start)
        keys: list[str] = []
        vecs = np.empty((n, dim), dtype=np.float32)
        if binary:
            if n * (4 * dim + 1) > body:
                raise CorruptModelError(
                    f"{str(p)!r}: the header says {n} binary vectors of {dim} dims, more than the {body} "
                    "bytes after it can hold"
                )
            data = f.read()
            pos = 0
            nbytes = 4 * dim
            for i in range(n):
                sp = data.find(b" ", pos)
                if sp < 0 or len(data) - sp - 1 < nbytes:
                    raise CorruptModelError(f"{str(p)!r}: unexpected end of file at vector {i} of {n}")
                keys.append(_decode(data[pos:sp], unicode_errors, p, i).lstrip("\n"))
                vecs[i] = np.frombuffer(data, dtype="<f4", count=dim, offset=sp + 1)
                pos = sp + 1 + nbytes
        else:
            for i in range(n):
                line = f.readline()
                if not line:
                    raise CorruptModelError(f"{str(p)!r}: unexpected end of file at vector {i} of {n}")
                parts = _decode(line.rstrip(), unicode_errors, p, i).split(" ")
                if len(parts) != dim + 1:
                    raise CorruptModelError(
                        f"{str(p)!r} line {i + 2}: {len(parts) - 1} values, the header says {dim}"
                    )
                keys.append(parts[0])
                try:
                    vecs[i] = np.array(parts[1:], dtype=np.float32)
                except ValueError as e:
                    raise CorruptModelError(f"{str(p)!r} line {i + 2}: {e}") from None
    # A key has one vector: gensim keeps the first of two and drops the second unsaid, which loses
    # data the file's writer meant (two rows for one key are a bug there, or a decoding that merged two)
    seen: dict[str, int] = {}
    for i, k in enumerate(keys):
        first = seen.setdefault(k, i)
        if first != i:
            where = (lambda j: f"vector {j + 1}") if binary else (lambda j: f"line {j + 2}")
            raise CorruptModelError(
                f"{str(p)!r}: key {shown(k)} at {where(i)} repeats the key at {where(first)}; a key has one "
                "vector: remove or rename one of them"
            )
    counts = np.arange(len(keys), 0, -1, dtype=np.int64)
    meta: dict[str, Any] = {"source": {"file": str(p), "format": "word2vec-binary" if binary else "word2vec"}}
    try:
        return Embeddings(vecs, Vocab(keys, counts, what=what), meta=meta)
    except InputError as e:  # a NaN or infinite value, an empty key: say which file
        raise CorruptModelError(f"{str(p)!r}: {e}") from None


def _decode(raw: bytes, errors: str, path: Path, i: int) -> str:
    try:
        return raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as e:
        raise CorruptModelError(
            f"{str(path)!r}: vector {i} has a key that is not UTF-8 ({e.reason} at byte {e.start}); "
            "pass unicode_errors='replace' (--unicode-errors replace) to read it anyway"
        ) from None


def export_projector(
    emb: Embeddings,
    folder: str | os.PathLike,
    *,
    labels: dict[str, str] | None = None,
    counts: bool = True,
    name: str = "likewise",
) -> Path:
    """Write files for the TensorFlow Embedding Projector (projector.tensorflow.org, "Load").

    Writes ``tensors.tsv`` (one row of tab-separated values per item), ``metadata.tsv`` (the item key,
    and when ``labels`` or ``counts`` add columns, a header row ``item<TAB>label<TAB>count`` first, as the
    projector expects for several columns) and ``projector_config.json`` naming both.

    Parameters
    ----------
    emb : Embeddings
    folder : path
        Created (written to a temporary folder beside it, then renamed); must not exist.
    labels : dict, optional
        Item -> label, a column (``""`` for unlabelled items).
    counts : bool
        Add the count column.
    name : str
        The tensor's name in the config.
    """
    final = Path(folder)
    if final.exists():
        raise InputError(f"{str(final)!r} already exists: choose a new folder for the projector files")
    for k in emb.keys + list((labels or {}).values()):
        if any(ch in k for ch in "\t\n\r"):
            raise InputError(f"key or label {k!r} contains a tab or newline, which a TSV cell cannot hold")
    with atomic_folder(final) as tmp:
        with open(tmp / "tensors.tsv", "w", encoding="utf-8", newline="\n") as f:
            for s in range(0, len(emb), 4096):
                block = np.asarray(emb.vectors[s : s + 4096], dtype=np.float32)
                f.write("".join("\t".join(str(x) for x in row) + "\n" for row in block))
        cols = ["item"] + (["label"] if labels is not None else []) + (["count"] if counts else [])
        with open(tmp / "metadata.tsv", "w", encoding="utf-8", newline="\n") as f:
            if len(cols) > 1:
                f.write("\t".join(cols) + "\n")
            for k, c in zip(emb.keys, emb.counts.tolist(), strict=True):
                row = [k] + ([labels.get(k, "")] if labels is not None else []) + ([str(c)] if counts else [])
                f.write("\t".join(row) + "\n")
        config = {
            "embeddings": [
                {
                    "tensorName": name,
                    "tensorShape": [len(emb), emb.dim],
                    "tensorPath": "tensors.tsv",
                    "metadataPath": "metadata.tsv",
                }
            ]
        }
        write_text(tmp / "projector_config.json", json.dumps(config, indent=2) + "\n")
    return final
