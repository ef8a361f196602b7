"""Plain NumPy/Python versions of the kernels, for tests. Slow on purpose: one line per step.

Each function has the same signature and the same discrete choices (random draws, pairs, negatives) as
its fast twin in :mod:`.sgns`, :mod:`.batched` or :mod:`.minibatch` (torch); floating-point results
agree to rounding (float32 vector math, the fast version may reorder sums).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from ..errors import ItemIndexError
from . import draws
from ._common import (
    LCG_ADD,
    LCG_MUL,
    LOG1P_EXP_TABLE,
    MASK64,
    MAX_EXP,
    MODE_SEQUENCE,
    SETTLED,
    SIGMOID_TABLE,
    TABLE_SCALE,
    TABLE_SIZE,
    Block,
    chunk_bounds,
    chunk_states,
    validate_inputs,
)
from .params import KernelParams

__all__ = [
    "build_batch_reference",
    "sgns_grads_reference",
    "train_sgns_batched_block_reference",
    "train_sgns_block_reference",
    "train_sgns_typed_block_reference",
]


class _Stream:
    """The kernel's per-chunk random stream: a 64-bit LCG whose draws are its top 32 bits."""

    def __init__(self, state: int) -> None:
        self.state = int(state)

    def next32(self) -> int:
        self.state = (self.state * LCG_MUL + LCG_ADD) & MASK64
        return self.state >> 32

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)``, ``n <= 2**32``."""
        return (self.next32() * n) >> 32

    def real(self) -> float:
        """Uniform float in ``[0, 1)``."""
        return self.next32() / 2**32

    def negatives(self, neg_cum: np.ndarray, count: int) -> list[int]:
        """``count`` draws from the negative-sampling table: the first ``t`` with ``neg_cum[t] > r``."""
        total = int(neg_cum[-1])
        return [int(np.searchsorted(neg_cum, self.below(total), side="right")) for _ in range(count)]


def _sampled_others(rng: _Stream, i: int, n: int, count: int) -> Iterator[int]:
    """``count`` positions drawn uniformly among ``[0, n)`` without ``i``, lazily: each draw happens
    right before its pair is trained, as in the kernel."""
    for _ in range(count):
        j = rng.below(n - 1)
        yield j + (j >= i)


def _sequences(p, ids, offsets, keep_prob, n_rows: int, counts: list[int]) -> Iterator[tuple]:
    """The block's sequences in chunk order, each subsampled (step 1) with its chunk's stream.

    Yields ``(rng, kept, lr)`` for every sequence that keeps at least 2 items; adds the tokens seen and
    kept to ``counts[0]`` and ``counts[1]``.
    """
    bounds = chunk_bounds(offsets, p.seq_start, p.seq_end, p.n_chunks)
    base = int(offsets[p.seq_start])
    for k, state in enumerate(chunk_states(p.seed, p.seq_start, p.n_chunks)):
        rng = _Stream(state)
        for s in range(bounds[k], bounds[k + 1]):
            a, b = int(offsets[s]), int(offsets[s + 1])
            counts[0] += b - a
            kept = []
            for w in ids[a:b].tolist():
                if not 0 <= w < n_rows:
                    raise ItemIndexError(w, n_rows)
                if keep_prob[w] >= 1 or rng.real() < float(keep_prob[w]):
                    kept.append(w)
            counts[1] += len(kept)
            if len(kept) >= 2:
                progress = (p.words_before + (a - base)) / p.total_words
                lr0, min_lr = p.params.lr0, p.params.min_lr
                yield rng, kept, np.float32(max(min_lr, lr0 - (lr0 - min_lr) * progress))


def _pair(centre, ctx, W, C, negatives, lr) -> float:
    """One pair of the per-pair kernels against ``negatives`` (drawn before it trains: updates consume
    no randomness)."""
    l1 = W[ctx]
    neu1e = np.zeros(W.shape[1], dtype=np.float32)
    targets = [(centre, 1)]
    targets += [(t, 0) for t in negatives if t != centre]
    loss = 0.0
    for t, label in targets:
        raw = np.dot(l1, C[t])
        f = np.clip(raw, np.float32(-MAX_EXP), np.float32(MAX_EXP))
        e = np.exp(-f if label else f)  # q = e / (1 + e) is 1 - sigmoid(f) for label 1, sigmoid(f) for 0
        g = (e / (np.float32(1) + e)) * lr * np.float32(1 if label else -1)
        loss += float(np.log1p(e))
        if (raw if label else -raw) > SETTLED:  # learnt past doubt: no update
            continue
        neu1e += g * C[t]
        C[t] += g * l1
    W[ctx] += neu1e
    return loss


def _per_pair(p: Block, ids, offsets, W, C, keep_prob, negatives) -> tuple[int, int, int, float]:
    """A block of the per-pair kernels; ``negatives(rng, centre)`` draws a pair's negatives."""
    if p.seq_start == p.seq_end:
        return 0, 0, 0, 0.0
    k = p.params
    counts = [0, 0]
    pairs = 0
    loss = 0.0
    for rng, kept, lr in _sequences(p, ids, offsets, keep_prob, len(W), counts):
        n = len(kept)
        for i in range(n):
            if k.mode == MODE_SEQUENCE:
                reach = k.window - rng.below(k.window)
                contexts = [j for j in range(max(0, i - reach), min(n, i + reach + 1)) if j != i]
            elif n - 1 <= k.max_context:
                contexts = [j for j in range(n) if j != i]
            else:
                contexts = _sampled_others(rng, i, n, k.max_context)
            for j in contexts:
                loss += _pair(kept[i], kept[j], W, C, negatives(rng, kept[i]), lr)
                pairs += 1
    return counts[0], counts[1], pairs, loss


