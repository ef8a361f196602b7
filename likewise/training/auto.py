"""The defaults that follow the data: the context mode, the subsampling threshold, the number of passes.

Each function answers one question a text-first default would get wrong on baskets, and says why:

- :func:`infer_mode` -- baskets or sequences, from what the input says (a log grouped by a basket column
  with no ordering column is a basket; text and ordered logs are sequences);
- :func:`resolve_sample` -- word2vec's 1e-3 subsampling, raised until at least half the tokens stay, and
  off in basket mode (a catalogue has no stop words);
- :func:`plan_epochs`, :func:`trial_passes`, :func:`split_validation`, :func:`validation_queries`,
  :func:`validation_completion`, :func:`clearly_better` -- ``epochs="auto"``: passes planned from the
  data's size; trials of 10, 20, 40, ... passes scored by leave-one-out completion on a held-out slice
  choose the number of passes and the rule that combines a basket's items (the mixture or the product
  of :func:`likewise.space.search.basket_affinity`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .._arrays import unique
from ..errors import InputError
from ..space.search import BASKET_RULES

__all__ = [
    "EPOCHS_AT_SCALE",
    "HeldOut",
    "TrainPlan",
    "clearly_better",
    "hold_out",
    "infer_mode",
    "kept_share",
    "peek",
    "plan_epochs",
    "plan_training",
    "resolve_sample",
    "split_validation",
    "trial_passes",
    "validation_completion",
    "validation_queries",
]

_SAMPLE_TEXT = 1e-3
_MIN_KEPT_SHARE = 0.5


def kept_share(counts: np.ndarray, sample: float) -> float:
    """Expected share of tokens that subsampling at ``sample`` keeps (word2vec's formula)."""
    from ..kernels.sampling import make_keep_prob

    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    if total <= 0 or sample == 0:
        return 1.0
    return float((make_keep_prob(c, sample).astype(np.float64) * c).sum() / total)


def resolve_sample(counts: np.ndarray, sample: float | None, mode: str) -> tuple[float, str]:
    """The subsampling threshold to train with, and why.

    Parameters
    ----------
    counts : ndarray of int, shape (V,)
        Count of each item.
    sample : float or None
        The user's value; None asks for the default.
    mode : {"sequence", "basket"}
        The resolved context mode.

    Returns
    -------
    sample : float
        An explicit ``sample`` as given. Otherwise 0 in basket mode; in sequence mode word2vec's
        1e-3, raised to the mean frequency ``1 / V`` (so an item no more frequent than average is
        never thinned: in a catalogue of 15 items 1e-3 would drop 86 % of the data) and further, by
        bisection, until at least half the tokens stay. Large text vocabularies keep 1e-3.
    reason : str
        One line for the training summary.
    """
    if sample is not None:
        return float(sample), "set by the caller"
    if mode == "basket":
        return 0.0, "off in basket mode, where every item of a basket is context for the rest"
    c = np.asarray(counts, dtype=np.float64)
    c = c[c > 0]
    if len(c) == 0:
        return _SAMPLE_TEXT, "word2vec's default"
    t, reason = _SAMPLE_TEXT, "word2vec's default for text"
    if 1.0 / len(c) > t:
        t = 1.0 / len(c)
        reason = f"1e-3 raised to 1/{len(c):,}, the mean item frequency (a small vocabulary)"
    if kept_share(c, t) < _MIN_KEPT_SHARE:
        lo, hi = t, 1.0
        while kept_share(c, hi) < _MIN_KEPT_SHARE:  # a single item: nothing but 'off' keeps half
            hi *= 2.0
            if hi > 1e6:
                return 0.0, "off: no threshold keeps half the tokens"
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if kept_share(c, mid) >= _MIN_KEPT_SHARE else (mid, hi)
        t = hi
        reason = f"raised to {t:.3g} so that at least half the tokens stay"
    return t, reason


# Epochs "auto": passes planned from the data's size, and the held-out slice that stops them early.
EPOCHS_AT_SCALE, _EPOCHS_MAX, _SCALE_TOKENS = 5, 50, 5_000_000
_VAL_SHARE, _VAL_MAX_SEQUENCES, _VAL_MIN_SEQUENCES, _VAL_MAX_QUERY_ITEMS = 0.05, 2_000, 40, 20_000


def plan_epochs(n_tokens: int) -> int:
    """Passes that ``epochs="auto"`` plans for a corpus of ``n_tokens``.

    ``5 * sqrt(5e6 / n_tokens)``, within 5..50: word2vec's 5 where data is plentiful (a large text
    corpus), more passes as data gets scarce (a catalogue's baskets), so that the number of updates
    grows with the square root of the data rather than linearly.
    """
    n = max(int(n_tokens), 1)
    return int(min(_EPOCHS_MAX, max(EPOCHS_AT_SCALE, math.ceil(5 * math.sqrt(_SCALE_TOKENS / n)))))


def trial_passes(planned: int) -> list[int]:
    """The numbers of passes ``epochs="auto"`` tries on its held-out slice when it plans ``planned``.

    10, 20, 40, ... below the plan, then the plan itself (``[planned]`` when it is 10 or fewer). Each
    trial trains from the start with the learning rate decayed to its end. The probe this replaces
    scored one run after every pass, half-way down a longer schedule while the learning rate was still
    high: it stopped at 6 to 8 passes where 10 decayed passes completed held-out baskets better on three
    of four data sets of ``bench/defaults_vs_baselines.py`` (retail +0.7, debtags +0.6, mixed tastes
    +0.5 points of HR@10; Zipf groups -0.3), and on debtags it preferred the mixture, which loses about
    2.5 points of HR@10 to the product once decayed.
    """
    planned = int(planned)
    out, passes = [], 2 * EPOCHS_AT_SCALE
    while passes < planned:
        out.append(passes)
        passes *= 2
    return [*out, planned]


@dataclasses.dataclass(frozen=True)
class HeldOut:
    """The held-out baskets of one corpus (:func:`hold_out`): chosen once, read by every step that
    measures on them (the trials of ``epochs="auto"``, the basket rule, the completion model, the
    evidence of ``similar``).

    Attributes
    ----------
    mask : ndarray of bool, shape (S,)
        Which sequences of the corpus are held out.
    ids, offsets : ndarray
        The held-out sequences, packed.
    queries, hidden : list of ndarray, ndarray of int64
        Their leave-one-out completion cases (:func:`validation_queries`).
    """

    mask: np.ndarray
    ids: np.ndarray
    offsets: np.ndarray
    queries: list[np.ndarray]
    hidden: np.ndarray

    def training(self, ids: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rest of the corpus ``ids``/``offsets`` (the one it was chosen from), packed."""
        lengths = np.diff(offsets)
        return _pack(ids, lengths, ~self.mask, ~np.repeat(self.mask, lengths))

    def split(
        self, ids: np.ndarray, offsets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(train ids, offsets, held-out ids, offsets)``, as :func:`split_validation` returns."""
        return (*self.training(ids, offsets), self.ids, self.offsets)


def _pack(
    ids: np.ndarray, lengths: np.ndarray, mask: np.ndarray, tok: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The sequences of ``mask`` (their tokens ``tok``), packed: ids and offsets."""
    off = np.zeros(int(mask.sum()) + 1, dtype=np.int64)
    np.cumsum(lengths[mask], out=off[1:])
    return np.ascontiguousarray(ids[tok], dtype=np.int32), off


def hold_out(ids: np.ndarray, offsets: np.ndarray, seed: int) -> HeldOut | None:
    """Hold out a seeded slice of the sequences with >= 2 items (None: too few to hold any out)."""
    lengths = np.diff(offsets)
    usable = np.flatnonzero(lengths >= 2)
    n_seq = int(len(offsets) - 1)
    # 5 %, but at least 100 (or 10 %) so a small data set's stopping signal is not noise.
    n_val = min(_VAL_MAX_SEQUENCES, max(n_seq * _VAL_SHARE, min(100, n_seq * 0.1)), len(usable) // 2)
    if len(usable) < _VAL_MIN_SEQUENCES or n_val < 1:
        return None
    rng = np.random.default_rng([seed, 7_919])
    val = np.zeros(len(lengths), dtype=bool)
    val[rng.choice(usable, size=int(n_val), replace=False)] = True
    va_ids, va_off = _pack(ids, lengths, val, np.repeat(val, lengths))
    return HeldOut(val, va_ids, va_off, *validation_queries(va_ids, va_off, seed))


def split_validation(
    ids: np.ndarray, offsets: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Hold out a seeded slice of the sequences with >= 2 items: (train ids, offsets, val ids, offsets)."""
    held = hold_out(ids, offsets, seed)
    return None if held is None else held.split(ids, offsets)


def validation_queries(
    ids: np.ndarray, offsets: np.ndarray, seed: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """Leave-one-out completion cases from held-out sequences: (query ids per case, hidden id per case)."""
    rng = np.random.default_rng([seed, 104_729])
    queries, hidden = [], []
    budget = _VAL_MAX_QUERY_ITEMS
    for s in range(len(offsets) - 1):
        seq = np.asarray(ids[offsets[s] : offsets[s + 1]], dtype=np.int64)
        h = int(rng.integers(len(seq)))
        rest = unique(np.delete(seq, h))
        rest = rest[rest != seq[h]]
        if len(rest) == 0:
            continue
        if len(rest) > budget:
            break
        budget -= len(rest)
        queries.append(rest)
        hidden.append(int(seq[h]))
    return queries, np.asarray(hidden, dtype=np.int64)


def validation_completion(
    W: np.ndarray,
    C: np.ndarray,
    bias: np.ndarray,
    queries: Sequence[np.ndarray],
    hidden: np.ndarray,
    k: int = 10,
    rules: Sequence[str] = BASKET_RULES,
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """Reciprocal ranks of leave-one-out completion under each basket rule, as ``recommend`` ranks.

    A query basket ``B`` scores item ``j`` by :func:`likewise.space.search.basket_affinity` (``mixture``:
    ``log mean_{i in B} exp(W[i] . C[j]) + bias[j]``; ``product``: ``sum_{i in B} W[i] . C[j] +
    bias[j]``); the query's own items are excluded. The cases' rows of ``W · C^T`` are one matrix
    product per block of cases (about 64 MiB of scores, :data:`_RANK_BLOCK_BYTES`), and both rules are
    counted in one compiled pass over it (:func:`likewise.kernels.ranks.count_above`, on ``threads``,
    default every core). A case whose rows alone pass that size (one held-out basket of 10,000 items
    against 100,000 candidates: 4 GB) is scored a block of candidate columns at a time, its hidden item's
    column in each: a column's score depends only on its own rows, so the ranks are the same.

    Returns
    -------
    dict
        ``{rule: rr}``: float64 [n], ``1 / rank`` of each hidden item when it is in the top ``k``, else
        0. Its mean is MRR@k; ``(rr > 0).mean()`` is HR@k.
    """
    from ..kernels.ranks import count_above

    unknown = sorted(set(rules) - set(BASKET_RULES))
    if unknown:
        raise InputError(f"rule {unknown[0]!r} is not a basket rule (rules: {', '.join(BASKET_RULES)})")
    if threads is None:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    hidden = np.asarray(hidden, dtype=np.int64)
    rr = {rule: np.zeros(len(hidden), dtype=np.float64) for rule in rules}
    Ct = np.ascontiguousarray(C.T)
    lens = np.array([len(q) for q in queries], dtype=np.int64)
    if len(lens) and lens.min() < 1:
        raise InputError("every held-out query needs at least one item")
    cap = max(1, _RANK_BLOCK_BYTES // (4 * max(1, C.shape[0])))  # rows of scores per block
    ends = np.cumsum(lens)
    start = 0
    while start < len(hidden):  # a block: the cases whose rows fit in cap (at least one)
        before = ends[start - 1] if start else 0
        end = max(start + 1, int(np.searchsorted(ends, before + cap, side="right")))
        rows = np.concatenate([np.asarray(q, dtype=np.int64) for q in queries[start:end]])
        off = np.concatenate([[0], np.cumsum(lens[start:end])])
        if len(rows) > cap:  # one case too long for a block: its candidates a block of columns at a time
            above = _long_case_above(W, Ct, rows, int(hidden[start]), bias, int(threads))
        else:
            above = count_above(W[rows] @ Ct, off, rows, off, hidden[start:end], bias, threads=int(threads))
        for rule in rules:
            rank = above[:, BASKET_RULES_COLUMN[rule]]
            rr[rule][start:end] = np.where(rank < k, 1.0 / (rank + 1.0), 0.0)
        start = end
    return rr


def _long_case_above(
    W: np.ndarray, Ct: np.ndarray, rows: np.ndarray, hidden: int, bias: np.ndarray, threads: int
) -> np.ndarray:
    """:func:`~likewise.kernels.ranks.count_above` of one case whose rows of ``W · C^T`` pass
    :data:`_RANK_BLOCK_BYTES`: the candidates a block of columns at a time, the hidden item's column first
    in each (it is never above itself), the counts summed; int64 [1, 2]."""
    from ..kernels.ranks import count_above

    n_items = Ct.shape[1]
    width = max(2, _RANK_BLOCK_BYTES // (4 * len(rows)))  # columns per block, the hidden one included
    others = np.delete(np.arange(n_items, dtype=np.int64), hidden)
    in_query = np.zeros(n_items, dtype=bool)
    in_query[rows] = True
    w = W[rows]
    off = np.array([0, len(rows)], dtype=np.int64)
    total = np.zeros((1, 2), dtype=np.int64)
    for a in range(0, len(others), width - 1):
        cols = np.concatenate([[hidden], others[a : a + width - 1]])
        excluded = np.flatnonzero(in_query[cols]).astype(np.int64)  # the query's own items in this block
        ex_off = np.array([0, len(excluded)], dtype=np.int64)
        scores = w @ np.ascontiguousarray(Ct[:, cols])
        total += count_above(
            scores, off, excluded, ex_off, np.zeros(1, np.int64), bias[cols], threads=threads
        )
    return total


#: Scores held at once by :func:`validation_completion` (one block of cases' rows of ``W · C^T``).
_RANK_BLOCK_BYTES = 64 * 2**20
#: The column of :func:`likewise.kernels.ranks.count_above`'s result for each rule.
BASKET_RULES_COLUMN = {"product": 0, "mixture": 1}


def clearly_better(a: np.ndarray, b: np.ndarray, z: float = 2.0) -> bool:
    """Whether paired scores ``a`` beat ``b`` by more than ``z`` standard errors of their mean difference.

    The held-out slice is small (40 baskets for a 400-basket shop, at most 2,000), so more passes must
    win by more than the noise of the slice to be chosen: ``mean(a - b) > z * sd(a - b) / sqrt(n)``.
    Paired over the same cases, the difference is far less noisy than either score.
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if len(d) < 2:
        return False
    return bool(d.mean() > z * d.std(ddof=1) / math.sqrt(len(d)))


def infer_mode(data: Any) -> tuple[str, str]:
    """The context mode the input asks for, and why (see :class:`TrainConfig`'s ``mode="auto"``).

    Parameters
    ----------
    data : Corpus, InputSpec, path or iterable
        What :func:`train` was given (a corpus is judged by the description it was compiled from).

    Returns
    -------
    mode : {"sequence", "basket"}
    reason : str
    """
    from ..data.corpus import Corpus
    from ..readers import InputSpec

    if isinstance(data, InputSpec):
        desc = {"basket_col": data.basket_col, "order_col": data.order_col, "format": data.format}
        desc |= data.extras()
    elif isinstance(data, Corpus):
        desc = (getattr(data, "manifest", None) or {}).get("input") or {}
        if desc.get("source") == "sequences" and "mode_hint" in desc:
            return desc["mode_hint"], desc.get("mode_reason", "")
    elif isinstance(data, str | os.PathLike):
        return "sequence", "text input: one ordered sequence per line"
    else:
        return "sequence", "in-memory lists keep their order (pass sets, or mode='basket', for baskets)"
    if desc.get("basket_col") and desc.get("format") != "text":
        if desc.get("session_gap"):  # a customer's orders chained in time: their order is the signal
            return "sequence", f"customer sessions of {desc.get('user_col')!r} are ordered in time"
        if desc.get("order_col"):
            return "sequence", f"a log ordered by {desc['order_col']!r} inside each basket"
        # one order's lines carry no order worth learning, whatever a time column says
        why = f"a log grouped by {desc['basket_col']!r} with no ordering column"
        if desc.get("time_col"):  # said, since a time column looks as if it should order something
            why += (
                f" ({desc['time_col']!r} dates the orders, for recency and the next basket; it orders "
                "no lines: --order-col orders an order's lines, --sessions chains a customer's orders)"
            )
        return "basket", why
    return "sequence", "text input: one ordered sequence per line"


def peek(data: Any) -> tuple[Any, Any]:
    """``data`` (re-chained if it is a one-shot iterator) and its first element (None if none)."""
    from ..data.corpus import Corpus
    from ..readers import InputSpec

    if isinstance(data, Corpus | InputSpec | str | os.PathLike) or not isinstance(data, Iterable):
        return data, None
    if isinstance(data, list | tuple):
        return data, data[0] if data else None
    it = iter(data)
    try:
        first = next(it)
    except StopIteration:
        return iter(()), None
    return itertools.chain([first], it), first


@dataclasses.dataclass(frozen=True)
class TrainPlan:
    """Every ``auto`` of a run, resolved once (:func:`plan_training`) and read by the passes, the epoch
    loop, the completion model and the evidence of ``similar``.

    Attributes
    ----------
    mode, mode_reason : str
        ``"sequence"`` or ``"basket"``, and why (:func:`infer_mode`, or ``"set by the caller"``).
    sample, sample_reason : float, str
        The subsampling threshold and why (:func:`resolve_sample`).
    neg_group : int
        Contexts sharing one set of negatives (:func:`likewise.training.config.neg_group_for`).
    epochs : int
        The passes: as set, or with ``epochs_auto`` the plan that trials may shorten (:func:`plan_epochs`).
    epochs_auto : bool
        ``epochs="auto"``: trials on :attr:`held_out` choose the passes.
    held_out : HeldOut, optional
        The held-out baskets of the corpus (:func:`hold_out`), when a step measures on them.
    held_out_items : HeldOut, optional
        The held-out baskets of the corpus without the keys no answer may be (a typed space's attribute
        tokens): what the completion model is compared on. :attr:`held_out` when no key is hidden.
    backend : str
        ``"cpu"`` or ``"torch"`` (:func:`likewise.training.config.select_backend`).
    """

    mode: str
    mode_reason: str
    sample: float
    sample_reason: str
    neg_group: int
    epochs: int
    epochs_auto: bool
    held_out: HeldOut | None
    held_out_items: HeldOut | None
    backend: str = "cpu"

    def resolved(self, config: Any) -> Any:
        """``config`` with the plan's mode, ``sample`` and ``neg_group`` (the config as trained)."""
        return dataclasses.replace(config, mode=self.mode, sample=self.sample, neg_group=self.neg_group)


def plan_training(
    config: Any,
    ids: np.ndarray,
    offsets: np.ndarray,
    counts: np.ndarray,
    *,
    mode_reason: str = "set by the caller",
    backend: str = "cpu",
    after: bool = False,
    visible: np.ndarray | None = None,
) -> TrainPlan:
    """The :class:`TrainPlan` of ``config`` (its ``mode`` resolved) on a corpus of packed ``ids``.

    ``after``: the steps after training (the completion model, the evidence of ``similar``) run too, so
    a basket corpus holds baskets out for them even with ``epochs`` set. ``visible`` (bool per id) marks
    the ids an answer may be when some may not (attribute tokens).
    """
    from .config import neg_group_for

    if config.mode not in ("sequence", "basket"):
        raise InputError(
            f"mode == {config.mode!r}: packed ids need 'sequence' or 'basket' (resolve 'auto' first)"
        )
    sample, sample_reason = resolve_sample(counts, config.sample, config.mode)
    auto = config.epochs == "auto"
    epochs = plan_epochs(int(offsets[-1])) if auto else int(config.epochs)
    basket_steps = after and config.mode == "basket"
    held = hold_out(ids, offsets, config.seed) if auto or basket_steps else None
    held_items = held
    if visible is not None and basket_steps and config.completion != "affinity":
        kept = visible[np.asarray(ids)]
        csum = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])
        held_items = hold_out(np.asarray(ids)[kept], csum[np.asarray(offsets)], config.seed)
    return TrainPlan(
        mode=config.mode,
        mode_reason=mode_reason,
        sample=sample,
        sample_reason=sample_reason,
        neg_group=neg_group_for(config),
        epochs=epochs,
        epochs_auto=auto,
        held_out=held,
        held_out_items=held_items,
        backend=backend,
    )
