"""What a user gets from likewise's defaults, beside counting baselines and the tuned peers EASE and ALS.

``python bench/defaults_vs_baselines.py --seeds 1,2,3 --sizes full --json defaults.json``
(``--datasets retail,zipf-groups`` for a subset).

Five labelled basket data sets, three generated (drawn afresh for every seed) and two real:

* ``retail`` -- the generated shop of :func:`likewise.data.datasets.retail_orders` (8 departments, Zipf
  popularity, complements, customer tastes); one basket per order, labelled by department (8) and by
  aisle (24; departments are nearly separable, so every vector set scores about 1.0 on them).
* ``zipf-groups`` -- written here, shaped differently: a long-tailed catalogue (3,000 items with one
  Zipf popularity over the whole catalogue) in 30 latent groups of unequal size, baskets of 1 to 40
  items (lognormal), most of them drawn from one group with a little noise, some from two groups and
  some mostly noise. The label is the group.
* ``mixed-tastes`` -- written here, shaped like a topic model: 2,000 items with one home taste each (25
  tastes, the label) and Zipf popularity; every basket draws its own mixture of tastes (Dirichlet, 0.15:
  most baskets mix two or three) and about 8 items from it, one in ten a catalogue-wide staple. No item
  names a basket's tastes alone, so a ranking must combine the basket's items.
* ``debian-deps`` and ``debian-tags`` -- real baskets nobody here wrote (``bench/debian_baskets.py``):
  each Debian package's dependencies (55,700 baskets over 36,601 packages, labelled by archive section)
  and each package's debtags (30,303 baskets over 598 tags, labelled by facet), from this machine's apt
  lists (``apt-get update`` first; skipped, and said so, without them). The same baskets for every seed;
  the split and the training differ.

Each data set is split by :func:`likewise.evaluate.split_sequences` (20 % of the baskets with two or
more distinct items held out, one item of each hidden: leave-one-out completion, the rest is the query),
as ``likewise split`` / ``likewise eval --holdout`` do. Every row ranks the same catalogue (the items of
the training baskets) for the same cases:

* ``likewise`` -- the DEFAULT training, exactly what a user gets: the training baskets written as a CSV
  ``order_id,product`` and ``likewise.train(InputSpec(paths=(csv,), basket_col="order_id",
  item_col="product"), seed=s)``; no mode, dim, epochs, sample or min_count is passed, so the script
  measures whatever the defaults are today. Completion is ``emb.recommend(baskets, k=10)`` (a batch
  of queries; unknown items skipped). A case whose hidden item the default vocabulary dropped
  (``min_count``), or whose query is left with no known item, counts as a miss.
* ``popular``, ``cocount``, ``ppmi``, ``ppmi-svd`` -- :func:`likewise.baselines.counts.fit_baselines` on the
  training baskets, scored by :func:`likewise.evaluate.ranking_metrics` (what ``eval --holdout`` runs);
  ``ppmi-svd`` has the model's dimension.

The two learned peers are configured as a competent user would, each with its one important
hyper-parameter chosen on a held-out slice of the *training* baskets
(:func:`likewise.training.auto.split_validation`, leave-one-out cases, MRR@10; the test cases are never seen),
then refitted on all training baskets (:mod:`likewise.baselines.peers`, through ``fit_baselines``):

* ``ease`` -- EASE (Steck 2019), closed-form item-item ridge regression over the binary basket x item
  matrix, every weight kept; ``lam`` from :func:`likewise.space.itemitem.choose_lambda` (powers of ten around
  the mean item frequency, refined half a decade either side of the best). A catalogue above
  :data:`likewise.space.itemitem.MAX_ITEMS` items is fitted on its most frequent ones (the ``peers`` line
  says so); the rest rank last.
* ``als`` -- confidence-weighted implicit ALS (Hu, Koren & Volinsky 2008) from ``implicit`` (CPU),
  factors = the default model's dimension, implicit's 15 iterations, confidence ``alpha * X``; ``alpha``
  (1, 10, 40, 100) and ``regularization`` (0.1, 1, 10, 100) chosen together, one coordinate at a time
  (:func:`likewise.baselines.peers.coordinate_search`); seeded. A fixed small penalty would be a strawman: 100
  factors on the small data sets overfit below popularity. A query is a new user whose factors are
  solved from its items (implicit's ``recalculate_user``), its own items excluded. Skipped, and said
  so, when ``implicit`` is not installed (``pip install implicit``).

The ``peers`` line of each table gives the chosen ``lam``, ``alpha`` and ``regularization`` per seed.

Metrics: HR@10 and NDCG@10 of the completion, and kNN-10 label accuracy of the item vectors
(:func:`likewise.evaluate.evaluate_labels`: majority label of the 10 nearest items by cosine). The
vectors are the model's; PPMI-SVD's ``U sqrt(S)``; the rows of the co-count and PPMI matrices; EASE's
rows of ``B`` (the weights with which an item predicts every covered item; an uncovered item's row is
zero); ALS's ``item_factors``; ``popular`` has none (n/a). kNN is measured on one item set for every
row, the items of the default model's vocabulary (the ``vocab`` line says what share of the catalogue
that is).

Each table shows mean +- sd over the seeds (the data seed, the split seed and every training seed are
all the seed), the winner per metric, and the margin of the default over the best other row with the
margin in units of the seed-to-seed sd (pooled sd of the two rows, ``sqrt((sd_a**2 + sd_b**2) / 2)``)
and of the sd of the per-seed differences ("paired": the rows share each seed's data, so most of the
seed-to-seed spread is the data's and cancels in the difference); a second line gives the same margin
over the better of the two learned peers (EASE, ALS).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import likewise
from likewise.baselines import counts
from likewise.baselines.counts import fit_baselines
from likewise.data.datasets import retail_orders
from likewise.data.vocab import Vocab
from likewise.evaluate import evaluate_labels, holdout_cases, ranking_metrics, split_sequences
from likewise.space.embeddings import Embeddings

K = 10
TEST_FRACTION = 0.2
DATASETS = ("retail", "zipf-groups", "mixed-tastes", "debian-deps", "debian-tags")
COMPLETION = {"hr": "HR@10", "ndcg": "NDCG@10"}

# Sizes: "full" keeps the whole run (2 data sets x 3 seeds) to a few minutes on 2 cores; "small" is the
# smoke test's (seconds).
SIZES: dict[str, dict[str, dict[str, int]]] = {
    "full": {
        "retail": {"customers": 4_000, "products": 1_000},
        "zipf-groups": {"items": 3_000, "groups": 30, "baskets": 30_000},
        "mixed-tastes": {"items": 2_000, "tastes": 25, "baskets": 20_000},
        "debian": {"max_baskets": 0},  # 0: all of them
    },
    "small": {
        "retail": {"customers": 300, "products": 150},
        "zipf-groups": {"items": 300, "groups": 10, "baskets": 2_000},
        "mixed-tastes": {"items": 300, "tastes": 8, "baskets": 2_000},
        "debian": {"max_baskets": 3_000},
    },
}


@dataclass(frozen=True)
class LabelledBaskets:
    """Baskets of item keys, a label per item, and one line saying what they are."""

    name: str
    baskets: list[list[str]]
    labels: dict[str, dict[str, str]]  # label level ("department", "group") -> item key -> label
    about: str


# --------------------------------------------------------------------------------------------------------
# Data sets
# --------------------------------------------------------------------------------------------------------


def retail_set(seed: int, customers: int, products: int) -> LabelledBaskets:
    """The generated shop's orders as baskets; label = department."""
    data = retail_orders(customers, products, seed=seed)
    return LabelledBaskets(
        "retail",
        data.orders(),
        {level: data.product_labels(level) for level in ("department", "aisle")},
        f"retail_orders({customers:,} customers, {products:,} products), labels: department (8), aisle (24)",
    )


