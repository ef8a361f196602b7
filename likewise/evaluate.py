"""Measures of how good a space is. Numpy only; reports and baselines build on these."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .embeddings import Embeddings
from .errors import InputError

__all__ = ["label_purity"]


def label_purity(
    emb: Embeddings, labels: Mapping[str, str], k: int = 10, items: Sequence[str] | None = None
) -> float:
    """Mean share of each item's ``k`` nearest neighbours that carry the item's own label.

    Parameters
    ----------
    emb : Embeddings
        The space to judge.
    labels : mapping of str to str
        Item key -> label (e.g. department, planted group). Every queried item and neighbour needs one.
    k : int
        Neighbours per item.
    items : sequence of str, optional
        Items to query (default: all of ``emb``'s items).

    Returns
    -------
    float
        In ``[0, 1]``; chance level is about the share of the largest label.
    """
    queries = list(emb.keys if items is None else items)
    if not queries:
        raise InputError("label_purity needs at least one item to query")
    missing = next((q for q in queries if q not in labels), None)
    if missing is not None:
        raise InputError(f"item {missing!r} has no label: every queried item needs one")
    res = emb.similar(queries, k=k)
    own = np.array([labels[q] for q in queries], dtype=object)
    try:
        nb = np.array([[labels[x] for x in row] for row in res.keys], dtype=object)
    except KeyError as e:
        raise InputError(f"neighbour {e.args[0]!r} has no label: every item needs one") from None
    return float((nb == own[:, None]).mean())
