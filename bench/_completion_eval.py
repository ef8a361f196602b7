"""Completion protocols of ``bench/supermarket.py --sections completion``, apart so they can be reused.

Two protocols over the held-out baskets (each household's latest basket), both restricted to the
products bought >= 5 times in the training baskets and to baskets holding two of them or more:

* **one hidden** (:func:`one_hidden`): one product of each basket, drawn with seed 0, is hidden and the
  rest is the query. The figure moves by about +-0.01 with the seed of the draw.
* **every product hidden** (:func:`every_hidden`): each product of each basket is hidden in turn (the
  rest of the basket is its query). No draw, so no seed noise; cases of the same basket are
  correlated, so standard errors are taken over baskets (:func:`paired`).

A model is scored by ``recommend(queries, k) -> (n, k)`` int64 ids, best first (-1 for an empty slot).
Linear item-item models score every case of a basket from one basket total
(:func:`every_hidden_dense`): the query's score is the basket's score minus the hidden product's row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

K = 10


def heldout_baskets(
    test_products: np.ndarray, test_baskets: np.ndarray, index: dict, count: np.ndarray, min_count: int = 5
) -> list[np.ndarray]:
    """The held-out baskets as sorted training ids of products bought >= ``min_count`` times (>= 2 each)."""
    order = np.argsort(test_baskets, kind="stable")
    tb = test_baskets[order]
    starts = np.r_[0, np.flatnonzero(tb[1:] != tb[:-1]) + 1, len(order)]
    out = []
    prods = test_products[order].tolist()
    for a, z in zip(starts[:-1], starts[1:], strict=True):
        ids = np.unique(np.asarray([index.get(x, -1) for x in prods[a:z]], dtype=np.int64))
        ids = ids[ids >= 0]
        ids = ids[count[ids] >= min_count]
        if len(ids) >= 2:
            out.append(ids)
    return out


def one_hidden(baskets: Sequence[np.ndarray], seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """One product per basket hidden (drawn with ``seed``): (queries, hidden)."""
    rng = np.random.default_rng(seed)
    queries, hidden = [], []
    for ids in baskets:
        pick = int(rng.integers(len(ids)))
        hidden.append(int(ids[pick]))
        queries.append(np.delete(ids, pick))
    return queries, np.asarray(hidden, dtype=np.int64)


def every_hidden(baskets: Sequence[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Every product of every basket hidden in turn: (queries, hidden, basket of each case)."""
    queries, hidden, owner = [], [], []
    for b, ids in enumerate(baskets):
        for j in range(len(ids)):
            queries.append(np.delete(ids, j))
            hidden.append(int(ids[j]))
            owner.append(b)
    return queries, np.asarray(hidden, dtype=np.int64), np.asarray(owner, dtype=np.int64)