def zipf_group_baskets(
    seed: int,
    items: int = 3_000,
    groups: int = 30,
    baskets: int = 30_000,
    zipf: float = 1.0,
    max_size: int = 40,
) -> LabelledBaskets:
    """A long-tailed catalogue in latent groups, baskets of very different sizes and purity.

    * Group sizes are unequal (a Dirichlet share of the catalogue, at least 5 items each); every item
      belongs to one group (its label). Popularity is one Zipf law ``1 / rank**zipf`` over the whole
      catalogue, ranks shuffled, so a few items are everywhere and most are rare.
    * Basket sizes are lognormal (median about 4), rounded and clipped to ``1..max_size``.
    * 70 % of the baskets are focused (one group, each item replaced by a catalogue-wide popular draw with
      probability 0.1), 20 % mix two groups (the same noise), 10 % are mostly noise (0.7). A group is
      chosen in proportion to its total popularity, an item inside it by its popularity.
    """
    rng = np.random.default_rng(seed)
    share = rng.dirichlet(np.full(groups, 2.0))
    sizes = np.maximum(5, np.floor(share * (items - 5 * groups)).astype(np.int64) + 5)
    sizes[-1] += items - sizes.sum()  # exactly `items` in all
    group_of = np.repeat(np.arange(groups), sizes)
    pop = 1.0 / rng.permutation(np.arange(1, items + 1)) ** zipf
    start = np.r_[0, np.cumsum(sizes)]
    in_group_cdf = [np.cumsum(pop[start[g] : start[g + 1]]) for g in range(groups)]
    group_p = np.array([pop[start[g] : start[g + 1]].sum() for g in range(groups)])
    group_p /= group_p.sum()
    all_cdf = np.cumsum(pop)

    n_items = np.clip(np.rint(rng.lognormal(np.log(4.0), 0.8, baskets)), 1, max_size).astype(np.int64)
    kind = rng.choice(3, size=baskets, p=[0.7, 0.2, 0.1])  # focused, two groups, noisy
    noise = np.array([0.1, 0.1, 0.7])[kind]
    g1 = rng.choice(groups, size=baskets, p=group_p)
    g2 = rng.choice(groups, size=baskets, p=group_p)
    names = [f"g{g:02d}-i{i:04d}" for i, g in enumerate(group_of.tolist())]
    out: list[list[str]] = []
    for b in range(baskets):
        n = int(n_items[b])
        grp = np.where((kind[b] == 1) & (rng.random(n) < 0.5), g2[b], g1[b])
        picks = np.empty(n, dtype=np.int64)
        for j, g in enumerate(grp.tolist()):
            cdf = in_group_cdf[g]
            picks[j] = start[g] + min(int(np.searchsorted(cdf, rng.random() * cdf[-1])), len(cdf) - 1)
        swap = rng.random(n) < noise[b]
        if swap.any():
            u = rng.random(int(swap.sum())) * all_cdf[-1]
            picks[swap] = np.minimum(np.searchsorted(all_cdf, u), items - 1)
        out.append([names[i] for i in dict.fromkeys(picks.tolist())])
    labels = {"group": {names[i]: f"g{g:02d}" for i, g in enumerate(group_of.tolist())}}
    return LabelledBaskets(
        "zipf-groups",
        out,
        labels,
        f"zipf_group_baskets({items:,} items in {groups} groups, {baskets:,} baskets of 1..{max_size}), "
        f"label = group ({groups})",
    )


