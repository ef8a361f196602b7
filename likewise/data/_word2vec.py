"""Writing word2vec files: the one writer behind :func:`likewise.data.formats.write_word2vec` and
:meth:`Embeddings.save_word2vec_format <likewise.space.embeddings.Embeddings.save_word2vec_format>`.

It sits below the space (it takes any object with the attributes of a space, as
:func:`likewise.space.store.save` does), so that the space's own gensim-named method and the formats module
share it. The layouts, and why the files are byte-identical to gensim's, are described in
:mod:`likewise.data.formats`, which also reads them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from .._fileio import atomic_file
from .._targets import check_output_file
from ..errors import InputError

__all__ = ["clean_keys", "write_word2vec"]


def clean_keys(keys: list[str], replace_space: str | None, what: str) -> list[str]:
    """``keys`` as a file of ``what`` can hold them: whitespace refused, or replaced by ``replace_space``.

    Raises
    ------
    InputError
        An empty key; a key with whitespace and no ``replace_space``; a ``replace_space`` that is itself
        whitespace, or that makes two keys equal.
    """
    out = []
    for k in keys:
        if k == "" or any(ch.isspace() for ch in k):
            if replace_space is None or k == "":
                raise InputError(
                    f"key {k!r} is empty or contains whitespace, which {what} cannot hold: rename it, or "
                    "pass replace_space='_' (--replace-space _) to replace each whitespace character"
                )
            k = "".join(replace_space if ch.isspace() else ch for ch in k)
            if any(ch.isspace() for ch in k):
                raise InputError(f"replace_space == {replace_space!r} must not contain whitespace")
        out.append(k)
    if replace_space is not None and len(set(out)) != len(out):
        dup = next(k for k in out if out.count(k) > 1)
        raise InputError(f"replacing whitespace by {replace_space!r} makes two keys equal to {dup!r}")
    return out


def write_word2vec(
    emb: Any,
    path: str | os.PathLike,
    *,
    binary: bool = False,
    replace_space: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Write ``emb`` in word2vec text or binary format (byte-identical to gensim's writer).

    Parameters
    ----------
    emb : Embeddings
        Or any object with its ``keys``, ``counts``, ``vectors`` and ``dim``.
    path : path
        Written to a temporary file beside it, then renamed.
    binary : bool
    replace_space : str, optional
        Replace each whitespace character inside a key with this; default: refuse such keys.
    overwrite : bool
        Replace an existing file at ``path`` (refused otherwise, as ``--overwrite`` is on the command
        line; gensim's ``save_word2vec_format`` name replaces it, as gensim does).

    Returns
    -------
    Path
        The file written.
    """
    check_output_file(path, overwrite=overwrite, flag="overwrite=True")
    keys = clean_keys(emb.keys, replace_space, "the word2vec format")
    order = np.argsort(-np.asarray(emb.counts, dtype=np.int64), kind="stable")
    vecs = emb.vectors
    final = Path(path)
    with atomic_file(final, "wb") as f:
        f.write(f"{len(keys)} {emb.dim}\n".encode())
        step = 4096
        for s in range(0, len(order), step):
            rows = order[s : s + step]
            block = np.asarray(vecs[rows], dtype="<f4")
            if binary:
                f.write(
                    b"".join(keys[i].encode() + b" " + v.tobytes() for i, v in zip(rows, block, strict=True))
                )
            else:
                f.write(
                    "".join(
                        f"{keys[i]} {' '.join(str(x) for x in v)}\n" for i, v in zip(rows, block, strict=True)
                    ).encode()
                )
    return final
