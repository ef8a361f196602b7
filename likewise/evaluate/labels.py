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


_TABLE_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl"}


def read_labels(
    path: str | os.PathLike, *, item_col: str | None = None, label_col: str | None = None
) -> dict[str, str]:
    """Read item labels: ``item<TAB>label`` lines, or a CSV / TSV / Parquet / JSONL table with a header.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``, ``.parquet`` or ``.jsonl`` file is a table with named columns; so is any other text
        file (``.tsv``, ``.txt``) whose first line has more than two tab-separated fields, or when a
        column is named. Otherwise the file is ``item<TAB>label`` lines (blank lines and ``#`` comments
        skipped), as before.
    item_col, label_col : str, optional
        The table's columns of item keys and of labels; default the first and the second column (so
        ``products.csv`` of ``likewise datasets retail`` needs ``label_col="department"``).

    Returns
    -------
    dict of str to str
        Item key -> label; a key given twice keeps its last label. Rows with an empty item or label
        are skipped.

    Raises
    ------
    InputError
        A line that is not two tab-separated fields, a missing column (the message lists those there
        are), or a file with no label at all.
    """
    p = os.fspath(path)
    fmt = _TABLE_SUFFIXES.get(os.path.splitext(p)[1].lower())
    if fmt is None:
        with open(p, encoding="utf-8") as f:
            first = next((ln for ln in f if ln.strip() and not ln.startswith("#")), "")
        if item_col is not None or label_col is not None or first.count("\t") > 1:
            fmt = "tsv"
    out = _read_label_lines(p) if fmt is None else _read_label_table(p, fmt, item_col, label_col)
    if not out:
        raise InputError(f"labels file {p!r} holds no 'item<TAB>label' line or labelled row")
    return out


def _read_label_lines(path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise InputError(f"{path!r} line {no}: expected 'item<TAB>label', got {line[:80]!r}")
            out[parts[0]] = parts[1]
    return out


def _read_label_table(path: str, fmt: str, item_col: str | None, label_col: str | None) -> dict[str, str]:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.json as pjson
    import pyarrow.parquet as pq

    try:
        if fmt == "parquet":
            table = pq.read_table(path)
        elif fmt == "jsonl":
            table = pjson.read_json(path)
        else:
            opts = pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
            conv = pcsv.ConvertOptions(strings_can_be_null=False)
            table = pcsv.read_csv(path, parse_options=opts, convert_options=conv)
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"cannot read labels {path!r} as {fmt}: {str(e).splitlines()[0]}") from None
    names = table.column_names
    if len(names) < 2 and (item_col is None or label_col is None):
        raise InputError(f"labels table {path!r} has columns {names}: it needs an item and a label column")
    cols = [item_col or names[0], label_col or names[1]]
    for c in cols:
        if c not in names:
            raise InputError(f"labels table {path!r} has no column {c!r}; its columns are {names}")
    items, labels = (table.column(c).cast(pa.string()).to_pylist() for c in cols)
    return {k: v for k, v in zip(items, labels, strict=True) if k and v}