def mixed_taste_baskets(
    seed: int, items: int = 2_000, tastes: int = 25, baskets: int = 20_000, alpha: float = 0.15
) -> LabelledBaskets:
    """Baskets that mix several tastes (a topic model): see the module docstring.

    Each item has a home taste (uniform) and a Zipf popularity ``1 / rank**0.9`` (ranks shuffled). A
    basket draws taste shares from ``Dirichlet(alpha)`` and ``Poisson(8)`` items (clipped to 2..60):
    each item a taste by the shares, then an item of that taste by popularity; with probability 0.1 a
    catalogue-wide popular item instead. Repeats collapse.
    """
    rng = np.random.default_rng(seed)
    home = rng.integers(tastes, size=items)
    pop = 1.0 / rng.permutation(np.arange(1, items + 1)) ** 0.9
    names = [f"t{h:02d}-i{i:04d}" for i, h in enumerate(home.tolist())]
    members = [np.flatnonzero(home == t) for t in range(tastes)]
    cdfs = [np.cumsum(pop[m]) for m in members]
    all_cdf = np.cumsum(pop)
    sizes = np.clip(rng.poisson(8.0, baskets), 2, 60)
    out: list[list[str]] = []
    for b in range(baskets):
        share = rng.dirichlet(np.full(tastes, alpha))
        picks = []
        for t in rng.choice(tastes, size=int(sizes[b]), p=share).tolist():
            if rng.random() < 0.1:
                picks.append(min(int(np.searchsorted(all_cdf, rng.random() * all_cdf[-1])), items - 1))
            elif len(members[t]):
                c = cdfs[t]
                picks.append(int(members[t][min(int(np.searchsorted(c, rng.random() * c[-1])), len(c) - 1)]))
        out.append([names[i] for i in dict.fromkeys(picks)])
    labels = {"taste": {names[i]: f"t{h:02d}" for i, h in enumerate(home.tolist())}}
    return LabelledBaskets(
        "mixed-tastes",
        out,
        labels,
        f"mixed_taste_baskets({items:,} items, {tastes} tastes, {baskets:,} baskets, alpha {alpha}), "
        f"label = home taste ({tastes})",
    )


