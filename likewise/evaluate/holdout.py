"""Held-out recommendation: the model and the baselines (counts, EASE, ALS) scored on the same test cases.

* :class:`EmbeddingRecommender` -- the space as a :class:`~likewise.baselines.counts.Recommender`.
* :func:`ranking_metrics` -- HR@K, NDCG@K, MRR and coverage of one recommender; :func:`winners`.
* :func:`holdout_cases` / :func:`holdout_report` -- a :class:`~likewise.evaluate.split.Split`'s test part
  as ids, and every row (model, baselines) scored on it.
* :func:`heldout_loss` -- the mean normalised rank of the hidden items (``1 - AUC``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._arrays import unique
from ..baselines.counts import Recommender, VectorRecommender, fit_baselines
from ..errors import InputError
from ..space.affinity import SCORINGS
from ..space.embeddings import Embeddings
from ..space.search import BASKET_RULES, normalise_rows
from .split import Split

__all__ = [
    "METRICS",
    "EmbeddingRecommender",
    "heldout_loss",
    "holdout_cases",
    "holdout_report",
    "ranking_metrics",
    "winners",
]

METRICS = ("hr", "ndcg", "mrr", "coverage")


class EmbeddingRecommender(VectorRecommender):
    """The model as a :class:`~likewise.baselines.counts.Recommender`, scored as :meth:`Embeddings.recommend`
    does.

    By default the space's :attr:`~Embeddings.completion`: the item-item model training kept
    (:meth:`Embeddings.complete_top_k`), else the affinity of :meth:`Embeddings.affinity_top_k` under the
    space's basket rule (spaces trained by :func:`likewise.train` keep the context table it needs), else
    (imported vectors) the cosine to the mean of the context's unit vectors. Context items are excluded;
    ties go to the lower id.

    Parameters
    ----------
    emb : Embeddings
    name : str
    scoring : {"auto", "itemitem", "affinity", "mixture", "product", "cosine"}
        As in :meth:`Embeddings.recommend`.
    """

    def __init__(self, emb: Embeddings, name: str = "model", scoring: str = "auto") -> None:
        if scoring not in SCORINGS:
            raise InputError(f"scoring == {scoring!r}, must be one of {', '.join(map(repr, SCORINGS))}")
        self.name = name
        self.normed_ = emb.normed
        self.n_items = len(emb)
        # "auto": what recommend() answers with by default (the completion training chose)
        self.scoring = emb.completion if scoring == "auto" else scoring
        if self.scoring == "itemitem" and emb.itemitem is None:
            raise InputError("scoring == 'itemitem', but this space has no item-item model")
        self._emb = emb

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """See :class:`~likewise.baselines.counts.Recommender`."""
        if self.scoring == "cosine":
            return super().recommend_ids(contexts, k)
        if self.scoring == "itemitem":
            return self._emb.complete_top_k(contexts, k)[0]
        rule = self.scoring if self.scoring in BASKET_RULES else None
        return self._emb.affinity_top_k(contexts, k, rule=rule)[0]


def ranking_metrics(
    rec: Recommender,
    contexts: Sequence[np.ndarray],
    targets: Sequence[int] | np.ndarray,
    k: int = 10,
    n_items: int | None = None,
) -> dict[str, Any]:
    """Leave-one-out ranking quality of a recommender.

    Parameters
    ----------
    rec : Recommender
    contexts : sequence of int arrays
        The visible items of each test case.
    targets : sequence of int
        One hidden item id per context.
    k : int
        Length of the recommendation list.
    n_items : int, optional
        Catalogue size for coverage (default: ``rec.n_items``).

    Returns
    -------
    dict
        ``hr``: share of cases whose target is in the top ``k``; ``ndcg``: mean ``1 / log2(rank + 1)``
        (rank 1-based; 0 when absent; one relevant item, so the ideal DCG is 1); ``mrr``: mean
        ``1 / rank`` over the top-``k`` list, 0 when the target is absent (i.e. MRR@k, not over the full
        ranking); ``coverage``: share of the catalogue that appears in at least one top-``k`` list;
        ``k``; ``n``: number of cases.
    """
    t = np.asarray(targets, dtype=np.int64).reshape(-1)
    if len(t) != len(contexts):
        raise InputError(f"{len(contexts)} contexts but {len(t)} targets: need one target per context")
    if len(t) == 0:
        raise InputError("no test cases: contexts is empty")
    n_items = int(n_items if n_items is not None else getattr(rec, "n_items", 0))
    if n_items < 1:
        raise InputError("n_items is needed for coverage (the recommender does not say its catalogue size)")
    top = rec.recommend_ids(contexts, k)
    hit = top == t[:, None]
    found = hit.any(axis=1)
    rank = hit.argmax(axis=1) + 1
    return {
        "hr": float(found.mean()),
        "ndcg": float(np.where(found, 1.0 / np.log2(rank + 1.0), 0.0).mean()),
        "mrr": float(np.where(found, 1.0 / rank, 0.0).mean()),
        "coverage": float(len(unique(top)) / n_items),
        "k": int(top.shape[1]),
        "n": int(len(t)),
    }


def winners(rows: Mapping[str, Mapping[str, float]], metrics: Sequence[str] = METRICS) -> dict[str, str]:
    """For each metric, the name of the best row (higher is better); ties joined by ``" = "``.

    Parameters
    ----------
    rows : mapping of str to mapping of str to float
        Row name -> metrics, as ``holdout_report(...)["rows"]``.
    metrics : sequence of str
        The metrics to judge; every row needs each of them.

    Returns
    -------
    dict of str to str
        Metric -> winning row name(s).
    """
    out = {}
    for m in metrics:
        best = max(r[m] for r in rows.values())
        out[m] = " = ".join(n for n, r in rows.items() if r[m] == best)
    return out


def holdout_cases(
    keys_to_ids: Mapping[str, int], split: Split, context_window: int | None = None
) -> tuple[list[np.ndarray], np.ndarray, dict[str, int]]:
    """Test cases of ``split`` as ids of a vocabulary.

    A case whose hidden item is not in the vocabulary is dropped (no model could return it); unknown
    context items are dropped, and a case left with an empty context is dropped too. With
    ``context_window`` only the last that many visible items are kept (sequence mode).

    Parameters
    ----------
    keys_to_ids : mapping of str to int
        The vocabulary (e.g. ``emb.vocab.index``).
    split : Split
    context_window : int, optional
        Visible items kept per case, the last ones; None or 0 keeps them all.

    Returns
    -------
    contexts : list of int64 arrays
    targets : int64 array
    dropped : dict
        ``{"unknown_target": n, "empty_context": n}``.
    """
    contexts: list[np.ndarray] = []
    targets: list[int] = []
    dropped = {"unknown_target": 0, "empty_context": 0}
    for ctx, tgt in zip(split.contexts, split.targets, strict=True):
        t = keys_to_ids.get(tgt)
        if t is None:
            dropped["unknown_target"] += 1
            continue
        c = [keys_to_ids[x] for x in ctx if x in keys_to_ids]
        if context_window:
            c = c[-context_window:]
        if not c:
            dropped["empty_context"] += 1
            continue
        contexts.append(np.asarray(c, dtype=np.int64))
        targets.append(t)
    return contexts, np.asarray(targets, dtype=np.int64), dropped


def holdout_report(
    emb: Embeddings,
    split: Split,
    *,
    k: int = 10,
    baselines: Sequence[str] | None = None,
    context_window: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Score the model and the baselines (fitted on ``split.train``) on the test part.

    Baselines use the model's vocabulary (training items outside it are dropped), so every row ranks
    the same catalogue for the same cases. ``ppmi-svd`` gets the model's dimension, ``als`` as many
    factors; ``ease`` and ``als`` choose their penalty / confidence weight on a held-out slice of
    ``split.train`` (:mod:`likewise.baselines.peers`).

    Parameters
    ----------
    emb : Embeddings
    split : Split
    k : int
        Length of each recommendation list.
    baselines : sequence of str, optional
        Names of :data:`likewise.baselines.counts.PEERS` to fit and score; None (the default): their
        default set (the count baselines and ``ease``, and ``als`` when ``implicit`` is installed).
    context_window : int, optional
        As in :func:`holdout_cases`.
    seed : int
        Seed of the randomized SVD of ``ppmi-svd``, of the held-out slices of ``ease`` and ``als``,
        and of ALS's initial factors.

    Returns
    -------
    dict
        ``{"k", "n", "dropped", "rows": {name: metrics}, "winners": {metric: name}}`` with the metrics
        of :func:`ranking_metrics`. The model's row is ``"model"``, scored as :meth:`Embeddings.recommend`
        scores by default; a space with a context table also gets ``"model-cosine"``, the other
        scoring, because neither wins everywhere: the affinity follows what is bought *together*
        (complements, popularity), the cosine what is *alike* (it generalises to pairs never seen
        together).
    """
    index = emb.vocab.index
    contexts, targets, dropped = holdout_cases(index, split, context_window)
    if len(targets) == 0:
        raise InputError(
            f"no test case has its hidden item and a visible item in the model's vocabulary "
            f"(dropped: {dropped})"
        )
    train_ids = [np.asarray([index[x] for x in s if x in index], dtype=np.int64) for s in split.train]
    recs: dict[str, Recommender] = {"model": EmbeddingRecommender(emb)}
    if emb.context is not None:
        recs["model-cosine"] = EmbeddingRecommender(emb, "model-cosine", scoring="cosine")
    recs.update(
        fit_baselines(
            train_ids, len(emb), dim=emb.dim, which=None if baselines is None else tuple(baselines), seed=seed
        )
    )
    rows = {name: ranking_metrics(r, contexts, targets, k, n_items=len(emb)) for name, r in recs.items()}
    return {
        "k": int(k),
        "n": int(len(targets)),
        "dropped": dropped,
        "rows": rows,
        "winners": winners(rows),
    }


