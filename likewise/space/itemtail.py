"""The item-item model's sparse rows, and its tail: products past the dense fit, regressed on it.

:func:`prune_rows` keeps each row's largest weights (what :mod:`likewise.space.itemitem` saves). The
tail (:func:`tail_weights`) extends a dense EASE fit over the ``m`` most bought products (the head) to
every other product bought at least ``TAIL_MIN_COUNT`` times (at most ``TAIL_MAX_ROWS`` of them, the
most bought), from the head's inverse alone: the exact inverse of the whole catalogue's Gram matrix is
``4 * V**2`` bytes in float32 and ``V**3`` work, beyond reach past about 20,000 products on a small
machine, while the tail costs its co-counts with the head times ``m``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._arrays import unique

__all__ = [
    "GRAM_LINES",
    "TAIL_MAX_ROWS",
    "TAIL_MIN_COUNT",
    "TailCounts",
    "basket_ranges",
    "prune_rows",
    "tail_cocounts",
    "tail_ids",
    "tail_weights",
]

TAIL_MIN_COUNT = 5  # baskets a product outside the dense rows needs for its own weights
#: At most this many tail rows (the most frequent): each keeps up to 256 weights (2 KiB saved), so a
#: catalogue of millions does not save gigabytes of rare products' weights (65,536 rows: 128 MiB).
TAIL_MAX_ROWS = 65_536
_TAIL_BLOCK = 512  # tail ids per block of the tail's fit: 2 KiB per head row (and a block's temporaries)
_PAIR_BUDGET = 1 << 23  # (tail, head) pairs materialised at a time while counting (64 MiB of keys)
_BLOCK_ELEMS = 1 << 22  # weights per block of rows while pruning: the temporaries stay small
#: Lines of baskets counted at a time into the Gram matrix and the tail's co-counts.
GRAM_LINES = 1 << 21


def basket_ranges(offsets: np.ndarray, lines: int) -> list[tuple[int, int]]:
    """Consecutive ranges ``(b0, b1)`` of baskets covering them all, each of about ``lines`` lines (a
    basket longer than that is a range of its own)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    out, b0 = [], 0
    while b0 < n:
        b1 = int(np.searchsorted(offsets, offsets[b0] + lines, side="right")) - 1
        b1 = min(n, max(b1, b0 + 1))
        out.append((b0, b1))
        b0 = b1
    return out


