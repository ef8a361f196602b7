"""A customer's next-basket candidates and their named features, as a query and the fit both compute them.

Features are of three kinds:

* *the customer's own history* (:mod:`likewise.nextbasket.history`): bought before or not, the share of
  their baskets holding the product, its recency-weighted share, baskets since the last purchase and
  since it was due (the customer's usual gap between purchases of it), each of the counts also in bins;
* *similar customers* (:mod:`likewise.nextbasket.neighbours`), found two ways: by what they bought and by
  their vectors in the space; for each, the similarity-weighted recency-weighted share of baskets
  holding the product among the :data:`NEIGHBOURS` nearest;
* *the space*: the customer's affinity for it (``customer · context[j] + bias[j]``, what
  :func:`~likewise.retail.for_customer` ranks by) and its popularity.

Candidates are what the customer bought and each kind of evidence's best new products (:data:`CANDIDATES`
of each). :func:`features` computes the features as one float64 array whose columns are
:data:`FEATURES`, each by its name; everything that reads a feature reads it by name
(:data:`COLUMNS`), so a new feature is one name in :data:`FEATURES` and its one line in
:func:`features`. The fitted weights are for the names they were fitted on
(:meth:`likewise.nextbasket.model.NextBasketModel.check`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._arrays import unique
from ..errors import InputError
from ..space.customers import CustomerTable
from .model import NextBasketModel
from .neighbours import decay_total, history_neighbour_share, vector_neighbour_share

if TYPE_CHECKING:  # the space is only passed through
    from ..space.embeddings import Embeddings
    from ..space.itemtable import Types

__all__ = [
    "CANDIDATES",
    "COLUMNS",
    "FEATURES",
    "NEIGHBOURS",
    "PURCHASED",
    "SCORE_BLOCK",
    "FeatureColumns",
    "Profile",
    "affinities",
    "affinity",
    "allowed_rows",
    "candidates",
    "features",
    "log_popularity",
    "own_rule",
    "ranked",
    "scores",
]

# Bins (lower edge inclusive, upper exclusive) of baskets since the last purchase and of baskets holding
# the product: the log-odds of a repeat are far from linear in either.
_LAST_BINS = (0, 1, 2, 3, 5, 8, 13, 21, 10**9)
_COUNT_BINS = (1, 2, 3, 5, 8, 13, 10**9)
# Baskets since the last purchase over the customer's usual gap between purchases of the product
# (bought at least twice): below 1 a repeat is early, near 1 due, far past 1 the product may be dropped.
_DUE_BINS = (0.0, 0.5, 0.8, 1.25, 2.0, 4.0, np.inf)


def _bins(prefix: str, edges: tuple) -> list[tuple[str, float, float]]:
    """Each bin's feature name and edges."""
    return [(f"{prefix}_{a}_{b}", a, b) for a, b in zip(edges[:-1], edges[1:], strict=True)]


#: Feature names, in the order of the fitted weights (and of the columns :func:`features` computes).
FEATURES = (
    "bought",
    "share",
    "sqrt_share",
    "decay",
    "recent",
    "log_baskets",
    "share_x_log_history",
    "neighbours",
    "sqrt_neighbours",
    "history_neighbours",
    "sqrt_history_neighbours",
    "affinity",
    "log_popularity",
    "new_x_log_popularity",
    "new_x_affinity",
    "share_x_recent",
    *(name for name, _, _ in _bins("last", _LAST_BINS)),
    *(name for name, _, _ in _bins("baskets", _COUNT_BINS)),
    *(name for name, _, _ in _bins("due", _DUE_BINS)),
)
#: Similar customers whose purchases are evidence.
NEIGHBOURS = 100
#: The type a next basket offers in a typed space unless asked for others (what an order log's items are).
PURCHASED = "product"
#: New candidates taken from the neighbours' products and from the affinity, each.
CANDIDATES = 50
#: Rows of features scored at a time (three copies of a large features array were 0.9 GiB).
SCORE_BLOCK = 1 << 16