def hits(recs: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """Per case: 1 / log2(rank + 1) of the hidden product in the top k (0 when absent): NDCG@k's gain.

    ``(g > 0)`` is the hit of HR@k.
    """
    hit = np.asarray(recs) == np.asarray(hidden)[:, None]
    return (hit / np.log2(np.arange(2, recs.shape[1] + 2))[None, :]).sum(1)


def summary(gain: np.ndarray, owner: np.ndarray | None = None) -> dict[str, float]:
    """HR@k, NDCG@k and the standard error of HR@k (over baskets when ``owner`` groups the cases)."""
    hit = (gain > 0).astype(np.float64)
    return {"hr@10": float(hit.mean()), "ndcg@10": float(gain.mean()), "hr_se": _se(hit, owner)}


def paired(a: np.ndarray, b: np.ndarray, owner: np.ndarray | None = None) -> tuple[float, float]:
    """HR@k of ``a`` minus that of ``b`` on the same cases, and its standard error (over baskets)."""
    d = (a > 0).astype(np.float64) - (b > 0).astype(np.float64)
    return float(d.mean()), _se(d, owner)


def _se(x: np.ndarray, owner: np.ndarray | None) -> float:
    if len(x) < 2:
        return 0.0
    if owner is None:
        return float(x.std(ddof=1) / np.sqrt(len(x)))
    # cluster (basket) standard error of a mean of correlated cases
    tot = np.bincount(owner, weights=x)
    n = np.bincount(owner).astype(np.float64)
    keep = n > 0
    tot, n = tot[keep], n[keep]
    mean = x.mean()
    g = len(tot)
    return float(np.sqrt(np.sum((tot - n * mean) ** 2) / (n.sum() ** 2) * g / max(g - 1, 1)))


def every_hidden_dense(
    row_scores: Callable[[np.ndarray], np.ndarray],
    baskets: Sequence[np.ndarray],
    k: int = K,
    candidates: np.ndarray | None = None,
) -> np.ndarray:
    """Top-k ids of every hidden-product case of a linear item-item model.

    ``row_scores(ids) -> (len(ids), V)`` float scores each id gives every candidate; a query scores
    the sum of its products' rows, so each case is the basket's sum minus the hidden product's row.
    The query's own products (the basket less the hidden one) and ids outside ``candidates`` (a bool
    mask, default all) are excluded; ties go to the lower id. Cases come in :func:`every_hidden`'s order.
    """
    out = []
    for ids in baskets:
        rows = np.asarray(row_scores(ids), dtype=np.float64)
        total = rows.sum(0)
        s = total[None, :] - rows
        if candidates is not None:
            s[:, ~candidates] = -np.inf
        for j in range(len(ids)):
            s[j, np.delete(ids, j)] = -np.inf
        out.append(top_ids(s, k))
    return np.concatenate(out) if out else np.zeros((0, k), np.int64)


def top_ids(s: np.ndarray, k: int) -> np.ndarray:
    """Top-k column ids per row, best first, ties by the lower id; -inf columns are never returned."""
    n, v = s.shape
    part = np.argpartition(-s, k - 1, axis=1)[:, :k]
    # ties at the k-th score: redo those rows exactly (rare with real-valued scores)
    sc = np.take_along_axis(s, part, 1)
    order = np.lexsort((part, -sc), axis=1)
    ids = np.take_along_axis(part, order, 1)
    kth = np.take_along_axis(sc, order, 1)[:, -1]
    tie = (s == kth[:, None]).sum(1) > (np.take_along_axis(sc, order, 1) == kth[:, None]).sum(1)
    for r in np.flatnonzero(tie):
        ids[r] = np.lexsort((np.arange(v), -s[r]))[:k]
    ids = ids.astype(np.int64)
    ids[~np.isfinite(np.take_along_axis(s, ids, 1))] = -1
    return ids


# ------------------------------------------------------------------------------------ the section


def dense_ease(ids: np.ndarray, offsets: np.ndarray, n_items: int, m: int, lam: float):
    """Dense EASE over the ``m`` most bought: (B, rows, seconds, peak bytes of the fit by tracemalloc)."""
    import time
    import tracemalloc

    from likewise.space.itemitem import covered_rows, ease_weights, gram_matrix

    counts = np.bincount(ids, minlength=n_items)
    rows = covered_rows(counts, m)
    t0 = time.perf_counter()
    tracemalloc.start()
    b = ease_weights(gram_matrix(ids, offsets, rows, n_items), lam)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return b, rows, time.perf_counter() - t0, peak


def dense_rows(b: np.ndarray, rows: np.ndarray, n_items: int):
    """``row_scores`` of :func:`every_hidden_dense` for a dense ``B`` over ``rows``, and its candidates."""
    pos = np.full(n_items, -1, dtype=np.int64)
    pos[rows] = np.arange(len(rows))
    cand = np.zeros(n_items, dtype=bool)
    cand[rows] = True

    def row_scores(ids):
        out = np.zeros((len(ids), n_items))
        p = pos[ids]
        ok = p >= 0
        out[np.ix_(np.flatnonzero(ok), rows)] = b[p[ok]]
        return out

    return row_scores, cand


def run_completion(train, val, test_baskets, val_baskets, n_items, args, log, out, extra_models=()):
    """Both protocols for every model; EASE and the head + tail model over a penalty grid.

    ``train`` and ``val`` are packed baskets ``(ids, offsets)``: all training baskets, and those less
    each household's latest (the validation slice, ``val_baskets``, cut as the test is). Each penalty is
    fitted twice: on ``val`` (scored every-product-hidden on ``val_baskets``: the choice) and on
    ``train`` (scored on the test baskets). ``extra_models`` are ``(name, recommend, seconds)`` with
    ``recommend(queries) -> (n, K) ids``: likewise, co-counts, ALS.
    """
    import time
    import tracemalloc

    from likewise.space.itemitem import fit_itemitem

    q1, h1 = one_hidden(test_baskets)
    qa, ha, own = every_hidden(test_baskets)
    vq, vh, vown = every_hidden(val_baskets)
    log(
        f"completion: {len(test_baskets):,} held-out baskets with two products or more bought >= 5 times; "
        f"one hidden (seed 0): {len(h1):,} cases; every product hidden: {len(ha):,} cases "
        f"(validation: {len(vh):,} cases of {len(val_baskets):,} baskets)"
    )
    res = out.setdefault("completion", {})
    gains: dict[str, np.ndarray] = {}

    def report(name, one, every, secs, extra=""):
        a, b = summary(hits(one, h1)), summary(hits(every, ha), own)
        gains[name] = hits(every, ha)
        res[name] = {"one_hidden": a, "every_hidden": b, "seconds": secs}
        log(
            f"  {name:<44} one hidden HR@10 {a['hr@10']:.4f} NDCG@10 {a['ndcg@10']:.4f}  "
            f"every hidden HR@10 {b['hr@10']:.4f} "
            f"+- {b['hr_se']:.4f}  NDCG@10 {b['ndcg@10']:.4f}  ({secs:.0f} s){extra}"
        )

    for name, recommend, secs in extra_models:
        report(name, recommend(q1), recommend(qa), secs)
    lams = [float(x) for x in args.ease_lambdas.split(",")]
    best_dense = None
    for m in [int(x) for x in args.ease_items.split(",") if x]:
        chosen, best_v = None, -1.0
        for lam in lams:
            b, rows, fs, peak = dense_ease(*val, n_items, m, lam)
            v = summary(hits(every_hidden_dense(dense_rows(b, rows, n_items)[0], val_baskets), vh), vown)
            del b
            if v["hr@10"] > best_v:
                chosen, best_v = lam, v["hr@10"]
            b, rows, fs, peak = dense_ease(*train, n_items, m, lam)
            rs, cand = dense_rows(b, rows, n_items)
            t0 = time.perf_counter()
            every = every_hidden_dense(rs, test_baskets, candidates=cand)
            one = np.concatenate([_dense_one(b, rows, n_items, q) for q in _chunks(q1, 256)])
            del b
            report(
                f"EASE dense {m:,} items, lambda {lam:g}",
                one,
                every,
                fs + time.perf_counter() - t0,
                f"  validation {v['hr@10']:.4f}; fit {fs:.0f} s, peak {peak / 2**30:.2f} GiB",
            )
            res[f"EASE dense {m:,} items, lambda {lam:g}"]["validation_hr@10"] = v["hr@10"]
        name = f"EASE dense {m:,} items, lambda {chosen:g}"
        log(f"  -> EASE dense {m:,} items: lambda {chosen:g} chosen on the validation slice")
        res[f"EASE dense {m:,} items (chosen)"] = res[name]
        hr = res[name]["every_hidden"]["hr@10"]
        if best_dense is None or hr > res[best_dense]["every_hidden"]["hr@10"]:
            best_dense = name
    for m in [int(x) for x in args.tail_items.split(",") if x]:
        chosen, best_v = None, -1.0
        for lam in lams:
            vm = fit_itemitem(*val, np.bincount(val[0], minlength=n_items), lam, max_items=m,
                              tail_min_count=args.tail_min_count)  # fmt: skip
            v = summary(hits(_top(vm, vq), vh), vown)
            del vm
            if v["hr@10"] > best_v:
                chosen, best_v = lam, v["hr@10"]
            t0 = time.perf_counter()
            tracemalloc.start()
            model = fit_itemitem(*train, np.bincount(train[0], minlength=n_items), lam, max_items=m,
                                 tail_min_count=args.tail_min_count)  # fmt: skip
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            fs = time.perf_counter() - t0
            name = f"EASE head {m:,} + tail >= {args.tail_min_count}, lambda {lam:g}"
            report(
                name,
                _top(model, q1),
                _top(model, qa),
                time.perf_counter() - t0,
                f"  validation {v['hr@10']:.4f}; {len(model.items):,} rows, fit {fs:.0f} s, "
                f"peak {peak / 2**30:.2f} GiB, {model.nbytes / 2**20:.0f} MiB saved",
            )
            res[name]["validation_hr@10"] = v["hr@10"]
        log(f"  -> EASE head {m:,} + tail: lambda {chosen:g} chosen on the validation slice")
        res[f"EASE head {m:,} + tail (chosen)"] = res[
            f"EASE head {m:,} + tail >= {args.tail_min_count}, lambda {chosen:g}"
        ]
    if best_dense is not None:  # paired differences with the best dense EASE (its penalty chosen)
        chosen_rows = [n for n, *_ in extra_models] + [
            k for k, v in res.items() if "lambda" in k and any(v is res[c] for c in res if "(chosen)" in c)
        ]
        for name in chosen_rows:
            if name != best_dense:
                d, se = paired(gains[name], gains[best_dense], own)
                log(f"  every hidden: {name} minus {best_dense}: {d:+.4f} +- {se:.4f}")


def _chunks(xs, n):
    for a in range(0, len(xs), n):
        yield xs[a : a + n]


def _dense_one(b, rows, n_items, queries):
    pos = np.full(n_items, -1, dtype=np.int64)
    pos[rows] = np.arange(len(rows))
    s = np.full((len(queries), n_items), -np.inf)
    s[:, rows] = 0.0
    for r, q in enumerate(queries):
        p = pos[q]
        p = p[p >= 0]
        if len(p):
            s[r, rows] += b[p].sum(0)
        s[r, q] = -np.inf
    return top_ids(s, K)


def _top(model, queries):
    ids, sc = model.top_k(queries, K)
    ids[~np.isfinite(sc)] = -1
    return ids
