"""Lookup tables the SGNS kernels read (subsampling keep probabilities, the negative-sampling table) and
the cut of a corpus into blocks of whole sequences that the trainers feed them.

Pure NumPy; built once per vocabulary by the trainer and passed to the kernel as plain arrays.
"""

from __future__ import annotations

import math

import numpy as np

from .._arrays import unique
from ..errors import InputError

__all__ = ["NEG_CUM_DOMAIN", "make_keep_prob", "make_neg_cum", "sequence_blocks"]

#: Last entry of the table :func:`make_neg_cum` builds (gensim's ``cum_table`` domain).
NEG_CUM_DOMAIN = 2**31 - 1


def _as_counts(counts: np.ndarray) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim != 1:
        raise InputError(f"counts has shape {arr.shape}, must be 1-D (one count per item)")
    if arr.size == 0:
        raise InputError("counts is empty, must hold one count per item (at least one item)")
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InputError(f"counts has dtype {arr.dtype}, must be integer or float")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or arr.min() < 0:
        bad = arr[~np.isfinite(arr) | (arr < 0)][0]
        raise InputError(f"counts contains {bad!r}, counts must be finite and >= 0")
    return arr


def make_keep_prob(counts: np.ndarray, sample: float) -> np.ndarray:
    """Probability of keeping each occurrence of an item under frequent-item subsampling.

    The word2vec formula: with ``threshold = sample * counts.sum()``,
    ``keep = (sqrt(c / threshold) + 1) * threshold / c``, clipped to at most 1. Items with count 0
    (never seen) get 1.

    Parameters
    ----------
    counts : ndarray of shape (V,)
        Occurrences of each item (integers or floats, >= 0).
    sample : float
        Subsampling threshold, >= 0; ``0`` disables subsampling (all ones). Typical: 1e-3 .. 1e-5.

    Returns
    -------
    ndarray of float32, shape (V,)
    """
    c = _as_counts(counts)
    sample = float(sample)
    if not math.isfinite(sample) or sample < 0:
        raise InputError(f"sample == {sample!r}, must be a finite number >= 0 (0 disables subsampling)")
    total = c.sum()
    keep = np.ones(len(c), dtype=np.float64)
    if sample == 0 or total == 0:
        return keep.astype(np.float32)
    threshold = sample * total
    seen = c > 0
    cs = c[seen]
    keep[seen] = (np.sqrt(cs / threshold) + 1.0) * threshold / cs
    return np.minimum(keep, 1.0).astype(np.float32)


def make_neg_cum(counts: np.ndarray, ns_exponent: float) -> np.ndarray:
    """Cumulative table for drawing negatives with probability proportional to ``count ** ns_exponent``.

    Entry ``i`` is ``round(cumsum(w)[i] / w.sum() * NEG_CUM_DOMAIN)`` with ``w = counts ** ns_exponent``
    (gensim's ``cum_table``), so the table is nondecreasing and ends at ``NEG_CUM_DOMAIN = 2**31 - 1``.
    The kernel draws ``r`` uniformly in ``[0, table[-1])`` and takes the first ``i`` with
    ``table[i] > r``. Items with count 0 get weight 0 and are never drawn, also when ``ns_exponent`` is
    0 or negative.

    Parameters
    ----------
    counts : ndarray of shape (V,)
        Occurrences of each item (>= 0, at least one positive).
    ns_exponent : float
        Exponent applied to the counts; 0.75 in word2vec, 0 = uniform, negative favours rare items.

    Returns
    -------
    ndarray of int64, shape (V,)
    """
    c = _as_counts(counts)
    ns_exponent = float(ns_exponent)
    if not math.isfinite(ns_exponent):
        raise InputError(f"ns_exponent == {ns_exponent!r}, must be a finite number")
    seen = c > 0
    if not seen.any():
        raise InputError("every count is 0: at least one item must have a positive count to draw negatives")
    w = np.zeros(len(c), dtype=np.float64)
    w[seen] = c[seen] ** ns_exponent
    cum = np.cumsum(w)
    table = np.round(cum / cum[-1] * NEG_CUM_DOMAIN).astype(np.int64)
    table[-1] = NEG_CUM_DOMAIN
    return table


def sequence_blocks(offsets: np.ndarray, block_tokens: int) -> list[tuple[int, int]]:
    """Cut sequences into consecutive blocks of about ``block_tokens`` tokens (whole sequences).

    Block boundaries are the first sequences starting at or after each multiple of ``block_tokens``,
    so a sequence longer than a block makes a block of its own. The numba trainer runs a kernel call
    per block; the torch trainer a step.

    Parameters
    ----------
    offsets : ndarray of int64, shape (S + 1,)
    block_tokens : int

    Returns
    -------
    list of (int, int)
        ``(first sequence, end sequence)`` of each non-empty block, in order.
    """
    n = len(offsets) - 1
    if n == 0:
        return []
    targets = np.arange(block_tokens, int(offsets[-1]), block_tokens, dtype=np.int64)
    cuts = unique(np.searchsorted(offsets, targets, side="left").clip(1, n))
    bounds = [0, *[int(c) for c in cuts if 0 < c < n], n]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]
