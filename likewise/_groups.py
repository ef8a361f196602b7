"""Colour groups of a column, one rule for every picture: the explorer's map and the PNG map.

A column is coloured by value when it has at most :data:`MAX_GROUPS` distinct values; with more, its
``MAX_GROUPS - 1`` most common values keep their colours and the rest share one group, ``other (N
values)`` (:func:`top_groups`). An id (``manufacturer_id``, a store number) is a name, not a quantity: it
is grouped by value and never cut into numeric bands or drawn on a gradient (:func:`id_like`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ._arrays import unique

__all__ = ["MAX_GROUPS", "OTHER_COLOUR", "PALETTE", "id_like", "is_other", "top_groups"]

#: Most colour groups a column is drawn in (one colour each, in :data:`PALETTE`'s order).
MAX_GROUPS = 40
#: One colour per group: matplotlib's tab20 (its ten strong colours, then their light pairs) and
#: tab20b, greys left out (grey is an item without a value, and "other").
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#31a354", "#bcbd22",
    "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#756bb1",
    "#dbdb8d", "#9edae5", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3", "#8ca252",
    "#bd9e39", "#ad494a", "#a55194", "#6b6ecf", "#b5cf6b", "#e7ba52", "#d6616b", "#ce6dbd", "#9c9ede",
    "#cedb9c", "#e7cb94", "#e7969c", "#de9ed6",
)  # fmt: skip
#: The colour of "other" (and of an item without a value).
OTHER_COLOUR = "#b0b0b0"
# "id", "manufacturer_id", "store-id", "Store ID", "SKU_ID" (not "paid", "grid"); and "storeId", "storeID"
_ID_NAME = re.compile(r"(?:^|[_\-\s.])id$", re.IGNORECASE)
_ID_CAMEL = re.compile(r"[a-z](?:Id|ID)$")


def id_like(name: str, numbers: np.ndarray | None = None) -> bool:
    """Whether a column names things rather than measures them: its name ends in ``id`` as a word
    (``id``, ``manufacturer_id``, ``store id``, ``storeId``), or its values are whole numbers nearly all
    different (at least 90 % of them distinct: a code per row, not an amount).

    Parameters
    ----------
    name : str
        The column's name.
    numbers : ndarray of float, optional
        Its values when it is numeric (NaN where missing).
    """
    if _ID_NAME.search(name) or _ID_CAMEL.search(name):
        return True
    if numbers is None:
        return False
    x = np.asarray(numbers, dtype=np.float64)
    x = x[np.isfinite(x)]
    if len(x) < 20 or not np.all(x == np.round(x)):
        return False
    return len(unique(x)) >= 0.9 * len(x)


def top_groups(values: Sequence[str | None], limit: int = MAX_GROUPS) -> list[str | None]:
    """``values`` with at most ``limit`` distinct groups: when there are more, the ``limit - 1`` most
    common keep their value (ties: the value first in sort order) and the others become ``other (N
    values)``. None stays None."""
    counts = Counter(v for v in values if v is not None)
    if len(counts) <= limit:
        return list(values)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    keep = {v for v, _ in ranked[: limit - 1]}
    other = f"other ({len(counts) - len(keep):,} values)"
    return [v if v is None or v in keep else other for v in values]


def is_other(group: str | None) -> bool:
    """Whether ``group`` is the "other" group of :func:`top_groups`."""
    return group is not None and group.startswith("other (") and group.endswith(" values)")