def train_sgns_block_reference(
    ids: np.ndarray,
    offsets: np.ndarray,
    seq_start: int,
    seq_end: int,
    W: np.ndarray,
    C: np.ndarray,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    mode: int,
    window: int,
    negative: int,
    max_context: int,
    lr0: float,
    min_lr: float,
    words_before: int,
    total_words: int,
    seed: int,
    n_chunks: int,
) -> tuple[int, int, int, float]:
    """Reference for :func:`likewise.kernels.train_sgns_block_serial`; same parameters and returns."""
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    p = validate_inputs(params, *block, n_chunks)
    return _per_pair(
        p, ids, offsets, W, C, keep_prob, lambda rng, _: rng.negatives(neg_cum, p.params.negative)
    )


def _group_reference(centre, contexts, negatives, W, C, lr) -> float:
    """One group of the batched kernel as matrix products (rows as they were before the group)."""
    targets = [centre] + [t for t in negatives if t != centre]
    X = W[contexts].copy()
    T = C[targets].copy()
    raw = X @ T.T
    f = np.clip(raw, np.float32(-MAX_EXP), np.float32(MAX_EXP))
    sign = np.ones(len(targets), dtype=np.float32)
    sign[0] = -1  # z = -f for the centre (label 1), f for negatives
    z = sign * f
    k = np.minimum(((z + np.float32(MAX_EXP)) * TABLE_SCALE).astype(np.int64), TABLE_SIZE - 1)
    G = SIGMOID_TABLE[k] * lr * -sign  # +q*lr for the centre, -q*lr for negatives
    G[-sign * raw > SETTLED] = 0  # learnt past doubt: no update
    np.add.at(C, targets, G.T @ X)
    np.add.at(W, contexts, G @ T)
    return float(LOG1P_EXP_TABLE[k].sum())


def train_sgns_batched_block_reference(
    ids: np.ndarray,
    offsets: np.ndarray,
    seq_start: int,
    seq_end: int,
    W: np.ndarray,
    C: np.ndarray,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    mode: int,
    window: int,
    negative: int,
    max_context: int,
    group: int,
    lr0: float,
    min_lr: float,
    words_before: int,
    total_words: int,
    seed: int,
    n_chunks: int,
) -> tuple[int, int, int, float]:
    """Reference for :func:`likewise.kernels.train_sgns_batched_block_serial`; same parameters and returns."""
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr, group)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    p = validate_inputs(params, *block, n_chunks, grouped=True)
    k = p.params
    if p.seq_start == p.seq_end:
        return 0, 0, 0, 0.0
    counts = [0, 0]
    pairs = 0
    loss = 0.0
    for rng, kept, lr in _sequences(p, ids, offsets, keep_prob, len(W), counts):
        n = len(kept)
        for i in range(n):
            if k.mode != MODE_SEQUENCE and n - 1 > k.max_context:
                left = k.max_context
                while left > 0:
                    nb = min(k.group, left)
                    ctx = [kept[j] for j in _sampled_others(rng, i, n, nb)]
                    loss += _group_reference(kept[i], ctx, rng.negatives(neg_cum, k.negative), W, C, lr)
                    pairs += nb
                    left -= nb
                continue
            if k.mode == MODE_SEQUENCE:
                reach = k.window - rng.below(k.window)
                positions = range(max(0, i - reach), min(n, i + reach + 1))
            else:
                positions = range(n)
            ctx = [kept[j] for j in positions if j != i]
            for start in range(0, len(ctx), k.group):
                part = ctx[start : start + k.group]
                loss += _group_reference(kept[i], part, rng.negatives(neg_cum, k.negative), W, C, lr)
                pairs += len(part)
    return counts[0], counts[1], pairs, loss


def _typed_negatives(rng: _Stream, centre: int, tables: tuple, count: int) -> list[int]:
    """``count`` draws from the table of ``centre``'s type (see :mod:`.typed_negatives`)."""
    item_type, type_start, type_order, type_cum = tables
    t = int(item_type[centre])
    a, b = int(type_start[t]), int(type_start[t + 1])
    total = int(type_cum[b - 1])
    return [
        int(type_order[a + int(np.searchsorted(type_cum[a:b], rng.below(total), side="right"))])
        for _ in range(count)
    ]