def debian_set(name: str, seed: int, max_baskets: int) -> LabelledBaskets:
    """``debian-deps`` or ``debian-tags`` (``bench/debian_baskets.py``); ``max_baskets`` > 0 keeps a seeded
    sample of that many baskets (the smoke cut)."""
    from debian_baskets import debian_sets, source_digest

    baskets, labels = debian_sets()[name]
    if max_baskets and len(baskets) > max_baskets:
        keep = np.random.default_rng(seed).choice(len(baskets), size=max_baskets, replace=False)
        baskets = [baskets[i] for i in sorted(keep.tolist())]
    items = {x for b in baskets for x in b}
    level = next(iter(labels))
    return LabelledBaskets(
        name,
        baskets,
        {level: {k: v for k, v in labels[level].items() if k in items}},
        f"{name}: {len(baskets):,} baskets over {len(items):,} items from Debian's package list "
        f"(sha256 {source_digest()}), label = {level} ({len(set(labels[level].values()))})",
    )


def make_data(name: str, seed: int, sizes: dict[str, dict[str, int]]) -> LabelledBaskets:
    """One data set by name, drawn with ``seed``."""
    if name == "retail":
        return retail_set(seed, **sizes["retail"])
    if name == "mixed-tastes":
        return mixed_taste_baskets(seed, **sizes["mixed-tastes"])
    if name.startswith("debian-"):
        return debian_set(name, seed, **sizes["debian"])
    return zipf_group_baskets(seed, **sizes["zipf-groups"])


# --------------------------------------------------------------------------------------------------------
# Rows: the default model, and every peer of likewise.baselines.counts.PEERS as it is declared there
# --------------------------------------------------------------------------------------------------------


def train_default(
    train: Sequence[Sequence[str]], seed: int, tmp: Path, overrides: dict[str, Any] | None = None
) -> Embeddings:
    """The default training on a CSV log ``order_id,product``: only the seed is given."""
    path = tmp / "train.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["order_id", "product"])
        for i, basket in enumerate(train):
            for item in basket:
                w.writerow([i + 1, item])
    spec = likewise.InputSpec(paths=(str(path),), basket_col="order_id", item_col="product")
    # cache_dir only keeps the compiled corpus out of ~/.cache; it is no training parameter
    return likewise.train(spec, seed=seed, cache_dir=tmp / "cache", **(overrides or {}))


class DefaultModelRecommender:
    """The model as a :class:`likewise.baselines.counts.Recommender` over the training catalogue's ids.

    Queries go through :meth:`Embeddings.recommend` (what a user calls), unknown items skipped; a query
    with no known item, and a slot the model cannot fill, get id -1 (never a hit).
    """

    name = "likewise"

    def __init__(self, emb: Embeddings, keys: Sequence[str]) -> None:
        self.emb = emb
        self.keys = list(keys)
        self.index = {key: i for i, key in enumerate(self.keys)}
        self.n_items = len(self.keys)
        self.n_empty = 0

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        known = self.emb.vocab.index
        queries = [[self.keys[i] for i in c.tolist() if self.keys[i] in known] for c in contexts]
        rows = [r for r, q in enumerate(queries) if q]
        self.n_empty = len(queries) - len(rows)
        out = np.full((len(contexts), k), -1, dtype=np.int64)
        if rows:
            res = self.emb.recommend([queries[r] for r in rows], k=k)
            for r, got in zip(rows, res.keys, strict=True):
                out[r, : len(got)] = [self.index[x] for x in got]
        return out