class FeatureColumns:
    """The column of each named feature in a features array (one row per candidate).

    Parameters
    ----------
    names : iterable of str
        The columns' names, in order (distinct).
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        self._at = {name: i for i, name in enumerate(self.names)}
        if len(self._at) != len(self.names):
            raise InputError(
                f"feature names repeat: {sorted(n for n in self._at if self.names.count(n) > 1)}"
            )

    def __getitem__(self, name: str) -> int:
        """The column of feature ``name``."""
        return self._at[name]

    def __len__(self) -> int:
        return len(self.names)

    def of(self, x: np.ndarray, name: str) -> np.ndarray:
        """Column ``name`` of the features array ``x``."""
        return x[:, self._at[name]]

    def stack(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """The named columns as one float64 array [n, len(names)], in the order of :attr:`names`."""
        if set(columns) != set(self.names):
            extra, lacking = sorted(set(columns) - set(self.names)), sorted(set(self.names) - set(columns))
            raise InputError(
                f"computed features differ from their names: {extra} not named, {lacking} lacking"
            )
        return np.column_stack([columns[name] for name in self.names]).astype(np.float64)


#: The columns of :data:`FEATURES`.
COLUMNS = FeatureColumns(FEATURES)


@dataclass(frozen=True)
class Profile:
    """One customer's history, as arrays: the bought products (sorted) and their counts
    (:mod:`likewise.nextbasket.history`), and the customer's baskets."""

    items: np.ndarray
    baskets: np.ndarray
    last: np.ndarray
    first: np.ndarray
    decay: np.ndarray
    n: int
    #: Products bought but left out by a history cap: never offered as new.
    dropped: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def find(self, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which candidates the customer bought, and where they are in the profile's arrays."""
        if len(self.items) == 0:
            return np.zeros(len(cand), dtype=bool), np.zeros(len(cand), dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.items, cand), len(self.items) - 1)
        return self.items[pos] == cand, pos


def affinity(emb: Embeddings, vector: np.ndarray) -> np.ndarray:
    """The customer's affinity for every product (cosine without a context table)."""
    return affinities(emb, np.asarray(vector)[None, :])[0]


def affinities(emb: Embeddings, vectors: np.ndarray) -> np.ndarray:
    """:func:`affinity` of each row of ``vectors`` at once: float32 [len(vectors), V] (a matrix product
    over a block of customers reads the products' table once, where one per customer read it each time)."""
    if emb.context is not None:
        q = np.hstack([np.asarray(vectors, dtype=np.float32), np.ones((len(vectors), 1), np.float32)])
        return q @ emb.affinity_table.T
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return (vectors / norms).astype(np.float32) @ emb.normed.T


def log_popularity(emb: Embeddings) -> np.ndarray:
    """``log(1 + count)`` of every product."""
    return np.log1p(np.asarray(emb.counts, dtype=np.float64))


def allowed_rows(emb: Embeddings, types: Types = None) -> np.ndarray:
    """The rows a next basket may hold: those of ``types``; by default every row of an untyped space
    but attribute tokens, and in a typed space the :data:`PURCHASED` items."""
    table = getattr(emb, "types", None)
    if table is None or types is not None:
        restrict = emb.typed_restrict(None, types)  # refuses types in an untyped space, unknown types
        if restrict is None:
            return np.ones(len(emb), dtype=bool)
        allowed = np.zeros(len(emb), dtype=bool)
        allowed[np.asarray(restrict, dtype=np.int64)] = True
        return allowed
    shown = [t for t in table.names if t not in table.hidden]
    if len(shown) <= 1:
        return table.mask()
    if PURCHASED not in shown:
        raise InputError(
            f"this space's items are of types {', '.join(map(repr, shown))} and none is {PURCHASED!r}: "
            "name the types a next basket may offer (types=, --type)"
        )
    return table.mask([PURCHASED])


def candidates(
    profile: Profile, evidence: list[np.ndarray], explore: bool, allowed: np.ndarray, shares: int = 0
) -> np.ndarray:
    """Candidate product ids: the bought ones (unless exploring), each kind of evidence's best new ones.

    The first ``shares`` kinds of evidence are shares of baskets (>= 0, mostly 0): their best come from
    the products with a share above 0 alone (a product no neighbour bought has no such evidence), which
    spares a selection over the whole catalogue per customer.
    """
    new = []
    every = bool(allowed.all())
    bought = profile.items if not len(profile.dropped) else np.concatenate([profile.items, profile.dropped])
    for n, score in enumerate(evidence):
        if n < shares:
            idx = np.flatnonzero(score > 0)
            idx = idx[allowed[idx] & ~np.isin(idx, bought)]
            if len(idx) > CANDIDATES:
                idx = idx[np.argpartition(-score[idx], CANDIDATES - 1)[:CANDIDATES]]
            new.append(idx)
            continue
        s = np.array(score) if every else np.where(allowed, score, -np.inf)
        s[bought] = -np.inf
        m = min(CANDIDATES, int(np.count_nonzero(np.isfinite(s))))
        if m > 0:
            top = np.argpartition(-s, m - 1)[:m]
            new.append(top[np.isfinite(s[top])])
    new_ids = unique(np.concatenate(new)) if new else np.zeros(0, np.int64)
    if explore:
        return new_ids
    own = profile.items[allowed[profile.items]]
    return np.concatenate([own, new_ids[~np.isin(new_ids, own)]])


