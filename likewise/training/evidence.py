"""How much evidence a product's similarity needs: the ``shrink`` of ``similar``, chosen on held-out baskets.

Skip-gram gives a product seen in two baskets a vector as long as one seen in thousands, and such a
vector sits close to the popular products it was bought with: by plain cosine, the best sellers'
neighbours are products bought twice. :meth:`likewise.Embeddings.similar` therefore weighs evidence in a
space trained on baskets: cosines of the vectors less their count-weighted mean, each candidate's shrunk
by ``count / (count + shrink)``.

``shrink`` is chosen here, after training, on the held-out slice that ``epochs="auto"`` and the
completion model use (:func:`likewise.training.auto.hold_out`): one product of each held-out
basket asks for its 10 most similar products, and each answer that is in the rest of the basket counts
one, less the chance that a product that popular is in a basket that size anyway. The mean of these
*co-purchases beyond chance* is measured for each ``shrink`` of :data:`SHRINK_GRID` (0 to 10 baskets:
its comment says why it stops there); going up the grid,
a larger shrink is kept only when it beats the one kept so far by more than the slice's noise
(:func:`~likewise.training.auto.clearly_better`, paired over the same cases).
Counting raw hits would pick the most popular products whatever the query (they are in most baskets);
subtracting chance leaves the answers that go with the query.

The final tables were trained on the held-out baskets too (as the completion model's comparison without
trials is), which favours answers seen with the query in training; the slice's products are sampled, so
the choice stays the comparison of one rule against another on the same cases. Sequence spaces (text,
sessions) and corpora too small to hold baskets out keep plain cosine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._arrays import unique
from ..space.search import centred_unit_rows, evidence_weights
from .auto import HeldOut, clearly_better, hold_out

__all__ = ["SHRINK_GRID", "attach_evidence", "choose_shrink", "excess_hits"]

#: The shrinks compared (baskets); 0 is plain cosine of the centred vectors. The grid stops at 10: past
#: it the held-out count rewards popularity itself rather than products that go with the query. On the
#: generated shop (``likewise datasets retail --customers 5000 --products 1000 --seed 7``) co-purchases
#: beyond chance kept rising up to a shrink of 200 while the share of each product's 10 neighbours in
#: its own aisle fell from 0.912 (shrink 0) and 0.897 (10) to 0.827 (50) and 0.699 (200); on The
#: Complete Journey the count itself peaked at 20 to 50 and the best sellers' category agreement at
#: 10 to 20 (0.458 at 10, 0.452 at 20).
SHRINK_GRID = (0.0, 2.0, 5.0, 10.0)
_K = 10
_BLOCK_SCORES = 16 * 2**20  # floats of one block of cases' scores (64 MiB)
_SHORTLIST = 512


def excess_hits(
    rows: np.ndarray,
    counts: np.ndarray,
    queries: np.ndarray,
    truths: list[np.ndarray],
    n_baskets: int,
    mean_len: float,
    shrinks: tuple[float, ...] = SHRINK_GRID,
    k: int = _K,
    visible: np.ndarray | None = None,
) -> np.ndarray:
    """Co-purchases beyond chance among each case's top ``k``, float64 [len(shrinks), n_cases].

    Parameters
    ----------
    rows : ndarray of float32, shape [V, D]
        The rows similarity is measured on (unit rows).
    counts : ndarray, shape [V]
        Baskets per product (its evidence).
    queries : ndarray of int64, shape [n]
        One product per held-out basket.
    truths : list of ndarray of int64
        The rest of each basket (the query excluded).
    n_baskets, mean_len
        Baskets in training and their mean length: the chance that a product with ``c`` baskets is in a
        basket of length ``L`` is taken as ``min(1, c / n_baskets * L / mean_len)``.
    shrinks : tuple of float
        The candidates' evidence shrinks (:func:`~likewise.space.search.evidence_weights`).
    k : int
        Answers per case.
    visible : ndarray of bool, shape [V], optional
        The rows that may be answers (a typed space's hidden attribute tokens never are).

    Returns
    -------
    ndarray
        Per shrink and case: hits in the top ``k`` less their summed chance.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n = len(queries)
    out = np.zeros((len(shrinks), n), dtype=np.float64)
    weights = [evidence_weights(counts, s) for s in shrinks]
    lens = np.array([len(t) + 1 for t in truths], dtype=np.float64)
    k = min(k, len(rows) - 1)
    m = min(_SHORTLIST, len(rows) - 1)  # the shortlist by plain cosine that the shrinks re-rank
    step = max(1, _BLOCK_SCORES // max(1, len(rows)))
    for start in range(0, n, step):
        stop = min(n, start + step)
        q = np.asarray(queries[start:stop], dtype=np.int64)
        cos = rows[q] @ rows.T
        cos[np.arange(len(q)), q] = -np.inf
        if visible is not None:
            cos[:, ~visible] = -np.inf
        short = np.argpartition(-cos, m - 1, axis=1)[:, :m] if m < cos.shape[1] else None
        # the best cosine left out of the shortlist is at most the shortlist's lowest
        floor = np.take_along_axis(cos, short, axis=1).min(axis=1) if short is not None else None
        for si, w in enumerate(weights):
            if short is None:
                top = _top(_weighed(cos, w), k)
            else:
                # a shrink never raises a score above 0, so the shortlist's weighted top k is exact whenever
                # its k-th score is at least 0 and the best cosine left out; the others are ranked in full
                cand = _weighed(np.take_along_axis(cos, short, axis=1), w[short])
                pick = _top(cand, k)
                top = np.take_along_axis(short, pick, axis=1)
                kth = np.take_along_axis(cand, pick, axis=1).min(axis=1)
                redo = np.flatnonzero(kth < np.maximum(floor, 0.0))
                if len(redo):
                    top[redo] = _top(_weighed(cos[redo], w), k)
            chance = np.minimum(1.0, counts[top] / n_baskets * (lens[start:stop, None] / mean_len))
            for r in range(len(q)):
                out[si, start + r] = np.isin(top[r], truths[start + r]).sum() - chance[r].sum()
    return out


def _weighed(cos: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``cos * w`` with an excluded entry (-inf) kept excluded where its weight is 0 (a count of 0)."""
    out = cos * w
    out[np.isnan(out)] = -np.inf
    return out


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Columns of the ``k`` largest entries of each row (in no order)."""
    return np.argpartition(-scores, k - 1, axis=1)[:, :k]


def choose_shrink(
    vectors: np.ndarray,
    counts: np.ndarray,
    ids: np.ndarray,
    offsets: np.ndarray,
    seed: int,
    visible: np.ndarray | None = None,
    held_out: HeldOut | None | str = "auto",
) -> tuple[float | None, dict[str, Any]]:
    """The ``shrink`` that gives held-out baskets the most co-purchases beyond chance, and the record.

    ``visible`` (bool [V]) marks the rows that are items a query may ask for and be answered with (a
    typed space's attribute tokens are not). ``held_out``: the held-out baskets of ``ids``
    (:attr:`likewise.training.auto.TrainPlan.held_out`, chosen once for the run; ``"auto"``: chosen
    here). Returns ``(None, record)`` when the corpus is too small to hold baskets out.
    """
    held = hold_out(ids, offsets, seed) if isinstance(held_out, str) else held_out
    if held is None:
        return None, {"shrink": None, "reason": "plain cosine: too few baskets to hold some out"}
    va_ids, va_off = held.ids, held.offsets
    rng = np.random.default_rng([seed, 31_337])
    queries, truths = [], []
    for b in range(len(va_off) - 1):
        basket = unique(np.asarray(va_ids[va_off[b] : va_off[b + 1]], dtype=np.int64))
        if visible is not None:
            basket = basket[visible[basket]]
        if len(basket) < 2:
            continue
        q = int(basket[rng.integers(len(basket))])
        queries.append(q)
        truths.append(basket[basket != q])
    if not queries:
        return None, {"shrink": None, "reason": "plain cosine: no held-out basket with two products"}
    n_baskets = max(len(offsets) - 1, 1)
    # a basket's length in items that may answer (a typed space's attribute tokens are not counted)
    tokens = float(offsets[-1]) if visible is None else float(np.count_nonzero(visible[np.asarray(ids)]))
    mean_len = max(tokens, 1.0) / n_baskets
    rows = centred_unit_rows(vectors, counts)
    got = excess_hits(rows, counts, np.asarray(queries), truths, n_baskets, mean_len, visible=visible)
    means = got.mean(axis=1)
    best = 0
    for i in range(1, len(SHRINK_GRID)):  # a larger shrink must win by more than the slice's noise
        if clearly_better(got[i], got[best]):
            best = i
    shrink = SHRINK_GRID[best]
    plain = float(means[0])
    return shrink, {
        "shrink": shrink,
        "centred": True,
        "held_out": len(queries),
        "beyond_chance": {f"{s:g}": round(float(m), 4) for s, m in zip(SHRINK_GRID, means, strict=True)},
        "reason": (
            f"cosine shrunk by baskets / (baskets + {shrink:g}): {float(means[best]):.3f} co-purchases "
            f"beyond chance in the top {_K} of {len(queries):,} held-out baskets, against {plain:.3f} "
            "unshrunk"
            if shrink > 0
            else f"cosine, unshrunk: no shrink did clearly better on {len(queries):,} held-out baskets "
            f"({plain:.3f} co-purchases beyond chance in the top {_K}; best shrink "
            f"{SHRINK_GRID[int(np.argmax(means))]:g}: {float(means.max()):.3f})"
        ),
    }


def attach_evidence(
    emb: Any, ids: np.ndarray, offsets: np.ndarray, config: Any, held_out: HeldOut | None | str = "auto"
) -> None:
    """Choose how ``emb.similar`` weighs evidence and record it in ``emb.meta["similar_evidence"]``
    (on ``held_out``, the run's held-out baskets: :attr:`likewise.training.auto.TrainPlan.held_out`).

    Only spaces trained in basket mode are weighed: in a sequence (text) space the counts are
    occurrences in running text, where plain cosine is what word benchmarks measure.
    """
    import time

    if config.mode != "basket" or len(emb) < 3:
        return
    t0 = time.perf_counter()
    counts = np.asarray(emb.counts, dtype=np.int64)
    types = getattr(emb, "types", None)
    visible = types.mask() if types is not None and types.hidden else None  # attribute tokens never answer
    _, record = choose_shrink(
        np.asarray(emb.vectors), counts, ids, offsets, int(config.seed), visible, held_out
    )
    emb.meta["similar_evidence"] = {**record, "seconds": round(time.perf_counter() - t0, 3)}