def row_names() -> tuple[str, ...]:
    """Every row, in the order of the tables: the default model, then the declared peers."""
    return ("likewise", *counts.PEERS.names)


def learned() -> tuple[str, ...]:
    """The learned peers (each tuned on a held-out slice of the training baskets)."""
    return tuple(p.name for p in counts.PEERS if p.learned)


def fit_peers(
    train_ids: list[np.ndarray], n_items: int, dim: int, seed: int
) -> tuple[dict[str, Any], dict[str, float]]:
    """Every available peer of :data:`likewise.baselines.counts.PEERS` fitted on the training part, and the
    seconds: the count baselines together (they share one count), each learned peer on its own."""
    secs: dict[str, float] = {}
    t0 = time.perf_counter()
    base = fit_baselines(
        train_ids, n_items, dim=dim, which=[p.name for p in counts.PEERS if not p.learned], seed=seed
    )
    secs["baselines"] = time.perf_counter() - t0
    for peer in counts.PEERS:
        if peer.learned and peer.available:
            t0 = time.perf_counter()  # the held-out choice of its hyper-parameters and the refit
            base.update(fit_baselines(train_ids, n_items, dim=dim, which=(peer.name,), seed=seed))
            secs[peer.name] = time.perf_counter() - t0
    return base, secs


def knn_accuracy(
    vectors: np.ndarray | Embeddings, keys: Sequence[str], labels: dict[str, dict[str, str]]
) -> dict[str, float]:
    """kNN-10 majority-label accuracy of rows of ``vectors`` (cosine), per label level.

    Computed by :func:`evaluate_labels` over ``keys`` (a space, or one built from the rows); the result's
    keys are ``knn:<level>``.
    """
    if isinstance(vectors, Embeddings):
        emb = vectors
    else:
        emb = Embeddings(np.ascontiguousarray(vectors, dtype=np.float32), Vocab(list(keys)))
    return {
        f"knn:{level}": float(evaluate_labels(emb, {k: lab[k] for k in keys}, k=K)["accuracy"])
        for level, lab in labels.items()
    }


def metric_names(labels: dict[str, dict[str, str]]) -> dict[str, str]:
    """Metric key -> column title, completion first, then one kNN column per label level."""
    return {**COMPLETION, **{f"knn:{level}": f"kNN-10 {level}" for level in labels}}


# --------------------------------------------------------------------------------------------------------
# One data set, one seed
# --------------------------------------------------------------------------------------------------------


