"""Nearest-neighbour indexes: one interface, two implementations.

- :class:`ExactIndex` -- brute force (the oracle);
- :class:`HnswIndex` -- an HNSW graph (hnswlib), built by :func:`build_index`, saved beside a model
  (``MODEL/index/``) and attached on load by :func:`attach_saved_index`.

Both have ``fingerprint``, ``size``, ``dim``, ``info``, ``loaded``, ``warm()`` and
``search(unit queries [n, D], k) -> ids [n, k]``; :func:`ann_top_k` turns any of them into the
exclusion-aware, exactly rescored answers of :meth:`Embeddings.similar`, and :func:`measure_recall`
compares one against exact search. ``AnnIndex`` is the former name of :class:`HnswIndex`.
:func:`scan_top_k` answers exact single queries over large spaces through an int8 scan (:mod:`.scan`).
:func:`searcher_for` makes the one choice between them for a space: a :class:`Searcher` (exact, int8
scan or through an attached index, :mod:`.searcher`) that every query of the space calls.
"""

from __future__ import annotations

from .._lazy import lazy_names
from ._query import NeighbourIndex, Space, ann_top_k, check_index_for, measure_recall
from .exact import ExactIndex
from .hnsw import (
    INDEX_DIR,
    HnswIndex,
    IndexParams,
    attach_saved_index,
    build_index,
    check_index_target,
    index_folder,
)
from .scan import SCAN_MIN_ROWS, ScanTable, scan_top_k
from .searcher import ExactSearcher, IndexSearcher, ScanSearcher, Searcher, searcher_for

AnnIndex = HnswIndex

__all__ = [
    "INDEX_DIR",
    "SCAN_MIN_ROWS",
    "AnnIndex",
    "ExactIndex",
    "ExactSearcher",
    "HnswIndex",
    "IndexParams",
    "IndexSearcher",
    "NeighbourIndex",
    "ScanSearcher",
    "ScanTable",
    "Searcher",
    "Space",
    "ann_top_k",
    "attach_saved_index",
    "build_index",
    "check_index_for",
    "check_index_target",
    "index_folder",
    "measure_recall",
    "scan_top_k",
    "searcher_for",
]


__getattr__ = lazy_names(__name__)  # a submodule on first use, as after `import likewise`
