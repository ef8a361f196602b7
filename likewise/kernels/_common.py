"""What the SGNS kernels and their NumPy references share: constants, random streams, chunks,
validation and the compiled steps the kernels take per sequence (:mod:`._block` runs a block call
through a compiled driver).

:mod:`.sgns` documents the algorithm these pieces implement. This module is private; :mod:`.sgns`,
:mod:`.batched` and :mod:`.reference` import its public names (STYLE rule 11) rather than reaching
into one another's ``_private`` helpers.

numba's on-disk cache keys a compiled function by its own source file only, so after editing a
compiled helper here, delete ``likewise/kernels/__pycache__`` (the callers' cached code inlines the
old version).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..errors import InputError, ItemIndexError

# splitmix64 derives the chunks' seeds here and the minibatch kernel's keys in .draws (no numba there).
from .draws import MASK64 as MASK64
from .draws import splitmix64 as splitmix64
from .params import KernelParams

__all__ = [
    "F_MAX",
    "F_SETTLED",
    "LCG_ADD",
    "LCG_MUL",
    "LOG1P_EXP_TABLE",
    "MASK64",
    "MAX_EXP",
    "SETTLED",
    "MODE_BASKET",
    "MODE_SEQUENCE",
    "NEG_CUM_MAX",
    "SIGMOID_TABLE",
    "TABLE_SCALE",
    "TABLE_SIZE",
    "U32",
    "Block",
    "call_literal",
    "literal_entry",
    "check_corpus",
    "chunk_bounds",
    "chunk_states",
    "longest_sequence",
    "lr_at",
    "next32",
    "prefetch_row",
    "sampled_other",
    "splitmix64",
    "stop_chunk",
    "subsample",
    "validate_group",
    "validate_inputs",
    "window_span",
]

MODE_SEQUENCE = 0
MODE_BASKET = 1
#: Dot products are clipped to ``[-MAX_EXP, MAX_EXP]`` before the sigmoid, as in word2vec.
MAX_EXP = 6.0
#: A target whose score is past ``SETTLED`` on the side its label asks for (``> SETTLED`` for the centre,
#: ``< -SETTLED`` for a negative) gets no update: its sigmoid is 1 to 14 digits, but the clip at
#: ``MAX_EXP`` would still give it the gradient at 6 (0.0025 x lr), and where nothing pulls back (two
#: items that are always bought together, each the other's only negative) that constant step grows the
#: rows geometrically, to infinity. Normal training never reaches it (scores stay
#: within about +-15), so its vectors are unchanged; word2vec's C tool stops at 6 itself.
SETTLED = 32.0

LCG_MUL = 6364136223846793005
LCG_ADD = 1442695040888963407
NEG_CUM_MAX = 2**32  # draws are 32-bit, so the table total must fit

_LCG_MUL = np.uint64(LCG_MUL)
_LCG_ADD = np.uint64(LCG_ADD)
U32 = np.uint64(32)
F_MAX = np.float32(MAX_EXP)
F_SETTLED = np.float32(SETTLED)
_INV_2_32 = 1.0 / 2**32

# sigmoid(z) and log(1 + e^z) on [-MAX_EXP, MAX_EXP] as tables (word2vec's EXP_TABLE idea), read by the
# batched kernel and its reference: entry k holds the value at the centre of bin k; z maps to bin
# floor((z + MAX_EXP) * TABLE_SCALE). Two libm calls per (context, target) cost more than the dot
# product itself at dim 100.
TABLE_SIZE = 2048
TABLE_SCALE = np.float32(TABLE_SIZE / (2 * 6.0))
_Z = -6.0 + (np.arange(TABLE_SIZE) + 0.5) * (12.0 / TABLE_SIZE)
SIGMOID_TABLE = (1.0 / (1.0 + np.exp(-_Z))).astype(np.float32)
LOG1P_EXP_TABLE = np.log1p(np.exp(_Z))


# ---------------------------------------------------------------------------------------------------
# Random streams and chunks (plain Python)


def chunk_states(seed: int, seq_start: int, n_chunks: int) -> np.ndarray:
    """Start state of each chunk's random stream.

    ``state[k] = splitmix64(splitmix64(splitmix64(seed mod 2**64) ^ seq_start) ^ k)``.

    Returns
    -------
    ndarray of uint64, shape (n_chunks,)
    """
    base = splitmix64(splitmix64(int(seed) & MASK64) ^ int(seq_start))
    return np.array([splitmix64(base ^ k) for k in range(int(n_chunks))], dtype=np.uint64)


def chunk_bounds(offsets: np.ndarray, seq_start: int, seq_end: int, n_chunks: int) -> np.ndarray:
    """Cut sequences ``[seq_start, seq_end)`` into ``n_chunks`` contiguous runs of about equal tokens.

    Chunk ``k`` is ``[bounds[k], bounds[k+1])``: it starts at the first sequence whose start offset is
    ``>= offsets[seq_start] + (k * tokens) // n_chunks``. Chunks may be empty.

    Returns
    -------
    ndarray of int64, shape (n_chunks + 1,)
    """
    base = int(offsets[seq_start])
    tokens = int(offsets[seq_end]) - base
    targets = np.array([base + (k * tokens) // n_chunks for k in range(n_chunks + 1)], dtype=np.int64)
    bounds = seq_start + np.searchsorted(offsets[seq_start : seq_end + 1], targets, side="left")
    bounds = np.minimum(bounds, seq_end).astype(np.int64)
    bounds[0] = seq_start
    bounds[-1] = seq_end
    return bounds


# ---------------------------------------------------------------------------------------------------
# Validation (plain Python: the kernels and the references raise the same errors)


def _int(name: str, value: object) -> int:
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InputError(f"{name} == {value!r}, must be an integer") from None


def _int_at_least(name: str, value: object, low: int, why: str = "") -> int:
    out = _int(name, value)
    if out < low:
        raise InputError(f"{name} == {out}, must be >= {low}{why}")
    return out


def _float(name: str, value: object) -> float:
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{name} == {value!r}, must be a number") from None
    if not math.isfinite(out):
        raise InputError(f"{name} == {value!r}, must be finite")
    return out


def _array(name: str, arr: object, dtype: type, ndim: int, writeable: bool = False) -> np.ndarray:
    if not isinstance(arr, np.ndarray):
        raise InputError(f"{name} is a {type(arr).__name__}, must be a numpy array of {np.dtype(dtype)}")
    if arr.dtype != dtype:
        raise InputError(f"{name} has dtype {arr.dtype}, must be {np.dtype(dtype)}")
    if arr.ndim != ndim:
        raise InputError(f"{name} has shape {arr.shape}, must be {ndim}-D")
    if not arr.flags.c_contiguous:
        raise InputError(f"{name} is not C-contiguous; pass np.ascontiguousarray({name})")
    if writeable and not arr.flags.writeable:
        raise InputError(f"{name} is read-only; it is updated in place and must be writeable")
    return arr


def check_corpus(ids: np.ndarray, offsets: np.ndarray, n_items: int) -> None:
    """Check a packed corpus once, in O(N): layout, dtypes and every id in ``[0, n_items)``.

    Parameters
    ----------
    ids : ndarray of int32, shape (N,)
    offsets : ndarray of int64, shape (S + 1,)
        Nondecreasing, ``offsets[0] >= 0`` and ``offsets[-1] <= N``.
    n_items : int
        Number of rows of the embedding tables (V).

    Raises
    ------
    InputError
        Bad dtypes, shapes or offsets.
    ItemIndexError
        The first id (in corpus order) outside ``[0, n_items)``.
    """
    _array("ids", ids, np.int32, 1)
    _array("offsets", offsets, np.int64, 1)
    n_items = _int_at_least("n_items", n_items, 1)
    _check_offsets(offsets, 0, len(offsets) - 1, len(ids))
    bad = (ids < 0) | (ids >= n_items)
    if bad.any():
        raise ItemIndexError(int(ids[int(np.argmax(bad))]), n_items)


def _check_offsets(offsets: np.ndarray, seq_start: int, seq_end: int, n_tokens: int) -> None:
    if len(offsets) < 1:
        raise InputError("offsets is empty, must have S + 1 >= 1 entries")
    block = offsets[seq_start : seq_end + 1]
    if block[0] < 0:
        raise InputError(f"offsets[{seq_start}] == {int(block[0])}, must be >= 0")
    if block[-1] > n_tokens:
        raise InputError(f"offsets[{seq_end}] == {int(block[-1])} is past the end of ids (length {n_tokens})")
    steps = np.diff(block)
    if len(steps) and steps.min() < 0:
        s = seq_start + int(np.argmax(steps < 0))
        raise InputError(
            f"offsets must be nondecreasing, but offsets[{s + 1}] == {int(offsets[s + 1])} < "
            f"offsets[{s}] == {int(offsets[s])}"
        )


class Block(NamedTuple):
    """One block call's scalars, checked by :func:`validate_inputs`."""

    seq_start: int
    seq_end: int
    params: KernelParams
    words_before: int
    total_words: int
    seed: int
    n_chunks: int

    def scalars(self) -> tuple:
        """The scalars the compiled drivers take, in their order: the one place that writes it."""
        p = self.params
        return (
            p.mode,
            p.window,
            p.negative,
            p.max_context,
            p.lr0,
            p.min_lr,
            float(self.words_before),
            float(self.total_words),
            p.group,
        )


