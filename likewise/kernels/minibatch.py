"""Minibatch SGNS in PyTorch: a step's pairs built on the device, then gather -> dot products -> scatter-add.

The numba kernels (:mod:`.sgns`, :mod:`.batched`) walk the corpus one centre at a time and update the
tables as they go. This kernel trains a *step*: a run of whole sequences, all of whose pairs are
computed from the tables as they were at the start of the step, and whose updates are then added at
once. That is what a GPU (and a group of processes that each hold part of the tables) can do fast.

One step, all on the tables' device, with no Python loop over tokens:

1. :func:`build_batch` -- from the step's packed ids and sequence lengths: subsampling (keep an
   occurrence of ``w`` with probability ``keep_prob[w]``), then per kept centre its contexts (sequence
   mode: the kept positions within a reach drawn in ``1..window``; basket mode: the rest of the basket,
   or ``max_context`` positions drawn with replacement when it is larger), cut into groups of up to
   ``group`` contexts that share ``negative`` negatives drawn from ``neg_cum`` (counts ** 0.75), as in
   :mod:`.batched`. A negative equal to the centre is masked out (the numba kernel drops it). Every
   random number is a counter-based draw (:mod:`.draws`), so the step does not depend on the device or
   on how the step was split between processes.
2. :func:`batch_rows` -- the distinct input and output rows the step reads (``torch.unique``), and the
   batch re-indexed into them; the caller gathers those rows (locally, or from the processes that own
   them).
3. :func:`sgns_grads` -- per group, ``X`` (its contexts' input rows) against ``T`` (the centre's and
   the negatives' output rows): ``F = clip(X T^T, +-6)``, ``G = lr * (label - sigmoid(F))``;
   ``dX = G T`` and ``dT = G^T X``, summed per distinct row with ``index_add_``.
4. :func:`add_rows` -- the sums are added into the table rows (``index_add_``), or, for bfloat16
   tables, added in float32 and rounded stochastically (:func:`round_bf16`).

:mod:`.reference` holds :func:`~likewise.kernels.reference.build_batch_reference` and
:func:`~likewise.kernels.reference.sgns_grads_reference`, plain NumPy with the same signatures.
"""

from __future__ import annotations

from typing import Any, NamedTuple

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the guarded import: one clear message when torch is missing
    from ..errors import MissingDependencyError

    raise MissingDependencyError("torch", "torch", "the torch training backend") from None

from ..errors import InputError
from ._common import MAX_EXP, MODE_SEQUENCE, SETTLED
from .draws import GOLDEN, HASH_A, HASH_B, M32, PURPOSE_KEEP, PURPOSE_REACH, PURPOSE_SAMPLED

__all__ = [
    "Batch",
    "add_rows",
    "batch_rows",
    "build_batch",
    "draw",
    "hash32",
    "round_bf16",
    "sgns_grads",
    "token_keys",
]


class Batch(NamedTuple):
    """One process's share of a step.

    ``ctx[g]`` are the item ids of group ``g``'s contexts (``-1`` pads a group shorter than the widest);
    ``tgt[g, 0]`` is the group's centre and ``tgt[g, 1:]`` its negatives; ``tgt_ok`` is False where a
    negative drew the centre itself (that pair is not trained). ``seen``, ``kept`` and ``pairs`` count
    tokens read, tokens kept by subsampling and (centre, context) pairs.
    """

    ctx: torch.Tensor  # (groups, width) int64
    tgt: torch.Tensor  # (groups, 1 + negative) int64
    tgt_ok: torch.Tensor  # (groups, 1 + negative) bool
    seen: int
    kept: int
    pairs: int


def _mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    """``(x * c) mod 2**32`` for int64 tensors of 32-bit values, in 16-bit halves so nothing overflows."""
    return (x * (c & 0xFFFF) + (((x * (c >> 16)) & 0xFFFF) << 16)) & M32


def hash32(x: torch.Tensor) -> torch.Tensor:
    """lowbias32 of int64 tensors holding 32-bit values (:func:`likewise.kernels.draws.hash32`)."""
    x = x ^ (x >> 16)
    x = _mul32(x, HASH_A)
    x = x ^ (x >> 15)
    x = _mul32(x, HASH_B)
    return x ^ (x >> 16)


