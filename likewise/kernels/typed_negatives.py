"""SGNS with typed negatives: each pair's negatives are drawn from the type of the item it predicts.

In a typed space (products, campaigns, articles, attribute tokens in one vocabulary) untyped negatives
are mostly products, so a campaign's vector is pushed away from products more than from other
campaigns: it learns *that it is a campaign* before it learns *which* campaign it is. Drawing the
negatives of a pair from the predicted item's own type (as Airbnb's listing embeddings draw negatives
from the same market) asks every vector to tell its item apart from items of its kind.

The algorithm is the classic kernel's (:mod:`.sgns`, word2vec's per-pair updates, exact sigmoid), step
for step and draw for draw, with one change: a negative of the pair (centre ``c``, context ``x``) is
drawn from the table of ``c``'s type. The types are given as four arrays:

``item_type`` int32 [V]
    The type of each row.
``type_start`` int64 [T + 1]
    Type ``t`` owns positions ``type_start[t]:type_start[t + 1]`` of the two arrays below.
``type_order`` int32 [V]
    Row ids grouped by type (ascending within a type).
``type_cum`` int64 [V]
    Cumulative negative-sampling weights, restarting at each type: a draw for type ``t`` takes ``r``
    uniform in ``[0, type_cum[type_start[t + 1] - 1])`` (``(x * total) >> 32``) and the first position
    ``p`` of the type with ``type_cum[p] > r``; the negative is ``type_order[p]``. A draw equal to ``c``
    is skipped, not redrawn (a type of one item trains no negative).

:func:`make_typed_tables` builds them from the counts and the ``ns_exponent`` (each type's weights
scaled so its total is ``NEG_CUM_DOMAIN``, as :func:`likewise.kernels.make_neg_cum` does for all).
The NumPy twin is :func:`likewise.kernels.reference.train_sgns_typed_block_reference`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..errors import InputError
from ._block import BlockKernel
from ._pairs import PAIR_DRIVER
from .params import KernelParams
from .sampling import make_neg_cum

__all__ = [
    "check_typed_tables",
    "make_typed_tables",
    "train_sgns_typed_block",
    "train_sgns_typed_block_serial",
    "typed_block_kernel",
    "typed_kernel",
]


def make_typed_tables(
    counts: np.ndarray, item_type: np.ndarray, ns_exponent: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four arrays of the module docstring: ``(item_type, type_start, type_order, type_cum)``.

    Parameters
    ----------
    counts : ndarray of int, shape [V]
        Occurrences of each row.
    item_type : ndarray of int, shape [V]
        Type code of each row, ``0 <= code``.
    ns_exponent : float
        Negatives are drawn ``∝ count ** ns_exponent`` within the type.
    """
    item_type = np.ascontiguousarray(item_type, dtype=np.int32)
    counts = np.asarray(counts, dtype=np.int64)
    if item_type.shape != counts.shape:
        raise InputError(f"item_type has shape {item_type.shape}, counts has {counts.shape}; one per row")
    if len(item_type) and item_type.min() < 0:
        raise InputError("type codes must be >= 0")
    n_types = int(item_type.max(initial=-1)) + 1
    order = np.argsort(item_type, kind="stable").astype(np.int32)
    start = np.zeros(n_types + 1, dtype=np.int64)
    np.cumsum(np.bincount(item_type, minlength=n_types), out=start[1:])
    cum = np.zeros(len(counts), dtype=np.int64)
    for t in range(n_types):
        a, b = int(start[t]), int(start[t + 1])
        if b > a:
            cum[a:b] = make_neg_cum(np.maximum(counts[order[a:b]], 1), ns_exponent)
    return item_type, start, order, cum