def validate_inputs(
    params: KernelParams,
    ids: np.ndarray,
    offsets: np.ndarray,
    seq_start: int,
    seq_end: int,
    W: np.ndarray,
    C: np.ndarray,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    words_before: int,
    total_words: int,
    seed: int,
    n_chunks: int,
    grouped: bool = False,
) -> Block:
    """Check every argument of a block kernel cheaply: O(block sequences), not O(N).

    Parameters
    ----------
    params : KernelParams
        The hyper-parameters (``mode``, ``window``, ``negative``, ``max_context``, ``lr0``, ``min_lr``
        and ``group``).
    ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed, n_chunks
        The other arguments of :func:`likewise.kernels.train_sgns_block`, in its order.
    grouped : bool
        Check ``params.group`` too (the batched kernels); else it is taken as 1.

    Returns
    -------
    Block
        The scalars as Python numbers.

    Raises
    ------
    InputError
        The first bad argument, in :func:`likewise.kernels.train_sgns_block`'s parameter order (``group``
        last); the message names it, its value and what is allowed.
    """
    _array("ids", ids, np.int32, 1)
    _array("offsets", offsets, np.int64, 1)
    _array("W", W, np.float32, 2, writeable=True)
    _array("C", C, np.float32, 2, writeable=True)
    if W.shape != C.shape:
        raise InputError(f"W has shape {W.shape} but C has shape {C.shape}; they must match")
    n_items, dim = W.shape
    if n_items < 1 or dim < 1:
        raise InputError(f"W has shape {W.shape}, must have at least one row and one column")
    _array("keep_prob", keep_prob, np.float32, 1)
    _array("neg_cum", neg_cum, np.int64, 1)
    for name, arr in (("keep_prob", keep_prob), ("neg_cum", neg_cum)):
        if len(arr) != n_items:
            raise InputError(f"{name} has {len(arr)} entries, must have one per row of W ({n_items})")
    total = int(neg_cum[-1])
    if not 1 <= total <= NEG_CUM_MAX:
        raise InputError(f"neg_cum[-1] == {total}, must be in [1, 2**32] (build the table with make_neg_cum)")
    n_seq = len(offsets) - 1
    seq_start = _int("seq_start", seq_start)
    seq_end = _int("seq_end", seq_end)
    if n_seq < 0:
        raise InputError("offsets is empty, must have S + 1 >= 1 entries")
    if not 0 <= seq_start <= n_seq:
        raise InputError(f"seq_start == {seq_start}, must be in [0, {n_seq}] (len(offsets) - 1)")
    if not seq_start <= seq_end <= n_seq:
        raise InputError(
            f"seq_end == {seq_end}, must be in [seq_start, len(offsets) - 1] = [{seq_start}, {n_seq}]"
        )
    _check_offsets(offsets, seq_start, seq_end, len(ids))
    mode = _int("mode", params.mode)
    if mode not in (MODE_SEQUENCE, MODE_BASKET):
        raise InputError(f"mode == {mode}, must be 0 (sequence) or 1 (basket)")
    window = _int_at_least("window", params.window, 1)
    negative = _int_at_least("negative", params.negative, 0)
    max_context = _int_at_least("max_context", params.max_context, 1)
    lr0 = _float("lr0", params.lr0)
    if lr0 <= 0:
        raise InputError(f"lr0 == {lr0!r}, must be > 0")
    min_lr = _float("min_lr", params.min_lr)
    if not 0 <= min_lr <= lr0:
        raise InputError(f"min_lr == {min_lr!r}, must be in [0, lr0] = [0, {lr0!r}]")
    words_before = _int_at_least("words_before", words_before, 0)
    total_words = _int_at_least("total_words", total_words, 1)
    seed = _int("seed", seed)
    n_chunks = _int_at_least("n_chunks", n_chunks, 1)
    group = validate_group(params.group) if grouped else 1
    checked = KernelParams(mode, window, negative, max_context, lr0, min_lr, group)
    return Block(seq_start, seq_end, checked, words_before, total_words, seed, n_chunks)


