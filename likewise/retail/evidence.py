"""Evidence that the vectors work: the last order of each customer held out, scored against baselines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from .._arrays import unique
from ..errors import InputError
from ..space.embeddings import Embeddings
from .log import OrderLog, log_codes
from .queries import affinity_top_k, fitted_customers, lookalike

# -------------------------------------------------------------------------------------- evidence


def split_last_order(log: OrderLog) -> tuple[OrderLog, OrderLog]:
    """Hold out each customer's last order (by time, then order code) for customers with >= 2 orders.

    Returns
    -------
    train, test : OrderLog
        Two logs sharing the key lists (codes stay comparable).
    """
    if log.user is None:
        raise InputError("split_last_order needs a customer column")
    n_baskets = int(log.basket.max()) + 1
    b_user = np.zeros(n_baskets, dtype=np.int64)
    b_user[log.basket] = log.user
    b_time = np.zeros(n_baskets, dtype=np.int64)
    if log.time is not None:
        np.maximum.at(b_time, log.basket, log.time)
    present = np.zeros(n_baskets, dtype=bool)
    present[log.basket] = True
    order = np.lexsort((np.arange(n_baskets), b_time, b_user))
    order = order[present[order]]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = b_user[order][1:] != b_user[order][:-1]
    n_orders = np.bincount(b_user[order], minlength=len(log.user_keys))
    held = np.zeros(n_baskets, dtype=bool)
    held[order[last & (n_orders[b_user[order]] >= 2)]] = True
    mask = held[log.basket]

    def part(m: np.ndarray) -> OrderLog:
        return OrderLog(
            basket=log.basket[m],
            item=log.item[m],
            user=log.user[m] if log.user is not None else None,
            time=log.time[m] if log.time is not None else None,
            quantity=log.quantity[m] if log.quantity is not None else None,
            item_keys=log.item_keys,
            user_keys=log.user_keys,
            columns=log.columns,
        )

    return part(~mask), part(mask)


def holdout_hit_rates(
    emb: Embeddings,
    train: OrderLog,
    test: OrderLog,
    *,
    k: int = 10,
    baselines: Sequence[str] = ("popular", "cocount"),
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """HR@k of basket completion and of :func:`for_customer` on held-out orders, model vs count baselines.

    * **Basket completion**: in each held-out order with >= 2 known products one product (drawn with
      ``seed``) is hidden; the rest is the query; a hit when the hidden product is in the top ``k``.
    * **For customer**: for each held-out customer one product of their held-out order that they had not
      bought in ``train`` is the target; the query is the customer (model: their vector; baselines:
      their ``train`` purchases); bought products are excluded for every method.

    The baselines (:func:`likewise.baselines.counts.fit_baselines`) count the ``train`` orders in the space's
    ids. Returns ``{"complete": {method: hr, "n": ...}, "for_customer": {...}}``.
    """
    from ..baselines.counts import fit_baselines
    from ..evaluate import EmbeddingRecommender

    lut = np.array([emb.vocab.index.get(key, -1) for key in train.item_keys], dtype=np.int64)
    ids, offsets = log_codes(train, lut, seed=seed)
    models: dict[str, Any] = dict(
        fit_baselines(
            [ids[a:b] for a, b in zip(offsets[:-1], offsets[1:], strict=True)],
            len(emb),
            which=tuple(baselines),
            seed=seed,
        )
    )
    models["likewise"] = EmbeddingRecommender(emb, "likewise")
    rng = np.random.default_rng(seed)
    t_ids, t_off = log_codes(test, lut, seed=seed)
    ctx, tgt = [], []
    for a, b in zip(t_off[:-1].tolist(), t_off[1:].tolist(), strict=True):
        basket = unique(t_ids[a:b]).astype(np.int64)
        if len(basket) >= 2:
            j = int(rng.integers(len(basket)))
            tgt.append(basket[j])
            ctx.append(np.delete(basket, j))
    out: dict[str, dict[str, float]] = {"complete": {"n": float(len(tgt))}, "for_customer": {}}
    target = np.asarray(tgt, dtype=np.int64)
    for name, m in models.items():
        out["complete"][name] = float((m.recommend_ids(ctx, k) == target[:, None]).any(axis=1).mean())
    # for_customer: history = train purchases; target = a new product of the held-out order
    table = fitted_customers(emb)
    t_known = lut[test.item] >= 0
    hist_u, hist_i = train.user[lut[train.item] >= 0], lut[train.item][lut[train.item] >= 0]
    order = np.argsort(hist_u, kind="stable")
    hist_u, hist_i = hist_u[order], hist_i[order]
    rows, ctx2, tgt2 = [], [], []
    for u in unique(test.user[t_known]).tolist():
        key = test.user_keys[u]
        if key not in table:
            continue
        lo, hi = np.searchsorted(hist_u, [u, u + 1])
        hist = unique(hist_i[lo:hi])
        new = np.setdiff1d(lut[test.item[t_known & (test.user == u)]], hist)
        if len(hist) == 0 or len(new) == 0:
            continue
        rows.append(table.row(key))
        ctx2.append(hist)
        tgt2.append(int(rng.choice(new)))
    target2 = np.asarray(tgt2, dtype=np.int64)
    out["for_customer"]["n"] = float(len(tgt2))
    for name, m in models.items():
        if name == "likewise":
            lens = [len(c) for c in ctx2]
            ex_rows = np.repeat(np.arange(len(ctx2)), lens)
            got = affinity_top_k(emb, table.vectors[rows], k, ex_rows, np.concatenate(ctx2))[0]
        else:
            got = m.recommend_ids(ctx2, k)
        out["for_customer"][name] = float((got == target2[:, None]).any(axis=1).mean())
    return out


def lookalike_precision(
    emb: Embeddings,
    labels: dict[str, str],
    *,
    n_seeds: int = 50,
    k: int = 100,
    method: Literal["centroid", "knn"] = "centroid",
    seed: int = 0,
) -> dict[str, float]:
    """Precision@k of :func:`lookalike` at finding customers with the seed audience's hidden label.

    For each label, ``n_seeds`` customers carrying it are the seeds; precision is the share of the
    ``k`` customers returned that carry it too; chance is its share among the other customers.
    Returns the means over labels: ``{"precision", "chance", "labels"}``.
    """
    table = fitted_customers(emb)
    rng = np.random.default_rng(seed)
    keys = np.asarray(table.keys, dtype=object)
    lab = np.asarray([labels.get(c) for c in table.keys], dtype=object)
    precision, chance = [], []
    for name in sorted({v for v in lab.tolist() if v is not None}):
        members = np.flatnonzero(lab == name)
        if len(members) < n_seeds + 1:
            continue
        seeds = rng.choice(members, n_seeds, replace=False)
        res = lookalike(emb, keys[seeds].tolist(), k=k, method=method)
        got = lab[res.ids]
        precision.append(float(np.mean(got == name)))
        chance.append((len(members) - n_seeds) / (len(table) - n_seeds))
    if not precision:
        raise InputError(f"no label has more than n_seeds={n_seeds} customers")
    return {
        "precision": float(np.mean(precision)),
        "chance": float(np.mean(chance)),
        "labels": len(precision),
    }
