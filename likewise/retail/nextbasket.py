"""What a customer will buy next: repeats by their own history, new products through the space.

In grocery most of a household's next basket is products it bought before, so the strong simple answers
rank by the household's own purchase frequency and recency (P-TopFreq; TIFU-KNN, Hu et al. SIGIR 2020;
UP-CF@r, Faggioli et al. UMAP 2020: Li et al., "A Next Basket Recommendation Reality Check", TOIS 2023,
found them ahead of the published neural models). :func:`next_basket` ranks a customer's candidates by a
logistic model over features of three kinds:

* *the customer's own history* (:mod:`likewise.space.history`): bought before or not, the share of their
  baskets holding the product, its recency-weighted share, baskets since the last purchase and since it
  was due (the customer's usual gap between purchases of it), each of the counts also in bins;
* *similar customers*, found two ways: by what they bought (the cosine of recency-weighted shares per
  product, TIFU-KNN's notion) and by their vectors in the space; for each, the similarity-weighted
  recency-weighted share of baskets holding the product among the :data:`NEIGHBOURS` nearest;
* *the space*: the customer's affinity for it (``customer · context[j] + bias[j]``, what
  :func:`~likewise.retail.for_customer` ranks by) and its popularity.

Candidates are what the customer bought and each kind of evidence's best new products (:data:`CANDIDATES`
of each). The weights are fitted when the space is trained (:func:`fit_next_basket`): on a sample of
customers with two baskets or more, each one's latest basket is held out and predicted from the rest,
the features computed exactly as a query computes them, on the :data:`TRAIN_TOP` candidates of each
customer where the top of the list is decided. They are kept in the customer table's config
(``config["next_basket"]``) with the held-out recall of the model beside that of the customer's own
most-bought list; when the model does no better there (too few customers to fit), the customer's own
most-bought list answers. ``explore=True`` answers "something new": the same ranking over products the
customer never bought.

In a typed space (products, campaigns, articles trained together) a next basket offers products: the type
:data:`PURCHASED` unless ``types=`` names others. The saved weights and settings are checked when the
space is loaded (:func:`likewise.space.customers.check_next_basket`) and their features against
:data:`FEATURES` when a query reads them, so an edited ``manifest.json`` is refused in one line.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._arrays import unique
from .._check import check_bool, check_int, check_k
from ..errors import CorruptModelError, InputError, NotFittedError
from ..space.customers import CustomerTable, check_next_basket
from ..space.embeddings import Embeddings
from ..space.history import basket_table, history_of_lines
from ..space.itemtable import Types
from ..space.neighbourhood import (
    block_neighbours,
    decay_total,
    history_neighbour_share,
    vector_neighbour_share,
)
from ..space.results import Neighbours

__all__ = [
    "CANDIDATES",
    "FEATURES",
    "MAX_HISTORY",
    "NEIGHBOURS",
    "PURCHASED",
    "TRAIN_TOP",
    "fit_next_basket",
    "next_basket",
]

# Bins (lower edge inclusive, upper exclusive) of baskets since the last purchase and of baskets holding
# the product: the log-odds of a repeat are far from linear in either.
_LAST_BINS = (0, 1, 2, 3, 5, 8, 13, 21, 10**9)
_COUNT_BINS = (1, 2, 3, 5, 8, 13, 10**9)
# Baskets since the last purchase over the customer's usual gap between purchases of the product
# (bought at least twice): below 1 a repeat is early, near 1 due, far past 1 the product may be dropped.
_DUE_BINS = (0.0, 0.5, 0.8, 1.25, 2.0, 4.0, np.inf)

#: Feature names, in the order of the fitted weights.
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
    *(f"last_{a}_{b}" for a, b in zip(_LAST_BINS[:-1], _LAST_BINS[1:], strict=True)),
    *(f"baskets_{a}_{b}" for a, b in zip(_COUNT_BINS[:-1], _COUNT_BINS[1:], strict=True)),
    *(f"due_{a}_{b}" for a, b in zip(_DUE_BINS[:-1], _DUE_BINS[1:], strict=True)),
)
#: Similar customers whose purchases are evidence.
NEIGHBOURS = 100
#: The type a next basket offers in a typed space unless asked for others (what an order log's items are).
PURCHASED = "product"
#: Products of a customer's history a query reads (the most recently bought): bounds one request's work
#: however much a customer bought (one who bought every product cost 150-240 MB a request).
MAX_HISTORY = 1000
#: New candidates taken from the neighbours' products and from the affinity, each.
CANDIDATES = 50
#: Customers sampled to fit the weights (each one's latest basket held out).
FIT_CUSTOMERS = 4000
#: Fewer customers with two baskets than this: no weights are fitted (the own most-bought list answers).
MIN_FIT_CUSTOMERS = 20
#: Baskets of each sampled customer held out in turn (the latest, the one before, ...), each predicted
#: from the baskets before it. One: on the Complete Journey two gave more cases but a lower held-out
#: recall (0.1563 against 0.1580 on the test baskets of bench/supermarket.py's split).
FIT_BASKETS = 1
#: Candidates per customer the weights are fitted on (see fit_next_basket).
TRAIN_TOP = 60
_L2 = 1e-3
_LINE_BLOCK = 1 << 16  # lines (or candidates) at a time while fitting: bounded temporaries
_AFFINITY_BLOCK = 128  # customers whose affinities are one matrix product while fitting (128 x V floats)
_FIT_ROWS = 1 << 16  # cases whose gradient and Hessian are summed at once while fitting the weights
_BLOCK_FLOATS = 1 << 24  # and at most this many floats of either product (64 MiB): a block's working set


@dataclass(frozen=True)
class _Profile:
    """One customer's history, as arrays: the bought products (sorted) and their counts
    (:mod:`likewise.space.history`), and the customer's baskets."""

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


