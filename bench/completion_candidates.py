"""Completion candidates on the Complete Journey, every product hidden (bench/_completion_eval.py).

``python bench/completion_candidates.py --model tail --items 15000 --lam 100``

The split and the cases of ``bench/supermarket.py --sections completion`` (every product of each
household's held-out basket hidden in turn, products bought >= 5 times, baskets with two of them);
each candidate is fitted on all training baskets and scored on the test cases (no choice is made
here: the penalties are those ``supermarket.py`` chose on its validation slice). Candidates:

* ``dense``: EASE over the ``--items`` most bought, every weight, penalty ``--lam + --diag * G[i, i]``
  (``--diag`` > 0: a penalty growing with the product's baskets, as EDLAE's dropout emphasis does).
* ``tail``: the head + tail model (``likewise.space.itemitem.fit_itemitem`` with ``tail_min_count``
  ``--min-count``), ``--keep`` weights a row, as training fits it.
* ``--blend W,...`` (with ``tail``): the model's score plus ``W`` times likewise's affinity under its
  basket rule (likewise trained with defaults on the training lines, as ``supermarket.py`` does).

Prints HR@10 (standard error over baskets), NDCG@10, the fit's seconds and peak memory (tracemalloc).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import _completion_eval as ce
import numpy as np
import supermarket as sm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["dense", "tail"], default="tail")
    ap.add_argument("--items", type=int, default=8192, help="dense rows (the head)")
    ap.add_argument("--lam", type=float, default=100.0)
    ap.add_argument("--diag", type=float, default=0.0, help="dense: penalty per basket of the product")
    ap.add_argument("--min-count", type=int, default=5, help="tail: products bought this often or more")
    ap.add_argument("--keep", type=int, default=256, help="tail: weights kept a row")
    ap.add_argument("--blend", default="", help="tail: weights of likewise's affinity (comma list)")
    args = ap.parse_args()
    from likewise.space.itemitem import covered_rows, fit_itemitem, gram_matrix

    cj, h, b, p, ts = sm.load(None)
    test = sm.split(h, b, p, ts)
    _, items, bk = sm.training_baskets(h, b, p, ts, test)
    count = sm.popularity(bk)
    index = {k: i for i, k in enumerate(items.tolist())}
    baskets = ce.heldout_baskets(p[test], b[test], index, count)
    queries, hidden, owner = ce.every_hidden(baskets)
    n = len(items)
    counts = np.bincount(bk.items, minlength=n)
    tracemalloc.start()
    t0 = time.perf_counter()
    if args.model == "dense":
        from scipy.linalg import lapack

        rows = covered_rows(counts, args.items)
        g = np.asfortranarray(gram_matrix(bk.items, bk.offsets, rows, n))
        g[np.diag_indices(len(g))] += args.lam + args.diag * np.diag(g)
        c, info = lapack.spotrf(g, lower=0, overwrite_a=1, clean=0)
        c, info = lapack.spotri(c, lower=0, overwrite_c=1)
        c = np.triu(c) + np.triu(c, 1).T
        c /= -np.diag(c).copy()[None, :]
        np.fill_diagonal(c, 0.0)
        fit_s = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        rs, cand = ce.dense_rows(c, rows, n)
        recs = {0.0: ce.every_hidden_dense(rs, baskets, candidates=cand)}
    else:
        model = fit_itemitem(
            bk.items, bk.offsets, counts, args.lam, max_items=args.items, keep=args.keep,
            tail_min_count=args.min_count,
        )  # fmt: skip
        fit_s = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        weights = [0.0] + [float(w) for w in args.blend.split(",") if w]
        recs = {w: [] for w in weights}
        aff_of = _affinity(cj, test, items) if len(weights) > 1 else None
        for ids in baskets:
            qs = [np.delete(ids, j) for j in range(len(ids))]
            e = model.scores(qs).astype(np.float64)
            for j, q in enumerate(qs):
                e[j, q] = -np.inf
            aff = aff_of(ids) if aff_of is not None else None
            for w in weights:
                recs[w].append(ce.top_ids(e + w * aff if w else e, ce.K))
        recs = {w: np.concatenate(r) for w, r in recs.items()}
        print(f"{len(model.items):,} rows, {model.nbytes / 2**20:.0f} MiB of weights")
    tracemalloc.stop()
    base = None
    for w, r in recs.items():
        g = ce.hits(r, hidden)
        s = ce.summary(g, owner)
        d = "" if base is None else "  minus w=0: {:+.4f} +- {:.4f}".format(*ce.paired(g, base, owner))
        base = g if base is None else base
        print(
            f"{args.model} items {args.items} lam {args.lam:g} diag {args.diag:g} keep {args.keep} "
            f"blend {w:g}: "
            f"HR@10 {s['hr@10']:.4f} +- {s['hr_se']:.4f}  NDCG@10 {s['ndcg@10']:.4f}  "
            f"fit {fit_s:.0f} s, peak {peak / 2**30:.2f} GiB{d}",
            flush=True,
        )


def _affinity(cj, test, items):
    """``aff(basket) -> (len, n)``: likewise's affinity of each case (basket less one product)."""
    import argparse as _a

    emb, _ = sm.trained(_a.Namespace(train_options="{}"), cj, test, print)
    eid = np.array([emb.id_of(k) for k in items.tolist()])
    w, ct = np.asarray(emb.vectors, np.float64), np.asarray(emb.context, np.float64)[eid].T
    bias = np.asarray(emb.affinity_bias, np.float64)[eid]
    rule = emb.basket_rule

    def aff(ids):
        s = w[eid[ids]] @ ct
        if rule == "product":
            out = s.sum(0)[None, :] - s
        else:  # the mixture: log mean exp over the rest of the basket
            mx = s.max(0)
            e = np.exp(s - mx)
            out = np.log(np.maximum(e.sum(0)[None, :] - e, 1e-300) / (len(ids) - 1)) + mx
        return out + bias[None, :]

    return aff


if __name__ == "__main__":
    main()