def run_once(
    name: str, seed: int, sizes: dict[str, dict[str, int]], overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Every row on one draw of one data set: ``{"rows": {method: {metric: value}}, ...}``."""
    data = make_data(name, seed, sizes)
    split = split_sequences(data.baskets, mode="basket", test_fraction=TEST_FRACTION, seed=seed)
    keys = sorted({x for b in split.train for x in b})
    index = {key: i for i, key in enumerate(keys)}
    contexts, targets, dropped = holdout_cases(index, split)
    train_ids = [np.asarray([index[x] for x in b], dtype=np.int64) for b in split.train if b]
    rows: dict[str, dict[str, float | None]] = {}
    secs: dict[str, float] = {}

    with tempfile.TemporaryDirectory(prefix="likewise-bench-") as tmp:
        t0 = time.perf_counter()
        emb = train_default(split.train, seed, Path(tmp), overrides)
        secs["likewise"] = time.perf_counter() - t0
    model = DefaultModelRecommender(emb, keys)
    m = ranking_metrics(model, contexts, targets, K, n_items=len(keys))
    vocab_keys = list(emb.keys)  # the kNN item set of every row
    rows["likewise"] = {"hr": m["hr"], "ndcg": m["ndcg"], **knn_accuracy(emb, vocab_keys, data.labels)}
    vocab_rows = np.asarray([index[x] for x in vocab_keys], dtype=np.int64)

    base, peer_secs = fit_peers(train_ids, len(keys), emb.dim, seed)
    secs.update(peer_secs)
    peers: dict[str, dict[str, Any]] = {}
    for bname, rec in base.items():
        m = ranking_metrics(rec, contexts, targets, K, n_items=len(keys))
        if hasattr(rec, "chosen"):  # a learned peer: what it chose on its held-out slice
            peers[bname] = rec.chosen()
        # its items as vectors (co-count and PPMI rows, U sqrt(S), EASE's B, ALS's factors); popular: none
        vec = rec.item_rows(vocab_rows) if hasattr(rec, "item_rows") else None
        if vec is None:
            knn: dict[str, float | None] = {
                key: None for key in metric_names(data.labels) if key not in COMPLETION
            }
        else:
            knn = knn_accuracy(vec, vocab_keys, data.labels)
        rows[bname] = {"hr": m["hr"], "ndcg": m["ndcg"], **knn}

    cfg = emb.report.trained_config(emb.config)  # the config's "auto" values as training resolved them
    target_known = float(np.isin(targets, vocab_rows).mean())
    return {
        "seed": seed,
        "about": data.about,
        "metrics": metric_names(data.labels),
        "n_baskets": len(data.baskets),
        "n_train": len(train_ids),
        "n_cases": int(len(targets)),
        "dropped_cases": dropped,
        "catalogue": len(keys),
        "model_vocab": len(vocab_keys),
        "model_target_known": target_known,
        "model_empty_queries": model.n_empty,
        "model_config": {
            k: getattr(cfg, k) for k in ("mode", "dim", "epochs", "sample", "min_count", "negative", "window")
        },
        "model_mode_reason": emb.meta.get("mode_reason"),
        "model_basket_rule": emb.basket_rule,
        "model_completion": emb.completion,
        "model_completion_reason": emb.meta.get("completion_reason"),
        "seconds": secs,
        "peers": peers,
        "rows": rows,
    }


def compare_once(
    name: str, seed: int, sizes: dict[str, dict[str, int]], options: dict[str, Any]
) -> list[str]:
    """The likewise row alone, with the defaults and with ``options``, on one draw: a line each."""
    data = make_data(name, seed, sizes)
    split = split_sequences(data.baskets, mode="basket", test_fraction=TEST_FRACTION, seed=seed)
    keys = sorted({x for b in split.train for x in b})
    index = {key: i for i, key in enumerate(keys)}
    contexts, targets, _ = holdout_cases(index, split)
    lines = []
    for label, over in (("defaults", {}), (json.dumps(options), options)):
        with tempfile.TemporaryDirectory(prefix="likewise-bench-") as tmp:
            t0 = time.perf_counter()
            emb = train_default(split.train, seed, Path(tmp), over)
            secs = time.perf_counter() - t0
        m = ranking_metrics(DefaultModelRecommender(emb, keys), contexts, targets, K, n_items=len(keys))
        knn = knn_accuracy(emb, list(emb.keys), data.labels)
        shown = "  ".join(f"{k.replace('knn:', 'kNN-10 ')} {v:.4f}" for k, v in knn.items())
        lines.append(
            f"{name} seed {seed} {label:<22} HR@10 {m['hr']:.4f}  NDCG@10 {m['ndcg']:.4f}  {shown}  "
            f"(completion {emb.completion}, {emb.report.epochs.value} passes, {secs:.0f} s)"
        )
    return lines


# --------------------------------------------------------------------------------------------------------
# Summary and table
# --------------------------------------------------------------------------------------------------------


def _mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(xs, dtype=np.float64)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean, sd, winners and the default's margin over the best other row, per metric."""
    methods = [m for m in row_names() if m in runs[0]["rows"]]
    metrics = runs[0]["metrics"]
    stats: dict[str, dict[str, dict[str, Any] | None]] = {}
    for meth in methods:
        stats[meth] = {}
        for metric in metrics:
            vals = [r["rows"][meth][metric] for r in runs]
            if any(v is None for v in vals):
                stats[meth][metric] = None
                continue
            mean, sd = _mean_sd(vals)
            stats[meth][metric] = {"mean": mean, "sd": sd, "values": vals}
    winners, margins, peer_margins = {}, {}, {}
    for metric in metrics:
        have = {m: s[metric] for m, s in stats.items() if s[metric] is not None}
        best = max(v["mean"] for v in have.values())
        winners[metric] = " = ".join(m for m, v in have.items() if v["mean"] == best)
        margins[metric] = _margin(have, [m for m in have if m != "likewise"])
        peers = [m for m in learned() if m in have]
        if peers:
            peer_margins[metric] = _margin(have, peers)
    return {
        "methods": methods,
        "metrics": metrics,
        "stats": stats,
        "winners": winners,
        "margins": margins,
        "peer_margins": peer_margins,
    }


def _margin(have: dict[str, dict[str, Any]], rivals: Sequence[str]) -> dict[str, Any]:
    """The default's margin over the best of ``rivals`` (by mean), in sds and paired sds."""
    rival = max(rivals, key=lambda m: have[m]["mean"])
    me, them = have["likewise"], have[rival]
    diff = me["mean"] - them["mean"]
    pooled = math.sqrt((me["sd"] ** 2 + them["sd"] ** 2) / 2)
    paired = [a - b for a, b in zip(me["values"], them["values"], strict=True)]
    paired_sd = _mean_sd(paired)[1]
    return {
        "best_baseline": rival,
        "margin": diff,
        "pooled_sd": pooled,
        "margin_in_sd": diff / pooled if pooled > 0 else None,
        "paired_diff_sd": paired_sd,
        "margin_in_paired_sd": diff / paired_sd if paired_sd > 0 else None,
    }


def _margin_line(title: str, margins: dict[str, dict[str, Any]], names: dict[str, str]) -> str:
    parts = []
    for metric, label in names.items():
        if metric not in margins:
            continue
        g = margins[metric]
        rel = "n/a sd" if g["margin_in_sd"] is None else f"{g['margin_in_sd']:+.1f} sd"
        if g["margin_in_paired_sd"] is not None:
            rel += f", paired {g['margin_in_paired_sd']:+.1f} sd"
        parts.append(f"{label} {g['margin']:+.4f} vs {g['best_baseline']} ({rel})")
    return f"{title}: " + "; ".join(parts)


def _peers_line(runs: list[dict[str, Any]]) -> str:
    """The hyper-parameters the peers chose on their held-out slices, per seed."""
    bits = []
    for name in learned():
        if not all(name in r["peers"] for r in runs):
            continue
        chosen = [k for k in runs[0]["peers"][name] if k not in ("tried", "note")]
        for i, key in enumerate(chosen):  # "ease lam=1/10", "als alpha=10/40", "regularization=1/1"
            values = "/".join(f"{r['peers'][name][key]:g}" for r in runs)
            bits.append(f"{name + ' ' if i == 0 else ''}{key}={values}")
        bits += sorted({r["peers"][name].get("note", "") for r in runs} - {""})
    return "   peers (chosen on a held-out slice of the training baskets, per seed): " + "; ".join(bits)


def format_table(name: str, runs: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    """The printed table of one data set."""
    r0 = runs[0]
    seeds = ",".join(str(r["seed"]) for r in runs)
    mean = lambda key: float(np.mean([r[key] for r in runs]))  # noqa: E731
    # the defaults as resolved per seed (they may adapt to the data): values joined by "/" when they differ
    cfg = {
        key: "/".join(dict.fromkeys(str(r["model_config"][key]) for r in runs)) for key in r0["model_config"]
    }
    names = summary["metrics"]
    lines = [
        f"== {name}: {r0['about']}; seeds {seeds}",
        f"   {mean('n_baskets'):,.0f} baskets, {mean('n_train'):,.0f} train, {mean('n_cases'):,.0f} "
        f"held-out cases; catalogue {mean('catalogue'):,.0f} items (means over seeds)",
        "   likewise defaults: "
        + " ".join(f"{key}={v}" for key, v in cfg.items())
        + " basket_rule="
        + "/".join(r["model_basket_rule"] for r in runs)
        + " completion="
        + "/".join(r.get("model_completion", "?") for r in runs)
        + f" ({r0['model_mode_reason']})",
        f"   vocab: {mean('model_vocab') / mean('catalogue'):.1%} of the catalogue; hidden item known to "
        f"the model in {mean('model_target_known'):.1%} of cases; {mean('model_empty_queries'):.0f} "
        "queries with no known item",
        _peers_line(runs),
        "",
        f"{'method':<10}" + "".join(f"{names[m]:>20}" for m in names),
        "-" * (10 + 20 * len(names)),
    ]
    for meth in summary["methods"]:
        cells = []
        for metric in names:
            s = summary["stats"][meth][metric]
            cells.append(f"{'n/a':>20}" if s is None else f"{s['mean']:>13.4f} ± {s['sd']:.4f}")
        lines.append(f"{meth:<10}" + "".join(cells))
    for peer in counts.PEERS:
        if peer.name not in summary["methods"]:
            lines.append(f"{peer.name:<10}  skipped: {peer.missing()}")
    lines.append(f"{'winner':<10}" + "".join(f" {summary['winners'][m]:>19}" for m in names))
    lines.append(_margin_line("likewise - best other", summary["margins"], names))
    if summary["peer_margins"]:
        title = f"likewise - best peer ({', '.join(learned())})"
        lines.append(_margin_line(title, summary["peer_margins"], names))
    secs = {k: float(np.mean([r["seconds"][k] for r in runs])) for k in r0["seconds"]}
    lines.append("seconds per seed: " + ", ".join(f"{k} {v:.1f}" for k, v in secs.items()))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="1,2,3", help="comma-separated seeds (data, split and training)")
    p.add_argument("--sizes", choices=sorted(SIZES), default="full")
    p.add_argument(
        "--datasets",
        default=",".join(DATASETS),
        help=f"comma-separated, of: {', '.join(DATASETS)} (the Debian ones need apt's lists)",
    )
    p.add_argument("--json", type=Path, default=None, help="write every number here")
    p.add_argument(
        "--min-count",
        type=int,
        default=None,
        help="a probe, not the defaults: train the likewise row with this min_count",
    )
    p.add_argument(
        "--compare",
        default=None,
        metavar="JSON",
        help="likewise rows only: the defaults beside likewise trained with these options, per seed "
        "(e.g. '{\"max_context\": 50}': what a change of default did)",
    )
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    bad = [n for n in names if n not in DATASETS]
    if bad or not seeds:
        p.error(f"unknown data set {bad[0]!r}" if bad else "--seeds is empty")
    for peer in counts.PEERS:
        if not peer.available:
            print(f"{peer.name} row skipped: {peer.missing()}", file=sys.stderr)
    report: dict[str, Any] = {
        "sizes": args.sizes,
        "seeds": seeds,
        "k": K,
        "test_fraction": TEST_FRACTION,
        "cpus": os.cpu_count(),
        "likewise": likewise.__version__,
        "datasets": {},
    }
    t_all = time.perf_counter()
    for name in names:
        if name.startswith("debian-"):
            try:
                from debian_baskets import packages_file

                packages_file()
            except FileNotFoundError as e:
                print(f"== {name}: skipped: {e}\n", flush=True)
                continue
        if args.compare is not None:
            for seed in seeds:
                for line in compare_once(name, seed, SIZES[args.sizes], json.loads(args.compare)):
                    print(line, flush=True)
            continue
        over = {} if args.min_count is None else {"min_count": args.min_count}
        runs = [run_once(name, s, SIZES[args.sizes], over) for s in seeds]
        summary = summarise(runs)
        print(format_table(name, runs, summary), flush=True)
        print()
        report["datasets"][name] = {"runs": runs, "summary": summary}
    report["seconds"] = time.perf_counter() - t_all
    print(f"total {report['seconds']:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