def validate_group(group: object) -> int:
    """Check the batched kernel's ``group``.

    Parameters
    ----------
    group : int
        Contexts of one centre that share a set of negatives, >= 1.

    Returns
    -------
    int
        ``group`` as a Python int.

    Raises
    ------
    InputError
        ``group`` is not an integer or is below 1; the message names the value.
    """
    return _int_at_least("group", group, 1, " (contexts that share one set of negatives)")


# ---------------------------------------------------------------------------------------------------
# Compiled steps shared by the kernels (inlined into their drivers' chunk loops).
#
# Every compiled function a driver calls is inlined by numba (``inline="always"``) and no driver calls
# another: each driver is one self-contained compiled function. A function compiled on its own that
# another one calls is also copied into the caller and optimised again there; the copies are one
# symbol, and a process runs whichever it loaded first. A cold process compiles (so loads) the callee
# first, a warm one loads only the caller's copy from numba's cache, and under fastmath the two round
# differently: deterministic runs would give different vectors with a cold and a warm compile cache
# (tests/test_cold_cache_determinism.py checks the rule and the vectors).


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def next32(state):
    """Advance the 64-bit LCG; return ``(state, x)`` with ``x`` its top 32 bits."""
    state = state * _LCG_MUL + _LCG_ADD
    return state, state >> U32