def _history(table: CustomerTable) -> dict[str, np.ndarray]:
    """The table's purchase history; :class:`NotFittedError` says how to get one when it has none."""
    if table.history is None:
        raise NotFittedError(
            "this customer table has no purchase history (built before next-basket answers existed, or "
            "from lines without baskets): retrain from the order log (likewise train LOG --basket-col ... "
            "--user-col ...)"
        )
    return table.history


def _table_profile(table: CustomerTable, r: int, cap: int) -> _Profile:
    """Customer ``r``'s history, its ``cap`` most recently bought products when it has more (ties: the
    most often bought)."""
    h = _history(table)
    s, e = int(table.bought_indptr[r]), int(table.bought_indptr[r + 1])
    keep: slice | np.ndarray = slice(s, e)
    dropped = np.zeros(0, np.int64)
    if e - s > cap:
        recent = np.zeros(e - s, dtype=bool)
        recent[np.lexsort((-h["decay"][s:e], h["last"][s:e]))[:cap]] = True
        keep = s + np.flatnonzero(recent)  # still sorted by product id
        dropped = np.asarray(table.bought_ids[s:e][~recent], dtype=np.int64)
    return _Profile(
        np.asarray(table.bought_ids[keep], dtype=np.int64),
        h["baskets"][keep],
        h["last"][keep],
        h["first"][keep],
        h["decay"][keep],
        int(h["n_baskets"][r]),
        dropped,
    )


def _affinity(emb: Embeddings, vector: np.ndarray) -> np.ndarray:
    """The customer's affinity for every product (cosine without a context table)."""
    return _affinities(emb, np.asarray(vector)[None, :])[0]


def _affinities(emb: Embeddings, vectors: np.ndarray) -> np.ndarray:
    """:func:`_affinity` of each row of ``vectors`` at once: float32 [len(vectors), V] (a matrix product
    over a block of customers reads the products' table once, where one per customer read it each time)."""
    if emb.context is not None:
        q = np.hstack([np.asarray(vectors, dtype=np.float32), np.ones((len(vectors), 1), np.float32)])
        return q @ emb.affinity_table.T
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return (vectors / norms).astype(np.float32) @ emb.normed.T


def _candidates(
    profile: _Profile, evidence: list[np.ndarray], explore: bool, allowed: np.ndarray, shares: int = 0
):
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


