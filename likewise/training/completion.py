"""Which model completes a basket: the item-item model (EASE) or the affinity, chosen on held-out data.

Training in basket mode fits an item-item model (:mod:`likewise.space.itemitem`) beside the embeddings and
keeps the one of the two that completes held-out baskets better:

1. the held-out slice is the one ``epochs="auto"`` trains its trials without
   (:func:`likewise.training.auto.hold_out`, the same seed, the same leave-one-out cases);
2. EASE is fitted on the rest for a grid of penalties (:func:`likewise.space.itemitem.choose_lambda`),
   over the head (the ``completion_max_items`` most frequent items) when the catalogue is larger; the
   products past it seen ``completion_min_count`` times or more are then added (the tail,
   :func:`likewise.space.itemtail.tail_weights`) with the chosen penalty, and that model is scored;
3. its MRR@10 on the slice is compared with the affinity's after the chosen number of passes (which the
   trials measured); the better one answers ``recommend``, ``complete`` and ``also-bought``
   (ties: the item-item model, which is deterministic); the penalty is refitted on all the baskets.

Without trials (``epochs`` set, or a corpus of 5 M tokens or more) the affinity is measured on the same
held-out cases with the final tables, which were trained on the held-out baskets too: a comparison
biased towards the affinity, so the item-item model replaces it only when it wins all the same. With too
few baskets to hold any out (fewer than 40 with two items or more), or no held-out basket with two
different items (every order repeats one product: no case to rank), the affinity stays.

``completion="affinity"`` skips the fit; ``completion="itemitem"`` keeps the item-item model whatever
the comparison says. Sequence (text) spaces are not fitted: their completion is the affinity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._progress import note
from ..space.itemitem import (
    ItemItem,
    choose_lambda,
    covered_rows,
    describe,
    fit_itemitem,
    gram_matrix,
    lambda_grid,
    reciprocal_ranks,
    tail_ids,
)
from ..space.search import basket_affinity
from .auto import HeldOut, TrainPlan, clearly_better, hold_out, validation_completion
from .loop import RunRecord

__all__ = ["COMPLETIONS", "attach_completion", "fit_completion"]

COMPLETIONS = ("auto", "itemitem", "affinity")


def fit_completion(
    ids: np.ndarray,
    offsets: np.ndarray,
    counts: np.ndarray,
    config: Any,
    affinity_rr: list[float] | None,
    progress: bool = False,
    affinity: Callable[[list[np.ndarray], np.ndarray], np.ndarray] | None = None,
    *,
    leaked: bool = False,
    held_out: HeldOut | None | str = "auto",
) -> tuple[ItemItem | None, dict[str, Any]]:
    """The item-item model to complete baskets with (None: the affinity) and what the manifest says of it.

    Parameters
    ----------
    ids, offsets : ndarray
        The training corpus (packed ids).
    counts : ndarray of int, shape (V,)
        Count of each id.
    config : TrainConfig
        Its ``mode``, ``seed``, ``completion``, ``completion_max_items`` and ``completion_min_count`` are
        read.
    affinity_rr : list of float, optional
        The affinity's reciprocal ranks on the held-out cases (from the ``epochs="auto"`` trials).
    progress : bool
        Say on stderr what is being fitted (it can take tens of seconds on large catalogues).
    affinity : callable, optional
        ``affinity(queries, hidden) -> rr``: the final tables' reciprocal ranks on held-out cases, used
        when there are no trial ranks (``affinity_rr`` is None).
    leaked : bool
        ``affinity_rr`` was scored with tables trained on the held-out baskets too (one run at scale:
        :func:`likewise.training.loop.rule_of_one_run`); the reason says so.
    held_out : HeldOut or None
        The held-out baskets of ``ids`` (:attr:`likewise.training.auto.TrainPlan.held_out_items`, chosen
        once for the run); ``"auto"``: chosen here (:func:`likewise.training.auto.hold_out`).

    Returns
    -------
    model : ItemItem or None
    notes : dict
        ``completion`` ("itemitem" or "affinity"), ``completion_reason`` (one line for the summary) and,
        when a model was fitted, ``itemitem`` (:func:`likewise.space.itemitem.describe`, with the held-out
        MRR@10 per penalty tried).
    """
    choice = config.completion
    if config.mode != "basket":
        return None, {"completion": "affinity", "completion_reason": "sequences: the affinity of the space"}
    if choice == "affinity":
        return None, {"completion": "affinity", "completion_reason": "set by the caller"}
    max_items = int(config.completion_max_items)
    tail_min = int(config.completion_min_count) or None
    counts = np.asarray(counts, dtype=np.int64)
    have = int(np.count_nonzero(counts))
    if have < 2:
        return None, {"completion": "affinity", "completion_reason": "fewer than two items with orders"}
    m = min(have, max_items)
    note(f"fitting the item-item completion (EASE) on {m:,} items ({16 * m * m / 2**20:,.0f} MiB)", progress)
    split = hold_out(ids, offsets, int(config.seed)) if isinstance(held_out, str) else held_out
    tried: dict[str, float] = {}
    ease_mrr, ease_rr = None, np.zeros(0)
    few = "too few baskets to hold some out and compare"
    if split is not None:
        queries, hidden = split.queries, split.hidden
        if len(hidden) == 0:  # every held-out basket repeats one item: no case to rank, no MRR (NaN)
            split = None
            few = "too few baskets with two different items to compare"
    if split is None and choice == "auto":
        return None, {"completion": "affinity", "completion_reason": f"the affinity: {few}"}
    leaked_note = " (trained on them too)" if leaked and affinity_rr is not None else ""
    gram: np.ndarray | None = None
    kept: ItemItem | None = None
    if split is not None:
        tr_ids, tr_off = split.training(ids, offsets)
        rows = covered_rows(counts, max_items)
        gram = gram_matrix(tr_ids, tr_off, rows, len(counts))
        share = (len(split.offsets) - 1) / max(len(offsets) - 1, 1)
        # a slice this small changes the model little: the chosen fit is kept, one inversion fewer
        models: dict[float, ItemItem] | None = {} if share < REFIT_MIN_SHARE else None
        lam, rr, tried = choose_lambda(
            (tr_ids, tr_off),
            queries,
            hidden,
            counts,
            max_items=max_items,
            gram=gram,
            models=models,
        )
        how = f"penalty {lam:g} chosen on {len(hidden):,} held-out baskets"
        if tail_min and len(tail_ids(counts, rows, tail_min)):
            # the penalty is chosen on the head (the tail costs as much as an inversion, per penalty);
            # the model with its tail is the one compared with the affinity, and kept
            with_tail = fit_itemitem(
                tr_ids, tr_off, counts, lam, max_items=max_items, gram=gram, tail_min_count=tail_min
            )
            rr = reciprocal_ranks(with_tail, queries, hidden)
            if models is not None:
                models[lam] = with_tail
            how += " (on the head)"
        ease_rr, ease_mrr = rr, float(rr.mean())
        if models is not None:
            kept = models[lam]
            gram = None
            how += f", fitted without them ({share:.1%} of the baskets)"
        else:
            gram = gram_matrix(split.ids, split.offsets, rows, len(counts), out=gram)  # + the held-out: all
        if affinity_rr is None and affinity is not None and choice == "auto":
            affinity_rr = affinity(queries, hidden).tolist()
            leaked_note = " (trained on them too)"
    else:
        gram = gram_matrix(ids, offsets, covered_rows(counts, max_items), len(counts))
        grid = lambda_grid(gram)
        lam = grid[len(grid) // 2]
        how = f"penalty {lam:g} ({few}: the middle of the grid)"
    model = (
        kept
        if kept is not None
        else fit_itemitem(ids, offsets, counts, lam, max_items=max_items, gram=gram, tail_min_count=tail_min)
    )
    del gram
    cover = _cover(len(model.items), m, have, max_items, tail_min)
    info = {**describe(model, len(counts)), "validation_mrr": tried}
    aff = float(np.mean(affinity_rr)) if affinity_rr else None
    if choice == "itemitem":
        why = f"item-item (EASE) on {cover}, {how}; set by the caller"
    elif ease_mrr is not None and aff is not None:
        if _affinity_wins(np.asarray(affinity_rr, dtype=np.float64), ease_rr, bool(leaked_note)):
            return None, {
                "completion": "affinity",
                "completion_reason": (
                    f"the affinity: held-out MRR@10 {aff:.4f}{leaked_note} against item-item (EASE) "
                    f"{ease_mrr:.4f}"
                ),
                "itemitem_tried": info,
            }
        margin = ", which must win by two standard errors" if leaked_note and aff > ease_mrr else ""
        why = (
            f"item-item (EASE) on {cover}: held-out MRR@10 {ease_mrr:.4f} against the affinity's "
            f"{aff:.4f}{leaked_note}{margin}; {how}"
        )
    else:
        why = f"item-item (EASE) on {cover}, {how}; the space has no affinity to compare with"
    if ease_mrr is not None:
        info["validation_mrr_chosen"] = ease_mrr if math.isfinite(ease_mrr) else None
    return model, {"completion": "itemitem", "completion_reason": why, "itemitem": info}


def _cover(rows: int, head: int, have: int, max_items: int, tail_min: int | None) -> str:
    """What the model covers, for the summary."""
    if have <= max_items:
        return f"{rows:,} items"
    if tail_min and rows > head:
        return (
            f"{rows:,} of {have:,} items (the {head:,} most frequent exactly: completion_max_items; "
            f"{rows - head:,} more seen >= {tail_min} times regressed on them: completion_min_count)"
        )
    return f"{rows:,} items (the {max_items:,} most frequent of {have:,}: completion_max_items)"


#: Below this share of the baskets held out, the penalty's fit on the rest is the model (not refitted
#: on all): at most 2,000 held-out baskets of a large log (1.2 % of the Complete Journey's) change an
#: item-item model little, and the refit was one more inversion (about 4 s at 8,192 items).
REFIT_MIN_SHARE = 0.02


def _affinity_wins(affinity_rr: np.ndarray, ease_rr: np.ndarray, leaked: bool) -> bool:
    """Whether the affinity completes the held-out cases better than the item-item model.

    The item-item model was fitted without the held-out baskets. When the affinity's tables were
    trained on them too (one run at scale), its figure is optimistic, so it must win by two standard
    errors of the paired difference (:func:`likewise.training.auto.clearly_better`); a higher mean is
    enough otherwise. On the Complete Journey the affinity's figure came within 0.001 of EASE's and
    above it in one run of two, while on the test baskets EASE completes better.
    """
    if leaked and len(affinity_rr) == len(ease_rr):
        return clearly_better(affinity_rr, ease_rr)
    return float(np.mean(affinity_rr)) > float(np.mean(ease_rr))


def attach_completion(
    emb: Any,
    ids: np.ndarray,
    offsets: np.ndarray,
    config: Any,
    progress: bool,
    plan: TrainPlan | None = None,
    record: RunRecord | None = None,
) -> None:
    """Fit the completion model of a freshly trained space and attach it; record why in ``emb.meta``.

    ``plan`` holds the held-out baskets chosen for the run (:attr:`TrainPlan.held_out_items`; without
    it they are chosen here). ``record.validation_rr`` are the affinity's held-out reciprocal ranks
    from the trials (None without a held-out slice); ``record.validation_leaked``: they were taken
    after a run that also trained on the held-out baskets (one run at scale). The comparison's outcome
    is recorded (``completion_reason``), the ranks are not.
    """
    import time

    t0 = time.perf_counter()
    types = getattr(emb, "types", None)
    rr = record.validation_rr if record is not None else None
    leaked = record.validation_leaked if record is not None else False
    held: HeldOut | None | str = plan.held_out_items if plan is not None else "auto"

    def affinity(queries: list[np.ndarray], hidden: np.ndarray) -> np.ndarray:
        W, C = np.asarray(emb.vectors), np.asarray(emb.context)
        rule = emb.basket_rule
        bias = np.asarray(emb.affinity_bias, dtype=np.float64)
        if types is not None and types.hidden:  # as recommend ranks: hidden types (tokens) never proposed
            bias = np.where(types.mask(), bias, -np.inf)
        return validation_completion(W, C, bias, queries, hidden, rules=(rule,))[rule]

    scorer = affinity if emb.context is not None else None
    if types is not None and types.hidden:
        # attribute tokens are context, never a completion: the item-item model (and the held-out
        # comparison) sees the baskets' items alone, so tokens cost no rows of its m x m matrices
        visible = types.mask()
        kept = visible[np.asarray(ids)]
        csum = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])
        offsets = csum[np.asarray(offsets)]
        ids = np.asarray(ids)[kept]
        rr = None  # the trials' ranks were taken over baskets with tokens: compare on these instead
    counts = np.where(types.mask(), emb.counts, 0) if types is not None and types.hidden else emb.counts
    model, notes = fit_completion(
        ids, offsets, counts, config, rr, progress, scorer, leaked=leaked, held_out=held
    )
    if model is not None and types is not None and emb.context is not None and config.completion == "auto":
        if isinstance(held, str):
            held = hold_out(ids, offsets, int(config.seed))
        notes["completion_by_type"] = _choose_by_type(emb, model, types, held)
    emb.meta.update(notes)
    emb.meta["completion_seconds"] = time.perf_counter() - t0  # after train_seconds (the passes)
    emb.attach_itemitem(model)


_MIN_TYPE_CASES = 20


def _choose_by_type(emb: Any, model: ItemItem, types: Any, held: HeldOut | None) -> dict[str, str]:
    """In a typed space, the better completion for each visible type: queries asking for one type only
    (``types="article"``: read-next, also-bought among campaigns) rank that type's candidates alone,
    where the item-item model's direct co-occurrences can be far sparser than the whole space's.

    Held-out cases whose hidden item is of the type are ranked among that type's rows by both models
    (the affinity with the final tables, which saw these baskets: a comparison biased towards it); a
    type with fewer than 20 cases keeps the affinity, the completion it had before.
    Returns ``{type: "itemitem" | "affinity"}``.
    """
    if held is None:
        return {}
    queries, hidden = held.queries, held.hidden
    codes = np.asarray(types.codes, dtype=np.int64)
    W, C = np.asarray(emb.vectors), np.asarray(emb.context)
    bias, rule = emb.affinity_bias, emb.basket_rule
    ct = np.ascontiguousarray(C.T)
    out: dict[str, str] = {}
    for t, name in enumerate(types.names):
        if name in types.hidden:
            continue
        cases = [i for i, h in enumerate(hidden.tolist()) if codes[h] == t]
        if len(cases) < _MIN_TYPE_CASES:  # too little evidence to change what this type had
            out[name] = "affinity"
            continue
        allowed = codes == t
        mine = model.scores([queries[i] for i in cases])
        rr_ii, rr_aff = np.zeros(len(cases)), np.zeros(len(cases))
        for j, i in enumerate(cases):
            q, h = queries[i], int(hidden[i])
            aff = basket_affinity(W[q] @ ct, bias, rule)
            for row, rr in ((mine[j].astype(np.float64), rr_ii), (aff, rr_aff)):
                row = np.where(allowed, row, -np.inf)
                row[q] = -np.inf
                if np.isfinite(row[h]):
                    rank = int(np.count_nonzero(row > row[h])) + int(np.count_nonzero(row[:h] == row[h]))
                    rr[j] = 1.0 / (rank + 1) if rank < 10 else 0.0
        out[name] = "affinity" if rr_aff.mean() > rr_ii.mean() else "itemitem"
    return out