@njit(nogil=True, cache=True, inline="always")
def longest_sequence(offsets, s0, s1):
    """Length of the longest sequence in ``[s0, s1)`` (sizes the scratch buffers)."""
    longest = 0
    for s in range(s0, s1):
        longest = max(longest, offsets[s + 1] - offsets[s])
    return longest


@njit(nogil=True, cache=True, inline="always")
def lr_at(a, base, words_before, total_words, lr0, min_lr):
    """Step 2 of :mod:`.sgns`'s docstring: the float32 learning rate of the sequence starting at ``a``."""
    progress = (words_before + (a - base)) / total_words
    return np.float32(max(min_lr, lr0 - (lr0 - min_lr) * progress))


@njit(nogil=True, cache=True, inline="always")
def stop_chunk(out, seen, n_kept, pairs, bad_id):
    """Record the counts so far and the id outside ``[0, V)`` that stopped the chunk."""
    out[0] = seen
    out[1] = n_kept
    out[2] = pairs
    out[3] = 1
    out[4] = bad_id


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def subsample(ids, a, b, keep_prob, kept, state):
    """Step 1 of :mod:`.sgns`'s docstring for ``ids[a:b]``: the kept ids go to ``kept[:n]``.

    Returns ``(n, state, bad)``: ``bad`` is the position in ``ids`` of the first id outside
    ``[0, V)`` (training must stop there), or -1.
    """
    n_items = keep_prob.shape[0]
    n = 0
    for t in range(a, b):
        w = ids[t]
        if w < 0 or w >= n_items:
            return n, state, t
        p = keep_prob[w]
        if p < np.float32(1.0):
            state, x = next32(state)
            if np.float64(x) * _INV_2_32 >= np.float64(p):
                continue
        kept[n] = w
        n += 1
    return n, state, -1


@njit(nogil=True, cache=True, inline="always")
def window_span(i, n, mode, window, uwindow, state):
    """Step 3's contexts of kept position ``i`` of ``n`` when they are not sampled: ``[lo, hi)`` less
    ``i``. Sequence mode draws the window's reach (``uwindow`` is ``window`` as uint64); basket mode
    takes the whole basket. Returns ``(lo, hi, state)``."""
    lo = 0
    hi = n
    if mode == 0:
        state = state * _LCG_MUL + _LCG_ADD  # next32 written out: nested inlining compiles slower
        reach = window - np.int64(((state >> U32) * uwindow) >> U32)
        lo = max(0, i - reach)
        hi = min(n, i + reach + 1)
    return lo, hi, state