def heldout_loss(emb: Embeddings, contexts: Sequence[np.ndarray], targets: np.ndarray) -> float:
    """Held-out rank loss: the mean normalised rank of each hidden item, ``1 - AUC``.

    Every item outside the case's context is scored by cosine to the mean of the context's unit vectors
    (as :class:`EmbeddingRecommender` does); the hidden item's loss is the share of those other items
    that score above it (ties count one half). 0 means the hidden item always comes first, 0.5 is
    chance. Unlike HR@k it looks at the whole ranking, so it shows both failure modes of a dimension:
    too few dimensions cannot separate items, too many overfit small data.

    Why not the training (negative-sampling) loss: that needs the output vectors, which a saved space
    does not keep; this loss needs only the vectors every query uses and has no scale to tune.

    Parameters
    ----------
    emb : Embeddings
    contexts : sequence of int arrays
        The visible items of each case.
    targets : int array
        One hidden item id per context.

    Returns
    -------
    float
        In ``[0, 1]``; 0.5 is chance.
    """
    t = np.asarray(targets, dtype=np.int64).reshape(-1)
    if len(contexts) != len(t):
        raise InputError(f"{len(contexts)} contexts but {len(t)} targets")
    if len(t) == 0:
        raise InputError("no held-out case")
    normed = emb.normed
    n_items = len(emb)
    total = 0.0
    step = max(1, (1 << 22) // max(1, n_items))
    for a in range(0, len(t), step):
        block = contexts[a : a + step]
        q = np.stack([normed[np.asarray(c, dtype=np.int64)].sum(axis=0) for c in block])
        scores = normalise_rows(q) @ normed.T
        tb = t[a : a + step]
        own = scores[np.arange(len(tb)), tb]
        for r, c in enumerate(block):
            scores[r, np.asarray(c, dtype=np.int64)] = np.nan  # context items are not candidates
        above = (scores > own[:, None]).sum(axis=1)
        ties = (scores == own[:, None]).sum(axis=1) - 1  # minus the hidden item itself
        others = np.array([n_items - 1 - len(unique(c)) for c in block], dtype=np.float64)
        total += float(((above + 0.5 * ties) / np.maximum(others, 1)).sum())
    return total / len(t)