def features(
    profile: Profile,
    cand: np.ndarray,
    neigh: np.ndarray,
    hneigh: np.ndarray,
    aff: np.ndarray,
    log_pop: np.ndarray,
) -> np.ndarray:
    """The :data:`FEATURES` of each candidate, float64 [len(cand), len(FEATURES)], each column computed
    by its name (:data:`COLUMNS`)."""
    bought, pos = profile.find(cand)

    def own(values: np.ndarray, fill: float) -> np.ndarray:
        """The profile's ``values`` for the bought candidates, ``fill`` for the others."""
        return np.where(bought, values[pos], fill) if len(values) else np.full(len(cand), fill)

    n = max(profile.n, 1)
    baskets = own(profile.baskets, 0).astype(np.float64)
    share = baskets / n
    last = own(profile.last, -1)
    first = own(profile.first, -1)
    recent = np.where(bought, 1.0 / (1.0 + np.maximum(last, 0)), 0.0)
    nb, hn, lp = neigh[cand], hneigh[cand], log_pop[cand]
    a = aff[cand].astype(np.float64)
    new = ~bought
    gap = np.where(baskets >= 2, (first - last) / np.maximum(baskets - 1, 1), np.inf)
    due = np.where(baskets >= 2, last / np.maximum(gap, 1e-9), -1.0)
    col = {
        "bought": bought,
        "share": share,
        "sqrt_share": np.sqrt(share),
        "decay": own(profile.decay, 0) / decay_total(n),
        "recent": recent,
        "log_baskets": np.log1p(baskets),
        "share_x_log_history": share * math.log1p(n),
        "neighbours": nb,
        "sqrt_neighbours": np.sqrt(nb),
        "history_neighbours": hn,
        "sqrt_history_neighbours": np.sqrt(hn),
        "affinity": a,
        "log_popularity": lp,
        "new_x_log_popularity": new * lp,
        "new_x_affinity": new * a,
        "share_x_recent": share * recent,
    }
    for name, lo, hi in _bins("last", _LAST_BINS):
        col[name] = bought & (last >= lo) & (last < hi)
    for name, lo, hi in _bins("baskets", _COUNT_BINS):
        col[name] = (baskets >= lo) & (baskets < hi)
    for name, lo, hi in _bins("due", _DUE_BINS):
        col[name] = (due >= lo) & (due < hi)
    return COLUMNS.stack(col)


def ranked(
    emb: Embeddings,
    table: CustomerTable,
    profile: Profile,
    vector: np.ndarray,
    row: int,
    k_neigh: int,
    explore: bool,
    allowed: np.ndarray,
    log_pop: np.ndarray,
    aff: np.ndarray | None = None,
    by_vector: tuple[np.ndarray, np.ndarray] | None = None,
    by_history: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A customer's candidates and their features, as a query and the fit both compute them (``row``:
    the customer's own row of ``table``, never its own neighbour; ``aff``: its :func:`affinity`, and
    ``by_vector`` / ``by_history``: its nearest customers both ways and their cosines, when already
    selected)."""
    neigh = vector_neighbour_share(table, vector, row, k_neigh, len(emb), found=by_vector)
    hneigh = history_neighbour_share(
        table, profile.items, profile.decay, profile.n, row, k_neigh, len(emb), found=by_history
    )
    aff = affinity(emb, vector) if aff is None else aff
    cand = candidates(profile, [neigh, hneigh, aff], explore, allowed, shares=2)
    return cand, features(profile, cand, neigh, hneigh, aff, log_pop)


def own_rule(x: np.ndarray) -> np.ndarray:
    """The customer's own most-bought list (share, then recency); after it, new products by the share of
    their neighbours' baskets holding them (both kinds of neighbours; below every bought product)."""
    col = COLUMNS.of
    neighbours = col(x, "neighbours") + col(x, "history_neighbours")
    return np.where(col(x, "bought") > 0, col(x, "share") + 1e-3 * col(x, "recent"), 0.5 * neighbours - 1.0)


def scores(model: NextBasketModel, x: np.ndarray) -> np.ndarray:
    """Each candidate's score under ``model`` (higher first): its log-odds, or :func:`own_rule`."""
    return own_rule(x) if model.rule == "own" else model.log_odds(x, SCORE_BLOCK)
