"""What every recommender of :mod:`likewise.baselines.counts` and :mod:`likewise.baselines.peers` checks and
shares.

Training sequences arrive as a Corpus or as a list of id arrays and are packed once
(:func:`as_sequences`); query contexts are checked against the table size (:func:`check_contexts`);
``k`` is clamped to the items a context leaves (:func:`check_k`); a row a model could not fill is
padded with the lowest unused ids (:func:`fill_unused`), so every recommender returns a rectangle of
distinct ids that never holds a context item.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._arrays import unique
from ..errors import InputError, ItemIndexError

__all__ = ["as_sequences", "check_contexts", "check_k", "check_training_ids", "fill_unused"]


def as_sequences(train: Any) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64, offsets int64) from a Corpus or a sequence of id arrays.

    Sequence ``s`` is ``ids[offsets[s]:offsets[s + 1]]``.
    """
    if hasattr(train, "ids") and hasattr(train, "offsets"):
        return np.asarray(train.ids, dtype=np.int64), np.asarray(train.offsets, dtype=np.int64)
    seqs = [np.asarray(s, dtype=np.int64).reshape(-1) for s in train]
    lens = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    ids = np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int64)
    return ids, offsets


def check_training_ids(ids: np.ndarray, n_items: Any) -> int:
    """``n_items`` as an int, after checking it is >= 1 and that every training id lies in ``[0, n_items)``.

    Raises
    ------
    InputError
        ``n_items`` is not an int >= 1.
    ItemIndexError
        Naming the first bad id and the table size.
    """
    if not isinstance(n_items, int | np.integer) or isinstance(n_items, bool) or n_items < 1:
        raise InputError(f"n_items == {n_items!r}, must be an int >= 1")
    if ids.size and (ids.min() < 0 or ids.max() >= n_items):
        bad = int(ids.min() if ids.min() < 0 else ids.max())
        raise ItemIndexError(bad, int(n_items), what="training item id")
    return int(n_items)


def check_contexts(contexts: Sequence[np.ndarray], n_items: int) -> list[np.ndarray]:
    """Contexts as sorted unique int64 id arrays, each id checked against the table size.

    Raises
    ------
    ItemIndexError
        A context id outside ``[0, n_items)``.
    """
    out = []
    for c in contexts:
        arr = unique(np.asarray(c, dtype=np.int64).reshape(-1))
        if arr.size and (arr[0] < 0 or arr[-1] >= n_items):
            bad = int(arr[0] if arr[0] < 0 else arr[-1])
            raise ItemIndexError(bad, n_items, what="context item id")
        out.append(arr)
    return out


def check_k(k: Any, n_items: int, contexts: list[np.ndarray]) -> int:
    """``k`` clamped to the items left once the largest context is excluded.

    Raises
    ------
    InputError
        ``k`` is not an int >= 1.
    """
    if not isinstance(k, int | np.integer) or isinstance(k, bool) or k < 1:
        raise InputError(f"k == {k!r}, must be an int >= 1")
    largest = max((len(c) for c in contexts), default=0)
    return int(min(k, n_items - largest))


def fill_unused(ids: np.ndarray, filled: np.ndarray, contexts: Sequence[np.ndarray], row0: int = 0) -> None:
    """Pad each row of ``ids`` past ``filled[r]`` with the lowest ids neither in its context nor chosen.

    Parameters
    ----------
    ids : ndarray of int64, shape (b, k)
        Modified in place; ``ids[r, :filled[r]]`` are kept.
    filled : ndarray of int, shape (b,)
        How many leading slots of each row a model filled.
    contexts : sequence of ndarray of int64
        All contexts; rows of ``ids`` are contexts ``row0 .. row0 + b``. ``k`` must leave enough ids.
    """
    k = ids.shape[1]
    for r in np.flatnonzero(np.asarray(filled) < k).tolist():
        taken = set(ids[r, : filled[r]].tolist()) | set(np.asarray(contexts[row0 + r]).tolist())
        c, j = int(filled[r]), 0
        while c < k:
            if j not in taken:
                ids[r, c] = j
                c += 1
            j += 1