def _features(
    profile: _Profile,
    cand: np.ndarray,
    neigh: np.ndarray,
    hneigh: np.ndarray,
    aff: np.ndarray,
    log_pop: np.ndarray,
) -> np.ndarray:
    """The :data:`FEATURES` of each candidate, float64 [len(cand), len(FEATURES)]."""
    bought, pos = profile.find(cand)

    def own(values: np.ndarray, fill: float) -> np.ndarray:
        """The profile's ``values`` for the bought candidates, ``fill`` for the others."""
        return np.where(bought, values[pos], fill) if len(values) else np.full(len(cand), fill)

    n = max(profile.n, 1)
    baskets = own(profile.baskets, 0).astype(np.float64)
    share = baskets / n
    decay = own(profile.decay, 0) / decay_total(n)
    last = own(profile.last, -1)
    first = own(profile.first, -1)
    recent = np.where(bought, 1.0 / (1.0 + np.maximum(last, 0)), 0.0)
    nb = neigh[cand]
    hn = hneigh[cand]
    a = aff[cand].astype(np.float64)
    lp = log_pop[cand]
    new = ~bought
    gap = np.where(baskets >= 2, (first - last) / np.maximum(baskets - 1, 1), np.inf)
    due = np.where(baskets >= 2, last / np.maximum(gap, 1e-9), -1.0)
    bins = [
        bought & (last >= lo) & (last < hi) for lo, hi in zip(_LAST_BINS[:-1], _LAST_BINS[1:], strict=True)
    ]
    bins += [
        (baskets >= lo) & (baskets < hi) for lo, hi in zip(_COUNT_BINS[:-1], _COUNT_BINS[1:], strict=True)
    ]
    return np.column_stack(
        [
            bought,
            share,
            np.sqrt(share),
            decay,
            recent,
            np.log1p(baskets),
            share * math.log1p(n),
            nb,
            np.sqrt(nb),
            hn,
            np.sqrt(hn),
            a,
            lp,
            new * lp,
            new * a,
            share * recent,
            *bins,
            *[(due >= lo) & (due < hi) for lo, hi in zip(_DUE_BINS[:-1], _DUE_BINS[1:], strict=True)],
        ]
    ).astype(np.float64)


def _model(table: CustomerTable) -> dict[str, Any]:
    _history(table)
    model = table.config.get("next_basket")
    if not isinstance(model, dict):
        raise NotFittedError(
            "this space's customer table has no next-basket weights: retrain from the order log "
            "with a customer column (likewise train LOG --basket-col ... --user-col ...)"
        )
    # the saved record's shape was checked at load; which features the weights are for is known here
    if "weights" in model and model.get("features") != list(FEATURES):
        raise CorruptModelError(
            "the next-basket weights were fitted on other features than this version computes: retrain "
            "from the order log (likewise train LOG --basket-col ... --user-col ...)"
        )
    return model


def _own_rule(x: np.ndarray) -> np.ndarray:
    """The customer's own most-bought list (share, then recency); after it, new products by the share of
    their neighbours' baskets holding them (both kinds of neighbours; below every bought product)."""
    bought = x[:, 0] > 0
    return np.where(bought, x[:, 1] + 1e-3 * x[:, 4], 0.5 * (x[:, 7] + x[:, 9]) - 1.0)


