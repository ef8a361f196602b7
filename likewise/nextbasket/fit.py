"""The next-basket model's fit: logistic weights on each sampled customer's held-out latest basket.

When a space is trained from an order log with a customer column, :func:`fit_next_basket` samples up to
:data:`FIT_CUSTOMERS` customers with two baskets or more, holds out each one's latest basket and predicts
it from the baskets before it, the features computed exactly as a query computes them
(:func:`likewise.nextbasket.features.ranked`), on the :data:`TRAIN_TOP` candidates of each customer where
the top of the list is decided. The result is a :class:`~likewise.nextbasket.model.NextBasketModel`, kept
in the customer table with the held-out recall of the model beside that of the customer's own
most-bought list; when the model does no better there (too few customers to fit), the customer's own
most-bought list answers.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .._arrays import unique
from ..errors import InputError
from ..space.customers import CustomerTable
from .features import (
    COLUMNS,
    FEATURES,
    NEIGHBOURS,
    Profile,
    affinities,
    allowed_rows,
    log_popularity,
    own_rule,
    ranked,
    scores,
)
from .history import basket_table, history_of_lines
from .model import NextBasketModel
from .neighbours import block_neighbours

if TYPE_CHECKING:  # the space is only passed through
    from ..space.embeddings import Embeddings

__all__ = [
    "FIT_BASKETS",
    "FIT_CUSTOMERS",
    "MIN_FIT_CUSTOMERS",
    "TRAIN_TOP",
    "fit_next_basket",
]

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
_LINE_BLOCK = 1 << 16  # lines at a time while scanning the log for its customers: bounded temporaries
_AFFINITY_BLOCK = 128  # customers whose affinities are one matrix product while fitting (128 x V floats)
_FIT_ROWS = 1 << 16  # cases whose gradient and Hessian are summed at once while fitting the weights
_BLOCK_FLOATS = 1 << 24  # and at most this many floats of either product (64 MiB): a block's working set


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
    log_pop = log_popularity(emb)
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
            aff = affinities(emb, vecs[j : j + block])
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
        profile = Profile(
            hist.pair[s:e] % len(emb),
            hist.baskets[s:e],
            hist.last[s:e],
            hist.first[s:e],
            hist.decay[s:e],
            hist.n_baskets[j],
        )
        own = int(rows[code])
        b = j % block
        cand, x = ranked(
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
) -> NextBasketModel:
    """Fit the next-basket weights on held-out latest baskets; returns the customer table's
    ``next_basket``.

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
    NextBasketModel
        ``mean``, ``scale``, ``weights`` (per :data:`~likewise.nextbasket.features.FEATURES`, then the
        bias), ``neighbours`` and the held-out ``validation`` figures; or ``rule="own"`` with its
        ``reason`` when the customer's own most-bought list answers (fewer than
        :data:`MIN_FIT_CUSTOMERS` customers with two baskets, or the fitted weights did no better on the
        held-out baskets).
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
        allowed = allowed_rows(emb)  # fitted on what a query offers by default
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
    col = COLUMNS.of
    base = col(x, "decay") + 0.25 * (col(x, "neighbours") + col(x, "history_neighbours"))
    near = np.zeros(len(y), dtype=bool)
    starts = np.r_[0, np.flatnonzero(who[1:] != who[:-1]) + 1, len(who)]
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        near[a + np.argsort(-base[a:b], kind="stable")[:TRAIN_TOP]] = True
    mean, scale, w = _logistic(
        x[near].astype(np.float64), y[near], np.full(int(near.sum()), 1.0 / near.sum())
    )
    model = NextBasketModel(
        rule="fitted",
        neighbours=NEIGHBOURS,
        features=FEATURES,
        mean=tuple(mean.tolist()),
        scale=tuple(scale.tolist()),
        weights=tuple(w.tolist()),
    )
    # held-out recall@10 on the fitting sample (in-sample for the weights: an optimistic figure), beside the
    # customer's own most-bought list (share, then recency) on the same cases
    fitted = scores(model, x)
    own = own_rule(x)
    rec_m, rec_own = [], []
    starts = np.r_[0, np.flatnonzero(who[1:] != who[:-1]) + 1, len(who)]
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        j = int(who[a])
        if j >= len(chosen) or latest[j] == 0:
            continue
        for score, out in ((fitted[a:b], rec_m), (own[a:b], rec_own)):
            top = np.argsort(-score, kind="stable")[:10]
            out.append(float(y[a:b][top].sum()) / int(latest[j]))
    validation = {
        "customers": len(rec_m),
        "recall_at_10": round(float(np.mean(rec_m)), 4) if rec_m else None,
        "recall_at_10_own_most_bought": round(float(np.mean(rec_own)), 4) if rec_own else None,
    }
    model = replace(model, validation=validation)
    if rec_m and np.mean(rec_own) > np.mean(rec_m):  # too little data to fit: the simple rule wins
        reason = "the customers' own most-bought lists did better on the held-out baskets"
        model = replace(model, rule="own", reason=reason)
    try:  # what loading will check: a fit it would refuse is never saved
        return NextBasketModel.from_dict(model.to_dict())
    except InputError:
        return _own_model("the fit did not converge to finite weights of a bounded size")


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


def _own_model(reason: str) -> NextBasketModel:
    """The next-basket model when there are no weights to fit: the customer's own most-bought list."""
    return NextBasketModel.own(reason, NEIGHBOURS)