def token_keys(pos: torch.Tensor, k0: int, k1: int) -> torch.Tensor:
    """``key(t)`` of corpus positions ``pos`` (:func:`likewise.kernels.draws.token_keys`)."""
    return hash32(hash32((pos & M32) ^ k0) ^ (pos >> 32) ^ k1)


def draw(keys: torch.Tensor, purpose: int | torch.Tensor) -> torch.Tensor:
    """Uniform 32-bit draws (int64) from keys and purposes (:func:`likewise.kernels.draws.draw`)."""
    if isinstance(purpose, int):
        return hash32(keys ^ (((purpose + 1) * GOLDEN) & M32))
    return hash32(keys ^ _mul32(purpose + 1, GOLDEN))


def _empty_batch(device: torch.device, negative: int, seen: int, kept: int) -> Batch:
    ctx = torch.empty((0, 1), dtype=torch.int64, device=device)
    tgt = torch.empty((0, 1 + negative), dtype=torch.int64, device=device)
    return Batch(ctx, tgt, torch.empty(tgt.shape, dtype=torch.bool, device=device), seen, kept, 0)


def build_batch(
    ids: torch.Tensor,
    lengths: torch.Tensor,
    first: int,
    keep_prob: torch.Tensor,
    neg_cum: torch.Tensor,
    mode: int,
    window: int,
    negative: int,
    max_context: int,
    group: int,
    k0: int,
    k1: int,
) -> Batch:
    """The groups of a run of whole sequences, built with tensor operations on ``ids.device``.

    Parameters
    ----------
    ids : Tensor of int64, shape (T,)
        The sequences' item ids back to back.
    lengths : Tensor of int64, shape (S,)
        Their lengths (summing to T), on the same device.
    first : int
        Corpus position of ``ids[0]``: the draws are keyed by position (:mod:`.draws`).
    keep_prob : Tensor of float32, shape (V,)
        Subsampling keep probabilities (:func:`likewise.kernels.make_keep_prob`).
    neg_cum : Tensor of int64, shape (V,)
        The negative-sampling table (:func:`likewise.kernels.make_neg_cum`, ending at ``2**31 - 1``).
    mode : int
        0 sequence, 1 basket.
    window, negative, max_context, group : int
        As in :func:`likewise.kernels.train_sgns_batched_block`.
    k0, k1 : int
        The epoch's keys (:func:`likewise.kernels.draws.epoch_keys`).

    Returns
    -------
    Batch
    """
    dev = ids.device
    n_tok = int(ids.numel())
    if int(lengths.sum()) != n_tok:
        raise InputError(f"lengths sum to {int(lengths.sum())} but ids has {n_tok} entries; they must agree")
    if n_tok == 0:
        return _empty_batch(dev, negative, 0, 0)
    pos = torch.arange(first, first + n_tok, dtype=torch.int64, device=dev)
    key = token_keys(pos, k0, k1)
    p = keep_prob[ids].to(torch.float64)
    keep = (p >= 1.0) | (draw(key, PURPOSE_KEEP).to(torch.float64) * 2.0**-32 < p)
    seq = torch.repeat_interleave(torch.arange(lengths.numel(), device=dev), lengths, output_size=n_tok)
    kidx = torch.nonzero(keep).squeeze(1)
    n_kept = int(kidx.numel())
    kids, kkey, kseq = ids[kidx], key[kidx], seq[kidx]
    per_seq = torch.bincount(kseq, minlength=lengths.numel())
    end = torch.cumsum(per_seq, 0)
    a, b = (end - per_seq)[kseq], end[kseq]  # each kept token's sequence, as kept positions [a, b)
    i = torch.arange(n_kept, dtype=torch.int64, device=dev)
    sampled = None
    if mode == MODE_SEQUENCE:
        reach = window - ((draw(kkey, PURPOSE_REACH) * window) >> 32)
        lo = torch.maximum(a, i - reach)
        m = torch.minimum(b, i + reach + 1) - lo - 1
    else:
        lo = a
        sampled = (b - a - 1) > max_context
        m = torch.where(sampled, max_context, b - a - 1)
    n_pairs = int(m.sum()) if n_kept else 0
    if n_pairs == 0:
        return _empty_batch(dev, negative, n_tok, n_kept)
    # pair -> its centre c and its rank k among the centre's contexts
    c = torch.repeat_interleave(i, m, output_size=n_pairs)
    k = torch.arange(n_pairs, dtype=torch.int64, device=dev) - (torch.cumsum(m, 0) - m)[c]
    j = lo[c] + k
    if sampled is not None and bool(sampled.any()):
        n_c = (b - a)[c]
        rel = (draw(kkey[c], PURPOSE_SAMPLED + k) * (n_c - 1)) >> 32
        j = torch.where(sampled[c], a[c] + rel, j)
    j = j + (j >= c)  # skip the centre itself
    # groups of up to `group` consecutive contexts of one centre share one set of negatives
    ng = (m + group - 1) // group
    n_groups = int(ng.sum())
    gstart = torch.cumsum(ng, 0) - ng
    gc = torch.repeat_interleave(i, ng, output_size=n_groups)
    width = min(group, int(m.max()))
    ctx = torch.full((n_groups, width), -1, dtype=torch.int64, device=dev)
    ctx[gstart[c] + k // group, k % group] = kids[j]
    centre = kids[gc]
    tgt = centre[:, None]
    ok = torch.ones((n_groups, 1), dtype=torch.bool, device=dev)
    if negative:
        q = torch.arange(n_groups, dtype=torch.int64, device=dev) - gstart[gc]
        purpose = (PURPOSE_SAMPLED + max_context) + q[:, None] * negative
        purpose = purpose + torch.arange(negative, dtype=torch.int64, device=dev)[None, :]
        total = int(neg_cum[-1])
        r = (draw(kkey[gc][:, None], purpose) * total) >> 32
        neg = torch.searchsorted(neg_cum, r, right=True)
        tgt = torch.cat([tgt, neg], 1)
        ok = torch.cat([ok, neg != centre[:, None]], 1)
    return Batch(ctx, tgt, ok, n_tok, n_kept, n_pairs)


def batch_rows(batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The distinct rows a batch reads, and the batch in their indices.

    Returns
    -------
    w_ids : Tensor of int64, shape (U,)
        Distinct context ids (input-table rows), ascending.
    ctx : Tensor of int64, shape of ``batch.ctx``
        Indices into ``w_ids`` (``-1`` kept for padding).
    c_ids : Tensor of int64, shape (U',)
        Distinct centre and negative ids (output-table rows), ascending.
    tgt : Tensor of int64, shape of ``batch.tgt``
        Indices into ``c_ids``.
    """
    valid = batch.ctx >= 0
    w_ids, w_inv = torch.unique(batch.ctx[valid], return_inverse=True)
    ctx = torch.full_like(batch.ctx, -1)
    ctx[valid] = w_inv
    c_ids, tgt = torch.unique(batch.tgt, return_inverse=True)
    return w_ids, ctx, c_ids, tgt.reshape(batch.tgt.shape)


def sgns_grads(
    w_rows: torch.Tensor,
    c_rows: torch.Tensor,
    ctx: torch.Tensor,
    tgt: torch.Tensor,
    tgt_ok: torch.Tensor,
    lr: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The step's updates of the rows it read (already scaled by ``lr``; add them) and its loss.

    Parameters
    ----------
    w_rows : Tensor of float32, shape (U, D)
        The input rows of the distinct contexts.
    c_rows : Tensor of float32, shape (U', D)
        The output rows of the distinct centres and negatives.
    ctx, tgt, tgt_ok
        The batch in row indices (:func:`batch_rows`) and its mask.
    lr : float
        Learning rate of the step.

    Returns
    -------
    dw : Tensor of float32, shape (U, D)
    dc : Tensor of float32, shape (U', D)
    loss : Tensor of float64, scalar
        Sum over the trained (context, target) pairs of ``log(1 + e^z)``, ``z = -f`` for the centre and
        ``f`` for a negative.
    """
    n_w, dim = w_rows.shape
    padded = torch.cat([w_rows, w_rows.new_zeros((1, dim))])  # row n_w: zeros for the padding
    ci = torch.where(ctx >= 0, ctx, n_w)
    x = padded[ci]  # (groups, width, D)
    t = c_rows[tgt]  # (groups, 1 + negative, D)
    raw = torch.bmm(x, t.transpose(1, 2))
    f = raw.clamp(-MAX_EXP, MAX_EXP)
    sign = torch.ones(tgt.shape[1], dtype=f.dtype, device=f.device)
    sign[0] = -1.0  # z = -f for the centre (label 1), f for the negatives
    z = f * sign
    mask = ((ctx >= 0)[:, :, None] & tgt_ok[:, None, :]).to(f.dtype)
    live = (raw * -sign <= SETTLED).to(f.dtype)  # past SETTLED on its label's side: learnt, no update
    g = torch.sigmoid(z) * mask * live * (-sign * float(lr))  # +q lr for the centre, -q lr for negatives
    loss = (F.softplus(z) * mask).sum(dtype=torch.float64)
    dx = torch.bmm(g, t)
    dt = torch.bmm(g.transpose(1, 2), x)
    dw = w_rows.new_zeros((n_w + 1, dim)).index_add_(0, ci.reshape(-1), dx.reshape(-1, dim))[:n_w]
    dc = torch.zeros_like(c_rows).index_add_(0, tgt.reshape(-1), dt.reshape(-1, dim))
    # updates per row: a context slot is one (pair) update of its input row; a target is one update of
    # its output row per context of its group
    slots = (ctx >= 0).to(f.dtype)
    nw = w_rows.new_zeros(n_w + 1).index_add_(0, ci.reshape(-1), slots.reshape(-1))[:n_w]
    per_target = (slots.sum(1, keepdim=True) * tgt_ok.to(f.dtype)).reshape(-1)
    nc = c_rows.new_zeros(len(c_rows)).index_add_(0, tgt.reshape(-1), per_target)
    return dw, dc, loss, nw, nc


def round_bf16(x: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """float32 -> bfloat16 rounded stochastically: up with probability equal to the dropped fraction.

    ``keys`` (int64, 32-bit values, shape of ``x``) supply the random low 16 bits: a value is rounded
    by adding them to its bit pattern and truncating, so the expected result is ``x`` itself and many
    small updates add up instead of rounding away.
    """
    bits = x.contiguous().view(torch.int32)
    noise = (keys & 0xFFFF).to(torch.int32)
    return ((bits + noise) & -65536).view(torch.float32).to(torch.bfloat16)


def add_rows(
    table: torch.Tensor,
    rows: torch.Tensor,
    delta: torch.Tensor,
    updates: torch.Tensor,
    cap: float,
    keys: Any = None,
) -> None:
    """``table[rows] += delta * min(1, cap / updates)`` in place, rows possibly repeated (they add up).

    ``updates`` counts the pair updates summed into each delta (:func:`sgns_grads`); a row that took more
    than ``cap`` of them in one step moves by ``cap`` times their mean instead of their sum (0: no cap).
    A float32 table takes ``index_add_``. A bfloat16 table adds in float32 and stores the sum rounded
    stochastically with ``keys(unique rows) -> int64 keys of shape (U, D)``.
    """
    uniq, inv = torch.unique(rows, return_inverse=True)
    acc = torch.zeros((len(uniq), table.shape[1]), dtype=torch.float32, device=table.device)
    acc.index_add_(0, inv, delta)
    if cap > 0:
        n = torch.zeros(len(uniq), dtype=torch.float32, device=table.device).index_add_(0, inv, updates)
        acc *= (cap / n.clamp_min(cap)).unsqueeze(1)
    if table.dtype == torch.float32:
        table.index_add_(0, uniq, acc)
        return
    if keys is None:
        raise InputError(f"table has dtype {table.dtype}: add_rows needs keys= for its stochastic rounding")
    table[uniq] = round_bf16(table[uniq].float() + acc, keys(uniq))