def check_typed_tables(
    item_type: np.ndarray, type_start: np.ndarray, type_order: np.ndarray, type_cum: np.ndarray, n_items: int
) -> None:
    """Raise :class:`InputError` unless the typed tables fit a table of ``n_items`` rows."""
    for name, arr, dtype in (
        ("item_type", item_type, np.int32),
        ("type_start", type_start, np.int64),
        ("type_order", type_order, np.int32),
        ("type_cum", type_cum, np.int64),
    ):
        if (
            not isinstance(arr, np.ndarray)
            or arr.dtype != dtype
            or arr.ndim != 1
            or not arr.flags.c_contiguous
        ):
            raise InputError(f"{name} must be a contiguous 1-D {np.dtype(dtype)} array")
    if len(item_type) != n_items or len(type_order) != n_items or len(type_cum) != n_items:
        raise InputError(f"item_type, type_order and type_cum must have one entry per row ({n_items})")
    n_types = len(type_start) - 1
    if n_types < 1 or type_start[0] != 0 or type_start[-1] != n_items or np.any(np.diff(type_start) < 0):
        raise InputError(f"type_start must rise from 0 to {n_items} (the rows)")
    if n_items and (item_type.min() < 0 or item_type.max() >= n_types):
        raise InputError(f"item_type must hold codes in [0, {n_types})")
    ends = type_start[1:][np.diff(type_start) > 0] - 1
    if len(ends) and (type_cum[ends].min() < 1 or type_cum[ends].max() > 2**32):
        raise InputError("each type's last type_cum entry must be in [1, 2**32] (use make_typed_tables)")


def _negatives(tables: tuple, neg_cum: np.ndarray, n_items: int) -> tuple:
    """The per-pair driver's ``negs`` with the type tables (checked against the ``n_items`` rows): its
    pair step then draws each pair's negatives from the centre's type (``._pairs.negative_range``)."""
    check_typed_tables(*tables, n_items)
    return tables


def typed_block_kernel(tables: tuple, *, serial: bool) -> BlockKernel:
    """The typed per-pair kernel with ``tables`` (:func:`make_typed_tables`) bound, hyper-parameters
    whole (:class:`~likewise.kernels.params.KernelParams`); the tables are checked at each call."""
    return BlockKernel(PAIR_DRIVER, functools.partial(_negatives, tables), serial=serial)


_SIGNATURE = """
    Parameters are those of :func:`likewise.kernels.train_sgns_block` (``neg_cum`` is checked but the
    negatives come from the typed tables), then ``item_type``, ``type_start``, ``type_order`` and
    ``type_cum`` (the module docstring; :func:`make_typed_tables` builds them). Returns tokens seen,
    tokens kept, pairs trained and the loss sum.
"""


def train_sgns_typed_block(
    ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, mode, window, negative, max_context,
    lr0, min_lr, words_before, total_words, seed, n_chunks, item_type, type_start, type_order, type_cum,
) -> tuple[int, int, int, float]:  # fmt: skip
    """Train SGNS with typed negatives on a block; chunks in parallel (hogwild)."""
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    kernel = typed_block_kernel((item_type, type_start, type_order, type_cum), serial=False)
    return kernel(params, *block, n_chunks)


def train_sgns_typed_block_serial(
    ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, mode, window, negative, max_context,
    lr0, min_lr, words_before, total_words, seed, n_chunks, item_type, type_start, type_order, type_cum,
) -> tuple[int, int, int, float]:  # fmt: skip
    """:func:`train_sgns_typed_block` on one thread, chunks in order: bit-identical across runs."""
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    kernel = typed_block_kernel((item_type, type_start, type_order, type_cum), serial=True)
    return kernel(params, *block, n_chunks)


train_sgns_typed_block.__doc__ = (train_sgns_typed_block.__doc__ or "") + _SIGNATURE
train_sgns_typed_block_serial.__doc__ = (train_sgns_typed_block_serial.__doc__ or "") + _SIGNATURE


def typed_kernel(
    counts: np.ndarray, item_type: np.ndarray, ns_exponent: float, *, serial: bool
) -> Callable[..., tuple[int, int, int, float]]:
    """A block kernel with the classic kernel's signature whose negatives are typed (tables bound)."""
    tables = make_typed_tables(counts, item_type, ns_exponent)
    fn = train_sgns_typed_block_serial if serial else train_sgns_typed_block
    return functools.partial(
        fn, item_type=tables[0], type_start=tables[1], type_order=tables[2], type_cum=tables[3]
    )