def _scores(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    if model.get("rule") == "own":
        return _own_rule(x)
    mean, scale, w = (np.asarray(model[k], dtype=np.float64) for k in ("mean", "scale", "weights"))
    out = np.empty(len(x), dtype=np.float64)
    for a in range(0, len(x), _LINE_BLOCK):  # a block of rows at a time: three copies of x were 0.9 GiB
        blk = x[a : a + _LINE_BLOCK]
        z = np.hstack([blk, np.ones((len(blk), 1))])  # the bias's column (its mean 0 and scale 1)
        out[a : a + len(blk)] = ((z - mean) / scale) @ w
    return out


def _chances(model: dict[str, Any], s: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The scores shown for ranked candidates (``s``, best first): each one's estimated chance of being in
    the next basket, in ``[0, 1]``, never rising down the list.

    The fitted model's log-odds become a probability (the logistic function: the order is unchanged);
    under the customer's own most-bought list, a bought product's chance is the share of the customer's
    baskets that hold it, a new one's the share of the neighbours' baskets, capped by the chances above it
    (the list ranks every bought product first).
    """
    if model.get("rule") == "own":
        p = np.where(x[:, 0] > 0, x[:, 1], 0.5 * (x[:, 7] + x[:, 9]))
    else:
        p = 1.0 / (1.0 + np.exp(-np.clip(s, -50.0, 50.0)))
    return np.minimum.accumulate(np.clip(p, 0.0, 1.0)).astype(np.float32) if len(p) else p.astype(np.float32)


def next_basket(
    emb: Embeddings,
    customer: str | int,
    k: int = 10,
    *,
    explore: bool = False,
    types: Types = None,
    max_history: int = MAX_HISTORY,
) -> Neighbours:
    """The products ``customer`` is most likely to buy next, repeats included.

    Parameters
    ----------
    emb : Embeddings
        A space trained from an order log with a customer column (its customer table keeps each
        customer's purchase history and the fitted weights: see the module docstring).
    customer : str, int or Row
        A customer key (an int is the key written the same way; ``likewise.Row(n)`` is row ``n``).
    k : int
        How many products.
    explore : bool
        "Something new": rank only products the customer never bought.
    types : str or list of str, optional
        In a typed space, offer items of these types; default: :data:`PURCHASED` (a campaign or an
        article is not bought).
    max_history : int
        Read at most this many of the customer's products, the most recently bought (bounds the work
        of one answer; the server's ``--max-history``).

    Returns
    -------
    Neighbours
        Products, best first; ``scores`` are each one's estimated chance of being in the next basket, in
        ``[0, 1]`` and never rising down the list: the fitted logistic model's probability, or under
        the customer's own most-bought list (too few customers to fit a model) the share of the
        customer's baskets that hold it (of the neighbours' baskets, for a product never bought).

    Raises
    ------
    NotFittedError
        The space has no customer table, or its table no purchase history (say how to get one).
    UnknownItemError
        An unknown customer.
    InputError
        A bad ``k``, ``explore`` or ``types``; a typed space without :data:`PURCHASED` items and no
        ``types``.
    CorruptModelError
        The saved weights are for other features (retrain).
    """
    from .queries import customer_table

    table = customer_table(emb)
    model = _model(table)
    r = table.row(customer)
    k = check_k(k)
    explore = check_bool("explore", explore)
    check_int("max_history", max_history, 1)
    allowed = _allowed(emb, types)
    profile = _table_profile(table, r, int(max_history))
    vector = np.asarray(table.vectors[r], dtype=np.float32)
    k_neigh = int(model.get("neighbours", NEIGHBOURS))
    cand, x = _ranked(emb, table, profile, vector, r, k_neigh, explore, allowed, _log_popularity(emb))
    if len(cand) == 0:
        return emb.neighbours_of(np.zeros(0, np.int64), np.zeros(0, np.float32))
    s = _scores(model, x)
    order = np.lexsort((cand, -s))[:k]
    ids = cand[order]
    return emb.neighbours_of(ids, _chances(model, s[order], x[order]))


def _ranked(
    emb: Embeddings,
    table: CustomerTable,
    profile: _Profile,
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
    the customer's own row of ``table``, never its own neighbour; ``aff``: its :func:`_affinity`, and
    ``by_vector`` / ``by_history``: its nearest customers both ways and their cosines, when already
    selected)."""
    neigh = vector_neighbour_share(table, vector, row, k_neigh, len(emb), found=by_vector)
    hneigh = history_neighbour_share(
        table, profile.items, profile.decay, profile.n, row, k_neigh, len(emb), found=by_history
    )
    aff = _affinity(emb, vector) if aff is None else aff
    cand = _candidates(profile, [neigh, hneigh, aff], explore, allowed, shares=2)
    return cand, _features(profile, cand, neigh, hneigh, aff, log_pop)


def _allowed(emb: Embeddings, types: Types = None) -> np.ndarray:
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


def _log_popularity(emb: Embeddings) -> np.ndarray:
    return np.log1p(np.asarray(emb.counts, dtype=np.float64))


# ------------------------------------------------------------------------------------------- fitting


def _logistic(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float = _L2, iters: int = 25
) -> tuple[np.ndarray, ...]:
    """Weighted, L2-regularised logistic regression by Newton's method on standardised features (plus a
    bias); ``weight`` sums to 1. The standardised features are one array; each step's gradient and
    Hessian are summed :data:`_FIT_ROWS` rows at a time (a few copies of the features were hundreds
    of MiB on a large log)."""
    mean = x.mean(axis=0, dtype=np.float64)
    scale = x.std(axis=0, dtype=np.float64)
    scale[scale == 0] = 1.0
    d = x.shape[1]
    z = np.empty((len(x), d + 1), dtype=np.float64)
    z[:, :d] = x
    z[:, :d] -= mean
    z[:, :d] /= scale
    z[:, d] = 1.0
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[-1] = 0.0
    for _ in range(iters):
        grad = reg * w
        hess = np.diag(reg + 1e-9)
        for a in range(0, len(z), _FIT_ROWS):
            zb = z[a : a + _FIT_ROWS]
            p = 1.0 / (1.0 + np.exp(-np.clip(zb @ w, -30, 30)))
            wb = weight[a : a + _FIT_ROWS]
            grad += zb.T @ (wb * (p - y[a : a + _FIT_ROWS]))
            hess += (zb * (wb * p * (1 - p))[:, None]).T @ zb
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    # the bias is folded into the mean so that scores are (x - mean) / scale @ weights
    return np.append(mean, 0.0), np.append(scale, 1.0), w


def _cases(
    emb: Embeddings,
    table: CustomerTable,
    user: np.ndarray,
    item: np.ndarray,
    age: np.ndarray,
    n_b: np.ndarray,
    is_chosen: np.ndarray,
    code_of: np.ndarray,
    rows: np.ndarray,
    shift: int,
    allowed: np.ndarray,
    threads: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and customer (index among the chosen) of every candidate when each chosen
    customer's basket ``shift`` from the latest is held out and predicted from the baskets before it;
    and each chosen customer's held-out products (0: no case)."""
    n = int(is_chosen.sum())
    mine = is_chosen[user]
    held = mine & (age == shift)
    rest = mine & (age > shift)
    sub_users = code_of[user[rest]]
    hist = history_of_lines(
        sub_users, item[rest], age[rest] - shift - 1, np.maximum(n_b[is_chosen] - shift - 1, 0), len(emb)
    )
    h_start = np.searchsorted(hist.pair // len(emb), np.arange(n + 1))
    # their customer vectors from those baskets alone: the mean of the vectors of their lines
    vecs = np.zeros((n, emb.dim), dtype=np.float64)
    from ..kernels.rowsum import add_weighted_rows  # numba: loaded by the fit, not by a query

    # line by line in order, as np.add.at summed them (lines x dim at once was 1.1 GiB on 1.4 M lines)
    add_weighted_rows(vecs, np.zeros(n), sub_users, item[rest], np.ones(len(sub_users)), emb.vectors)
    vecs /= np.maximum(np.bincount(sub_users, minlength=n), 1)[:, None]
    t_user, t_item = code_of[user[held]], item[held]
    order = np.argsort(t_user, kind="stable")
    t_start = np.searchsorted(t_user[order], np.arange(n + 1))
    t_item = t_item[order]
    log_pop = _log_popularity(emb)
    codes = np.flatnonzero(is_chosen)
    xs, ys, owner = [], [], []
    sizes = np.zeros(n, dtype=np.int64)
    aff = np.zeros((0, len(emb)), np.float32)
    by_vector: list[tuple[np.ndarray, np.ndarray]] = []
    by_history: list[tuple[np.ndarray, np.ndarray]] = []
    # a block of customers' affinities (B x products) at a time, one matrix product (one per customer read
    # the products' table once per customer), and the block's nearest customers both ways
    # (block_neighbours: their cosines with every customer, B x customers, one more)
    block = max(1, min(_AFFINITY_BLOCK, _BLOCK_FLOATS // max(len(emb), len(table), 1)))
    for j, code in enumerate(codes.tolist()):
        if j % block == 0:
            aff = _affinities(emb, vecs[j : j + block])
            span = range(j, min(j + block, n))
            queries = [
                (hist.pair[a:b] % len(emb), hist.decay[a:b], int(hist.n_baskets[i]), int(rows[codes[i]]))
                for i, a, b in ((i, int(h_start[i]), int(h_start[i + 1])) for i in span)
            ]
            by_vector, by_history = block_neighbours(
                table, len(emb), vecs[j : j + block], queries, NEIGHBOURS, threads
            )
        s, e = int(h_start[j]), int(h_start[j + 1])
        truth = unique(t_item[t_start[j] : t_start[j + 1]])
        if e == s or len(truth) == 0:
            continue
        sizes[j] = len(truth)
        profile = _Profile(
            hist.pair[s:e] % len(emb),
            hist.baskets[s:e],
            hist.last[s:e],
            hist.first[s:e],
            hist.decay[s:e],
            hist.n_baskets[j],
        )
        own = int(rows[code])
        b = j % block
        cand, x = _ranked(
            emb,
            table,
            profile,
            vecs[j],
            own,
            NEIGHBOURS,
            False,
            allowed,
            log_pop,
            aff[b],
            by_vector[b],
            by_history[b],
        )
        xs.append(x.astype(np.float32))  # the cases' features are kept in float32: half the memory
        ys.append(np.isin(cand, truth).astype(np.float64))
        owner.append(np.full(len(cand), j))
    if not xs:
        return np.zeros((0, len(FEATURES)), np.float32), np.zeros(0), np.zeros(0, np.int64), sizes
    return np.vstack(xs), np.concatenate(ys), np.concatenate(owner), sizes


def fit_next_basket(
    emb: Embeddings,
    table: CustomerTable,
    users: np.ndarray,
    ids: np.ndarray,
    offsets: np.ndarray,
    times: np.ndarray | None = None,
    *,
    seed: int = 0,
    threads: int | None = None,
) -> dict[str, Any]:
    """Fit the next-basket weights on held-out latest baskets; returns ``config["next_basket"]``.

    Parameters
    ----------
    emb : Embeddings
        The product space (its vectors, context table and counts give the space's features).
    table : CustomerTable
        The space's customer table with its purchase history (built with ``offsets``).
    users, ids, offsets, times : ndarray
        The lines the table was built from (customer code per line in the codes of ``table``'s source,
        product id per line, the baskets, optional times), as :func:`likewise.space.customers.customer_table`
        took them.
    seed : int
        Which customers are sampled (at most :data:`FIT_CUSTOMERS`).
    threads : int, optional
        Threads that search similar customers (default: every core).

    Returns
    -------
    dict
        ``mean``, ``scale``, ``weights`` (per :data:`FEATURES`, then the bias), ``neighbours``
        and the held-out ``validation`` figures; or ``rule: "own"`` with its ``reason`` when the
        customer's own most-bought list answers (fewer than :data:`MIN_FIT_CUSTOMERS` customers with two
        baskets, or the fitted weights did no better on the held-out baskets).
    """
    if table.history is None:
        raise InputError("fit_next_basket needs a customer table with a purchase history (offsets=)")
    n_codes = max(
        (int(np.max(users[s : s + _LINE_BLOCK * 16])) + 1 for s in range(0, len(users), _LINE_BLOCK * 16)),
        default=0,
    )
    b_user, b_age, n_b = basket_table(users, ids, offsets, n_codes, times)
    # codes -> rows of the table (the table keeps customers with a product of the space, in code order)
    has = n_b > 0
    rows = np.cumsum(has) - 1
    eligible = np.flatnonzero(n_b >= 2)
    if len(eligible) < MIN_FIT_CUSTOMERS:
        return _own_model(f"{len(eligible)} customer(s) with two baskets or more: too few to fit on")
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(eligible, size=min(FIT_CUSTOMERS, len(eligible)), replace=False))
    is_chosen = np.zeros(n_codes, dtype=bool)
    is_chosen[chosen] = True
    code_of = np.full(n_codes, -1, dtype=np.int64)
    code_of[chosen] = np.arange(len(chosen))
    user, item, age = _chosen_lines(users, ids, offsets, b_user, b_age, is_chosen)
    try:
        allowed = _allowed(emb)  # fitted on what a query offers by default
    except InputError:  # a typed space with no products: a query names its types, the fit takes them all
        allowed = emb.types.mask()
    xs, ys, owner = [], [], []
    for shift in range(FIT_BASKETS):
        # each chosen customer's basket `shift` from the latest, predicted from the baskets before it
        x, y, who, n_truth = _cases(
            emb,
            table,
            user,
            item,
            age,
            n_b,
            is_chosen,
            code_of,
            rows,
            shift,
            allowed,
            threads or os.cpu_count() or 1,
        )
        if shift == 0:
            latest = n_truth  # the held-out figures below are on the latest baskets
        xs.append(x)
        ys.append(y)
        owner.append(who + shift * len(chosen))
    x, y, who = (
        (xs[0], ys[0], owner[0])
        if len(xs) == 1
        else (np.vstack(xs), np.concatenate(ys), np.concatenate(owner))
    )
    del xs, ys, owner  # (one copy of the cases' features: hundreds of MiB on a real log)
    if len(y) == 0 or y.sum() == 0 or y.sum() == len(y):
        return _own_model("no held-out basket had both a candidate in it and one not in it")
    # the weights are fitted where the top of the list is decided: each customer's candidates that a
    # simple score (their own recency-weighted share, then their neighbours') puts in its first TRAIN_TOP
    base = x[:, 3] + 0.25 * (x[:, 7] + x[:, 9])
    near = np.zeros(len(y), dtype=bool)
    starts = np.r_[0, np.flatnonzero(who[1:] != who[:-1]) + 1, len(who)]
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        near[a + np.argsort(-base[a:b], kind="stable")[:TRAIN_TOP]] = True
    mean, scale, w = _logistic(
        x[near].astype(np.float64), y[near], np.full(int(near.sum()), 1.0 / near.sum())
    )
    model = {
        "features": list(FEATURES),
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "weights": w.tolist(),
        "neighbours": NEIGHBOURS,
    }
    # held-out recall@10 on the fitting sample (in-sample for the weights: an optimistic figure), beside the
    # customer's own most-bought list (share, then recency) on the same cases
    fitted = _scores(model, x)
    own = _own_rule(x)
    rec_m, rec_own = [], []
    starts = np.r_[0, np.flatnonzero(who[1:] != who[:-1]) + 1, len(who)]
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        j = int(who[a])
        if j >= len(chosen) or latest[j] == 0:
            continue
        for score, out in ((fitted[a:b], rec_m), (own[a:b], rec_own)):
            top = np.argsort(-score, kind="stable")[:10]
            out.append(float(y[a:b][top].sum()) / int(latest[j]))
    model["validation"] = {
        "customers": len(rec_m),
        "recall_at_10": round(float(np.mean(rec_m)), 4) if rec_m else None,
        "recall_at_10_own_most_bought": round(float(np.mean(rec_own)), 4) if rec_own else None,
    }
    if rec_m and np.mean(rec_own) > np.mean(rec_m):  # too little data to fit: the simple rule wins
        model["rule"] = "own"
        model["reason"] = "the customers' own most-bought lists did better on the held-out baskets"
    try:  # what loading will check: a fit it would refuse is never saved
        check_next_basket(model)
    except InputError:
        return _own_model("the fit did not converge to finite weights of a bounded size")
    return model


def _chosen_lines(
    users: np.ndarray,
    ids: np.ndarray,
    offsets: np.ndarray,
    b_user: np.ndarray,
    b_age: np.ndarray,
    is_chosen: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lines of the chosen customers' baskets with a known customer and product: each one's customer,
    product and basket age (a few thousand customers' lines, read from a log that may hold millions)."""
    picked = np.flatnonzero((b_user >= 0) & is_chosen[np.maximum(b_user, 0)])
    starts = np.asarray(offsets[picked], dtype=np.int64)
    lens = np.asarray(offsets[picked + 1], dtype=np.int64) - starts
    line = np.repeat(starts - np.r_[0, np.cumsum(lens)[:-1]], lens) + np.arange(int(lens.sum()))
    user = np.asarray(users[line], dtype=np.int64)
    item = np.asarray(ids[line], dtype=np.int64)
    age = np.repeat(b_age[picked], lens)
    keep = (user >= 0) & (item >= 0)
    return user[keep], item[keep], age[keep]


def _own_model(reason: str) -> dict[str, Any]:
    """The next-basket model when there are no weights to fit: the customer's own most-bought list."""
    return {"rule": "own", "reason": reason, "neighbours": NEIGHBOURS, "validation": None}