def train_sgns_typed_block_reference(
    ids: np.ndarray,
    offsets: np.ndarray,
    seq_start: int,
    seq_end: int,
    W: np.ndarray,
    C: np.ndarray,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    mode: int,
    window: int,
    negative: int,
    max_context: int,
    lr0: float,
    min_lr: float,
    words_before: int,
    total_words: int,
    seed: int,
    n_chunks: int,
    item_type: np.ndarray,
    type_start: np.ndarray,
    type_order: np.ndarray,
    type_cum: np.ndarray,
) -> tuple[int, int, int, float]:
    """Reference for :func:`likewise.kernels.train_sgns_typed_block_serial`; same parameters and returns."""
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    p = validate_inputs(params, *block, n_chunks)
    tables = (item_type, type_start, type_order, type_cum)
    draw = functools.partial(_typed_negatives, tables=tables, count=p.params.negative)
    return _per_pair(p, ids, offsets, W, C, keep_prob, draw)


def build_batch_reference(
    ids: np.ndarray,
    lengths: np.ndarray,
    first: int,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    mode: int,
    window: int,
    negative: int,
    max_context: int,
    group: int,
    k0: int,
    k1: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int, int]:
    """Reference for :func:`likewise.kernels.minibatch.build_batch`, one token at a time.

    Same parameters (NumPy arrays instead of tensors); returns the fields of its ``Batch``:
    ``(ctx, tgt, tgt_ok, seen, kept, pairs)``.
    """
    groups: list[tuple[int, list[int], list[int]]] = []
    total = int(neg_cum[-1])
    t = 0
    kept_total = pairs = 0
    for length in lengths.tolist():
        pos = np.arange(first + t, first + t + length)
        keys = draws.token_keys(pos, k0, k1).tolist()
        u = draws.draw(keys, draws.PURPOSE_KEEP).tolist()
        kept = [
            (int(ids[t + s]), keys[s])
            for s in range(length)
            if keep_prob[ids[t + s]] >= 1 or u[s] * 2.0**-32 < float(keep_prob[ids[t + s]])
        ]
        t += length
        kept_total += len(kept)
        n = len(kept)
        for i, (centre, key) in enumerate(kept):
            if mode == MODE_SEQUENCE:
                reach = window - ((int(draws.draw(key, draws.PURPOSE_REACH)) * window) >> 32)
                js = [j for j in range(max(0, i - reach), min(n, i + reach + 1)) if j != i]
            elif n - 1 > max_context:
                rel = [
                    int(draws.draw(key, draws.PURPOSE_SAMPLED + q)) * (n - 1) >> 32
                    for q in range(max_context)
                ]
                js = [r + (r >= i) for r in rel]
            else:
                js = [j for j in range(n) if j != i]
            pairs += len(js)
            for q, start in enumerate(range(0, len(js), group)):
                purposes = [draws.negative_purpose(max_context, negative, q, k) for k in range(negative)]
                r = [(int(x) * total) >> 32 for x in draws.draw(np.full(negative, key), purposes)]
                negs = [int(np.searchsorted(neg_cum, v, side="right")) for v in r]
                groups.append((centre, [kept[j][0] for j in js[start : start + group]], negs))
    width = max([1] + [len(g[1]) for g in groups])
    ctx = np.full((len(groups), width), -1, dtype=np.int64)
    tgt = np.zeros((len(groups), 1 + negative), dtype=np.int64)
    for g, (centre, contexts, negs) in enumerate(groups):
        ctx[g, : len(contexts)] = contexts
        tgt[g] = [centre, *negs]
    ok = np.ones(tgt.shape, dtype=bool)
    ok[:, 1:] = tgt[:, 1:] != tgt[:, :1]
    return ctx, tgt, ok, int(t), kept_total, pairs


def sgns_grads_reference(
    w_rows: np.ndarray,
    c_rows: np.ndarray,
    ctx: np.ndarray,
    tgt: np.ndarray,
    tgt_ok: np.ndarray,
    lr: float,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Reference for :func:`likewise.kernels.minibatch.sgns_grads`: one (context, target) at a time."""
    dw = np.zeros_like(w_rows)
    dc = np.zeros_like(c_rows)
    loss = 0.0
    lr32 = np.float32(lr)
    for g in range(len(tgt)):
        for b in ctx[g][ctx[g] >= 0].tolist():
            for col, target in enumerate(tgt[g].tolist()):
                if not tgt_ok[g, col]:
                    continue
                raw = np.dot(w_rows[b], c_rows[target])
                f = np.clip(raw, np.float32(-MAX_EXP), np.float32(MAX_EXP))
                z = -f if col == 0 else f
                q = np.float32(1) / (np.float32(1) + np.exp(-z))  # sigmoid(z)
                step = q * lr32 if col == 0 else -q * lr32
                loss += float(np.log1p(np.exp(np.float64(z))))
                if (raw if col == 0 else -raw) > SETTLED:  # learnt past doubt: no update
                    continue
                dw[b] += step * c_rows[target]
                dc[target] += step * w_rows[b]
    return dw, dc, loss