def prune_rows(b: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``keep`` largest-magnitude entries of each row of ``b`` as CSR (indptr, indices, data).

    Zeros are dropped; columns are sorted inside each row; ties in magnitude go to the lower column.
    """
    m, n = b.shape
    keep = int(min(keep, n))
    indptr = np.zeros(m + 1, dtype=np.int64)
    parts_c, parts_v = [], []
    step = max(1, _BLOCK_ELEMS // max(n, 1))  # rows at a time: the temporaries stay small
    for a in range(0, m, step):
        blk = b[a : a + step]
        if keep < n:
            part = np.argpartition(-np.abs(blk), keep - 1, axis=1)[:, :keep]
            cols = np.sort(part, axis=1)
        else:
            cols = np.broadcast_to(np.arange(n), blk.shape)
        vals = np.take_along_axis(blk, cols, axis=1)
        nz = vals != 0
        indptr[a + 1 : a + 1 + len(blk)] = nz.sum(axis=1)
        parts_c.append(cols[nz].astype(np.int32))
        parts_v.append(vals[nz].astype(np.float32))
    np.cumsum(indptr, out=indptr)
    if not parts_c:
        return indptr, np.zeros(0, np.int32), np.zeros(0, np.float32)
    return indptr, np.concatenate(parts_c), np.concatenate(parts_v)


def tail_ids(
    counts: np.ndarray, items: np.ndarray, min_count: int, max_rows: int | None = None
) -> np.ndarray:
    """Sorted ids outside ``items`` whose count is at least ``min_count`` (the tail of the dense rows).

    At most ``max_rows`` (default :data:`TAIL_MAX_ROWS`), the most frequent (ties: the lower id).
    """
    c = np.asarray(counts, dtype=np.int64)
    out = np.flatnonzero(c >= max(int(min_count), 1))
    out = out[~np.isin(out, items)]
    cap = TAIL_MAX_ROWS if max_rows is None else int(max_rows)
    if len(out) > cap:
        out = np.sort(out[np.lexsort((out, -c[out]))[:cap]])
    return out.astype(np.int64)


@dataclass(frozen=True)
class TailCounts:
    """Co-counts of each tail id with the dense rows, as CSR over the tail.

    ``cols[indptr[t]:indptr[t + 1]]`` are the dense rows (positions in the head's ``items``) seen in a
    basket with tail id ``t`` and ``vals`` how many baskets; ``baskets[t]`` is how many baskets hold it.
    """

    indptr: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    baskets: np.ndarray


def tail_cocounts(
    ids: np.ndarray, offsets: np.ndarray, items: np.ndarray, tail: np.ndarray, n_items: int
) -> TailCounts:
    """:class:`TailCounts` of the ids ``tail`` against the rows ``items`` (both sorted, disjoint).

    A basket counts once per distinct id, as in :func:`gram_matrix`. Every (tail, head) pair of a
    basket is generated, so the work is the tail's occurrences times the head ids of their baskets.
    """
    nh, nt = len(items), len(tail)
    pos = np.full(int(n_items), -1, dtype=np.int64)
    pos[np.asarray(items, dtype=np.int64)] = np.arange(nh, dtype=np.int64)
    pos[np.asarray(tail, dtype=np.int64)] = nh + np.arange(nt, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    baskets = np.zeros(nt, dtype=np.int64)
    pk, cnt = np.zeros(0, np.int64), np.zeros(0, np.int64)
    # a range of baskets at a time (line-sized temporaries bounded), each range's counts merged into the
    # running sorted keys (a key met again adds to its count; a new one is inserted in order)
    for b0, b1 in basket_ranges(offsets, GRAM_LINES):
        lo, hi = int(offsets[b0]), int(offsets[b1])
        k, c, t_baskets = _range_cocounts(ids[lo:hi], offsets[b0 : b1 + 1] - lo, pos, nh, nt)
        baskets += t_baskets
        if not len(pk):
            pk, cnt = k, c
            continue
        at = np.searchsorted(pk, k)
        old = at < len(pk)
        old[old] = pk[at[old]] == k[old]
        cnt[at[old]] += c[old]
        pk = np.insert(pk, at[~old], k[~old])
        cnt = np.insert(cnt, at[~old], c[~old])
    t_of, h_of = np.divmod(pk, nh) if nh else (pk, pk)
    indptr = np.zeros(nt + 1, dtype=np.int64)
    np.cumsum(np.bincount(t_of, minlength=nt), out=indptr[1:])
    return TailCounts(indptr, h_of.astype(np.int64), cnt.astype(np.float32), baskets)


def _range_cocounts(
    ids: np.ndarray, offsets: np.ndarray, pos: np.ndarray, nh: int, nt: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One range of baskets' (tail, head) pair keys ``tail * nh + head`` (sorted, distinct), their counts,
    and each tail id's baskets."""
    rows = pos[np.asarray(ids, dtype=np.int64)]
    seq = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    keep = rows >= 0
    key = unique(seq[keep] * (nh + nt) + rows[keep])  # distinct (basket, row), sorted by basket
    del rows, seq, keep
    seq, rows = np.divmod(key, nh + nt)
    del key
    is_t = rows >= nh
    head_seq, head_row = seq[~is_t], rows[~is_t]
    t_seq, t_row = seq[is_t], rows[is_t] - nh
    baskets = np.bincount(t_row, minlength=nt).astype(np.int64)
    first = np.searchsorted(head_seq, t_seq, "left")
    rep = np.searchsorted(head_seq, t_seq, "right") - first
    # pairs a bounded number at a time: tail entries in id order, cut where the pairs reach the budget
    # (a cut falls between ids, so each (tail, head) key is counted in one chunk)
    order = np.argsort(t_row, kind="stable")
    t_row, first, rep = t_row[order], first[order], rep[order]
    last = np.flatnonzero(np.r_[t_row[1:] != t_row[:-1], True]) if len(t_row) else np.zeros(0, np.int64)
    begin = np.r_[0, last[:-1] + 1]
    cum = np.cumsum(np.add.reduceat(rep, begin)) if len(begin) else np.zeros(0, np.int64)
    parts_k, parts_c = [], []
    i = 0
    while i < len(begin):
        j = max(i + 1, int(np.searchsorted(cum, (cum[i - 1] if i else 0) + _PAIR_BUDGET, "right")))
        lo, hi = int(begin[i]), int(last[j - 1]) + 1
        r = rep[lo:hi]
        within = np.arange(int(r.sum()), dtype=np.int64) - np.repeat(np.cumsum(r) - r, r)
        pairs = np.repeat(t_row[lo:hi], r) * nh + head_row[np.repeat(first[lo:hi], r) + within]
        k, c = np.unique(pairs, return_counts=True)
        parts_k.append(k)
        parts_c.append(c)
        i = j
    pk = np.concatenate(parts_k) if parts_k else np.zeros(0, np.int64)
    cnt = np.concatenate(parts_c) if parts_c else np.zeros(0, np.int64)
    return pk, cnt.astype(np.int64), baskets


def tail_weights(
    p: np.ndarray, items: np.ndarray, tail: np.ndarray, co: TailCounts, lam: float, keep: int, n_items: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """EASE over the dense rows ``items`` extended to the ``tail``, from the head's ``P = inv(G + lam I)``.

    A tail id ``t`` is a column regressed on the head alone (ridge, penalty ``lam``): what a basket of
    head products says of it, ``B[:, t] = P g_t`` with ``g_t`` its co-counts with the head. As a row
    (what it says of head products) it takes EASE's exact weights for a head extended by ``t`` alone,
    the block inverse's ``B[t, j] = w_j s_t / (P[j, j] + s_t w_j**2)`` with ``w = P g_t`` and
    ``s_t = 1 / (G[t, t] + lam - g_t' w)`` (the inverse of the Schur complement, at most ``1 / lam``).
    Tail ids do not weigh each other and leave the head's weights as they are, so a tail of one id
    gets exactly EASE's row and column over the head and it. Cost: the tail's co-counts times ``m``
    (:func:`likewise.kernels.rowsum.sparse_times_dense`), a block of ``_TAIL_BLOCK`` tail ids at a
    time, never a tail x tail matrix.

    ``p`` (symmetric, ``m x m``) is overwritten with ``B``. Rows keep their ``keep`` largest weights.
    Returns the model's rows (sorted ids), ``indptr``, ``cols`` (space ids, int32) and ``data`` (float32),
    the arrays of :class:`likewise.space.itemitem.ItemItem`.
    """
    from ..kernels.rowsum import sparse_times_dense  # numba: loaded when a model is fitted

    m, nt = len(items), len(tail)
    pc = p.T if p.flags.f_contiguous and not p.flags.c_contiguous else p  # symmetric: same values, C order
    d32 = np.diag(pc).astype(np.float32)
    head_v = np.zeros((m, 0), dtype=np.float32)
    head_c = np.zeros((m, 0), dtype=np.int32)
    tail_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for a in range(0, nt, _TAIL_BLOCK):
        b = min(nt, a + _TAIL_BLOCK)
        lo, hi = int(co.indptr[a]), int(co.indptr[b])
        sub = co.indptr[a : b + 1] - lo
        w = sparse_times_dense(sub, co.cols[lo:hi], co.vals[lo:hi], pc)  # (b - a, m): row t is P g_t
        owner = np.repeat(np.arange(b - a), np.diff(sub))
        quad = np.bincount(owner, weights=co.vals[lo:hi] * w[owner, co.cols[lo:hi]], minlength=b - a)
        s = (1.0 / np.maximum(co.baskets[a:b] + lam - quad, lam)).astype(np.float32)
        # the block's rows in float32 (what is kept): a block's temporaries are (b - a) x m floats each
        ws = w * s[:, None]
        den = ws * w
        den += d32[None, :]
        np.divide(ws, den, out=ws)
        del den
        ip, c, v = prune_rows(ws, keep)
        del ws
        tail_parts.append((np.diff(ip), items[c], v))
        # columns of the tail in the head rows: the running top ``keep`` of each head row
        cand_c = np.concatenate([head_c, np.broadcast_to(tail[a:b].astype(np.int32), (m, b - a))], axis=1)
        head_v, head_c = _top_abs(np.concatenate([head_v, w.T], axis=1), cand_c, keep)
    d32 = np.diag(pc).copy()  # in p's dtype
    pc /= -d32[None, :]  # P -> B (column j over P[j, j]); pc is symmetric P, so this is row-major B
    np.fill_diagonal(pc, 0.0)
    parts_n, parts_c, parts_v = [], [], []
    step = max(1, _BLOCK_ELEMS // max(m + head_v.shape[1], 1))
    for a in range(0, m, step):
        blk = pc[a : a + step]
        cols = np.concatenate([np.broadcast_to(items, blk.shape), head_c[a : a + step]], axis=1)
        v, c = _top_abs(np.concatenate([blk, head_v[a : a + step]], axis=1).astype(np.float32), cols, keep)
        nz = v != 0
        parts_n.append(nz.sum(axis=1))
        parts_c.append(c[nz])
        parts_v.append(v[nz])
    lens = np.concatenate([*parts_n, *[x[0] for x in tail_parts]])
    cols_all = np.concatenate([*parts_c, *[x[1] for x in tail_parts]])
    vals_all = np.concatenate([*parts_v, *[x[2] for x in tail_parts]])
    rows_all = np.concatenate([items, tail]).astype(np.int64)
    # rows sorted by id: move each row's segment
    order = np.argsort(rows_all, kind="stable")
    starts = np.concatenate([[0], np.cumsum(lens)])[:-1]
    sl = lens[order]
    take = np.repeat(starts[order], sl) + (np.arange(int(sl.sum())) - np.repeat(np.cumsum(sl) - sl, sl))
    indptr = np.zeros(len(rows_all) + 1, dtype=np.int64)
    np.cumsum(sl, out=indptr[1:])
    return rows_all[order], indptr, cols_all[take].astype(np.int32), vals_all[take].astype(np.float32)


def _top_abs(vals: np.ndarray, cols: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the ``keep`` entries of largest magnitude (all when fewer), sorted by column id."""
    if vals.shape[1] > keep:
        part = np.argpartition(-np.abs(vals), keep - 1, axis=1)[:, :keep]
        vals = np.take_along_axis(vals, part, axis=1)
        cols = np.take_along_axis(cols, part, axis=1)
    order = np.argsort(cols, axis=1, kind="stable")
    return np.take_along_axis(vals, order, axis=1), np.take_along_axis(np.asarray(cols), order, axis=1)