@njit(nogil=True, cache=True, inline="always")
def sampled_other(i, others, state):
    """Step 3's sampled context of kept position ``i`` in a large basket: a position drawn uniformly
    among the ``others + 1`` kept ones less ``i`` (``others`` a uint64). Returns ``(j, state)``."""
    state = state * _LCG_MUL + _LCG_ADD  # next32 written out: nested inlining compiles slower
    j = np.int64(((state >> U32) * others) >> U32)
    if j >= i:
        j += 1
    return j, state


_I8P = ir.IntType(8).as_pointer()
_I32 = ir.IntType(32)
_PREFETCH = ir.FunctionType(ir.VoidType(), [_I8P, _I32, _I32, _I32])


@intrinsic
def prefetch_row(typingctx, table, row):
    """Ask the CPU to start fetching row ``row`` of a C-contiguous 2-D ``table`` for writing.

    A hint (``llvm.prefetch``, one per 64-byte line of the row): it never faults and never changes a
    result, so the NumPy references need no counterpart. ``row`` must be in range (it is: the kernels
    prefetch rows they are about to train).
    """
    if not (
        isinstance(table, types.Array)
        and table.ndim == 2
        and table.layout == "C"
        and isinstance(row, types.Integer)
    ):
        return None

    def codegen(context, builder, sig, args):
        aryty, rowty = sig.args
        ary = context.make_array(aryty)(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        r = context.cast(builder, args[1], rowty, types.intp)
        ptr = cgutils.get_item_pointer(
            context, builder, aryty, ary, [r, ir.Constant(intp, 0)], wraparound=False
        )
        base = builder.bitcast(ptr, _I8P)
        ncols = cgutils.unpack_tuple(builder, ary.shape, 2)[1]
        nbytes = builder.mul(
            ncols, ir.Constant(intp, context.get_abi_sizeof(context.get_data_type(aryty.dtype)))
        )
        fn = cgutils.get_or_insert_function(builder.module, _PREFETCH, "llvm.prefetch.p0")
        # rw=1 (the row is written next), locality=3 (keep in all levels), data cache
        with cgutils.for_range_slice(
            builder, ir.Constant(intp, 0), nbytes, ir.Constant(intp, 64), intp=intp
        ) as (
            off,
            _,
        ):
            builder.call(fn, [builder.gep(base, [off]), _I32(1), _I32(3), _I32(1)])
        last = builder.gep(base, [builder.sub(nbytes, ir.Constant(intp, 1))])
        builder.call(fn, [last, _I32(1), _I32(3), _I32(1)])
        return context.get_dummy_value()

    return types.void(table, row), codegen


_ENTRIES: dict[tuple, Callable[..., object]] = {}


def literal_entry(dispatcher: Callable[..., object], *args: object) -> Callable[..., object]:
    """The compiled ``dispatcher`` specialised for its last argument's value (a literal int).

    The specialisation's signature types the last argument as ``Literal[int](value)``, so the body sees
    a compile-time constant (constant trip counts) without a ``numba.literally`` wrapper calling it (a
    wrapper would make the driver a callee: see the section on compiled steps). This compiles it once
    (or loads it from numba's disk cache) and returns its entry point, which takes the same arguments;
    calling the dispatcher instead would also cost numba's slow literal dispatch, about 4 ms of CPU per
    call, which a query cannot afford.

    Parameters
    ----------
    dispatcher : numba dispatcher
        A function decorated with ``@njit``.
    *args
        Arguments of the types it will be called with; the last one is the int to specialise on.

    Returns
    -------
    callable
        Called with arguments of those types (and that last value), it runs the compiled code directly.
    """
    from numba import typeof
    from numba.core import types

    key = (dispatcher, *(typeof(a) for a in args[:-1]), types.literal(args[-1]))
    entry = _ENTRIES.get(key)
    if entry is None:
        dispatcher.compile(key[1:])  # type: ignore[attr-defined]
        entry = dispatcher.overloads[key[1:]].entry_point  # type: ignore[attr-defined]
        _ENTRIES[key] = entry
    return entry


def call_literal(dispatcher: Callable[..., object], *args: object) -> object:
    """``dispatcher(*args)`` through :func:`literal_entry`: the compiled entry, not numba's slow path."""
    return literal_entry(dispatcher, *args)(*args)
