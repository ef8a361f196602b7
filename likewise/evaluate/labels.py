"""Does the space put like with like? kNN label accuracy and purity against known item labels.

* :func:`evaluate_labels` -- each labelled item's majority label among its ``k`` nearest labelled items,
  and the share of those neighbours carrying its own label, overall and per label.
* :func:`label_purity` -- the mean neighbour purity alone, over any items of the space.
* :func:`read_labels` -- an ``item<TAB>label`` file.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..embeddings import Embeddings
from ..errors import InputError

__all__ = ["evaluate_labels", "label_purity", "read_labels"]


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
    # restrict=len(emb) searches every item exactly, even when an approximate index is attached.
    res = emb.similar(queries, k=k, restrict=len(emb))
    own = np.array([labels[q] for q in queries], dtype=object)
    try:
        nb = np.array([[labels[x] for x in row] for row in res.keys], dtype=object)
    except KeyError as e:
        raise InputError(f"neighbour {e.args[0]!r} has no label: every item needs one") from None
    return float((nb == own[:, None]).mean())


def evaluate_labels(emb: Embeddings, labels: Mapping[str, str], k: int = 10) -> dict[str, Any]:
    """kNN majority-label accuracy and label purity over the labelled items of the space.

    Each labelled item of ``emb`` queries its ``k`` nearest labelled items (unlabelled items are not
    candidates). Its predicted label is the most common label among them, a tie going to the label of
    the nearer neighbour. Purity is the share of neighbours with the item's own label.

    Parameters
    ----------
    emb : Embeddings
        The space to judge.
    labels : mapping of str to str
        Item key -> label; keys outside the space are counted in ``n_unknown`` and otherwise ignored.
    k : int
        Neighbours per item.

    Returns
    -------
    dict
        ``{"k", "n", "n_unknown", "accuracy", "purity", "per_label": {label: {"n", "accuracy",
        "purity"}}}``; ``n_unknown`` counts labelled keys absent from the space.
    """
    known = [key for key in labels if key in emb.vocab]
    if len(known) < 2:
        raise InputError(f"only {len(known)} labelled item(s) are in the space: need at least 2")
    ids = np.array(sorted(emb.vocab.id(key) for key in known), dtype=np.int64)
    keys = [emb.keys[i] for i in ids.tolist()]
    res = emb.similar(ids.tolist(), k=k, restrict=ids)
    per: dict[str, list[tuple[bool, float]]] = {}
    for key, row in zip(keys, res.keys, strict=True):
        own = labels[key]
        nb = [labels[x] for x in row]
        tally = Counter(nb)
        best = max(tally.values())
        predicted = next(lab for lab in nb if tally[lab] == best)  # nearest among the tied labels
        per.setdefault(own, []).append((predicted == own, sum(x == own for x in nb) / len(nb)))
    all_hits = [h for v in per.values() for h in v]
    return {
        "k": int(res.ids.shape[1]),
        "n": len(all_hits),
        "n_unknown": len(labels) - len(known),
        "accuracy": float(np.mean([a for a, _ in all_hits])),
        "purity": float(np.mean([p for _, p in all_hits])),
        "per_label": {
            lab: {
                "n": len(v),
                "accuracy": float(np.mean([a for a, _ in v])),
                "purity": float(np.mean([p for _, p in v])),
            }
            for lab, v in sorted(per.items())
        },
    }


def read_labels(path: str | os.PathLike) -> dict[str, str]:
    """Read ``item<TAB>label`` lines (blank lines and ``#`` comments skipped).

    Parameters
    ----------
    path : str or path-like
        A UTF-8 text file.

    Returns
    -------
    dict of str to str
        Item key -> label; a key given twice keeps its last label.

    Raises
    ------
    InputError
        A line that is not two tab-separated fields, or a file with no such line.
    """
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise InputError(f"{str(path)!r} line {no}: expected 'item<TAB>label', got {line[:80]!r}")
            out[parts[0]] = parts[1]
    if not out:
        raise InputError(f"labels file {str(path)!r} holds no 'item<TAB>label' line")
    return out
