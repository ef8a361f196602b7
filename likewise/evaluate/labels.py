"""Does the space put like with like? kNN label accuracy and purity against known item labels.

* :func:`evaluate_labels` -- each labelled item's majority label among its ``k`` nearest labelled items,
  and the share of those neighbours carrying its own label, overall and per label.
* :func:`label_purity` -- the mean neighbour purity alone, over any items of the space.
* :func:`read_labels` -- an ``item<TAB>label`` file or a table, read as every keyed table is
  (:func:`likewise.readers.read_table_file`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..space.embeddings import Embeddings

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
    # restrict=len(emb) searches every item exactly, even when an approximate index is attached; plain
    # cosine: the vectors' own neighbours, as every peer's vectors are measured
    res = emb.similar(queries, k=k, restrict=len(emb), evidence=False)
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
    res = emb.similar(keys, k=k, restrict=ids, evidence=False)  # the vectors' own cosine, as a peer's
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


#: Names a label file's header line usually holds: a first line holding one of them is a header.
LABEL_COLUMNS = frozenset(
    {"item", "item_id", "items", "key", "id", "word", "product", "product_id", "sku"}
    | {"label", "labels", "department", "category", "class", "group", "cluster", "genre", "aisle"}
)


def read_labels(
    path: str | os.PathLike, *, item_col: str | None = None, label_col: str | None = None
) -> dict[str, str]:
    """Read item labels: ``item<TAB>label`` lines, or a CSV / TSV / Parquet / JSON Lines table.

    The file is read by the reader every keyed table has (:func:`likewise.readers.read_table_file`), so
    labels follow its rules: Parquet is told by its content, whatever the file's name; a text file's first
    line is a header when it is comma-separated (CSV has a header), has more than two fields, or names a
    column (``item_col``, ``label_col``, or a usual name: ``item``, ``product_id``, ``label``,
    ``department``, ...; see :data:`LABEL_COLUMNS`). Otherwise the file is ``item<TAB>label`` lines,
    taken as written (no quoting), blank lines and lines starting with ``#`` skipped.

    Parameters
    ----------
    path : str or path-like
        The labels file (optionally compressed: ``.gz``, ``.bz2``, ``.zst``).
    item_col, label_col : str, optional
        The table's columns of item keys and of labels; default the first and the second column (so
        ``products.csv`` of ``likewise datasets retail`` needs ``label_col="department"``).

    Returns
    -------
    dict of str to str
        Item key -> label; a key given twice keeps its last label. A row with no label (null or empty)
        is skipped.

    Raises
    ------
    InputError
        One line naming the file: it is missing, empty or unreadable; a line that is not two fields; a
        missing column (the message lists those there are); a column of structs, maps or bytes that are
        not UTF-8 (naming the column and its type); an item key that is null, empty, holds a line break
        or is too long (naming the data row, as for a log's keys); no labelled row at all.
    """
    from ..readers import HeaderRule, key_column, read_table_file, text_column

    named = {c for c in (item_col, label_col) if c is not None}
    rule = HeaderRule(LABEL_COLUMNS | named, plain_width=2)
    table, where, fmt = read_table_file(path, what="labels", header=rule, text=True)
    names = table.column_names
    if fmt == "lines" and len(names) != 2 and not named:
        raise InputError(
            f"labels file {where!r} is neither 'item<TAB>label' lines nor a table with a header: its first "
            f"line holds {len(names)} field(s)"
        )
    if len(names) < 2 and (item_col is None or label_col is None):
        raise InputError(f"labels table {where!r} has columns {names}: it needs an item and a label column")
    cols = [item_col or names[0], label_col or names[1]]
    for c in cols:
        if c not in names:
            raise InputError(f"labels table {where!r} has no column {c!r}; its columns are {names}")
    items = key_column(table, cols[0], where, need="every row needs an item key").to_pylist()
    labels = text_column(table.column(cols[1]), cols[1], where, kind="label column").to_pylist()
    out = {k: v for k, v in zip(items, labels, strict=True) if v}  # no label: an unlabelled item
    if not out:
        raise InputError(f"labels file {where!r} holds no 'item<TAB>label' line or labelled row")
    return out
