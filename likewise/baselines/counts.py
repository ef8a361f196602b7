"""The honest yardsticks an embedding space must beat: count baselines, and the learned peers.

Every recommender here answers the same question as the model ("given these items, what comes
next / what else goes in the basket?") from the *training* part of the data. Four need no training,
only counts:

* ``popular`` -- the most frequent items, whatever the context.
* ``cocount`` -- the classic "customers who bought this also bought": for each context item, the
  number of training sequences that hold both it and the candidate, summed over the context.
* ``ppmi`` -- the same counts turned into positive pointwise mutual information (Levy, Goldberg &
  Dagan 2015, with context-distribution smoothing 0.75), summed over the context. PPMI discounts
  items that co-occur with everything simply because they are popular.
* ``ppmi-svd`` -- the PPMI matrix factorised by a truncated SVD to the model's dimension; item vectors
  ``U * sqrt(S)`` (the symmetric weighting Levy et al. recommend); scored like the model itself
  (cosine to the mean of the context's unit vectors). This is the classic count-based embedding.

Two learn, each with its key hyper-parameter chosen on a held-out slice of the training sequences
(:mod:`likewise.baselines.peers`, re-exported here):

* ``ease`` -- :class:`EASERecommender`, EASE (Steck 2019), closed-form item-item ridge regression.
* ``als`` -- :class:`ALSRecommender`, confidence-weighted implicit ALS (Hu, Koren & Volinsky 2008),
  from the optional ``implicit`` package.

Each is declared once, in :data:`PEERS` (a :class:`~likewise.baselines.registry.Peers`: name, how it is
fitted, the optional library it needs, whether it is in the default set, one line about it), and
everything else is read from there: :func:`fit_baselines` fits the peers asked for in a loop,
``likewise eval --holdout`` offers their names, and the benchmarks compare against them.
:data:`BASELINES`, the default of :func:`fit_baselines` (and of ``likewise eval --holdout``), holds the
four count baselines and ``ease``, plus ``als`` when ``implicit`` is installed; :data:`KNOWN_BASELINES`
every name :func:`fit_baselines` accepts (asking for ``als`` without ``implicit`` raises
:class:`~likewise.errors.MissingDependencyError` with the install line).

All share :class:`Recommender`: ``recommend_ids(contexts, k)`` returns ``(n, k)`` int64 ids, best
first, never an item of the query's own context, ties broken by the lower id. A baseline whose items
are vectors also offers ``item_rows(rows)`` (every one but ``popular``), and a learned peer
``chosen()``, the hyper-parameters it chose on its held-out slice (what the benchmarks report).
Scores are computed for a block of contexts at a time so memory stays bounded whatever the number of
contexts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._arrays import unique
from ..errors import InputError
from ..space.itemitem import segment_pairs
from ..space.search import normalise_rows, top_k_excluding, top_k_search
from ._ranking import as_sequences, check_contexts, check_k, check_training_ids
from .peers import ALSRecommender, EASERecommender
from .registry import Peer, PeerData, Peers, Recommender

__all__ = [
    "BASELINES",
    "KNOWN_BASELINES",
    "PEERS",
    "ALSRecommender",
    "CoCountRecommender",
    "CountMatrix",
    "EASERecommender",
    "PPMIRecommender",
    "Peer",
    "PeerData",
    "Peers",
    "PopularRecommender",
    "Recommender",
    "VectorRecommender",
    "cooccurrence",
    "fit_baselines",
    "ppmi",
    "top_k_excluding",
    "truncated_svd",
]

_BLOCK_ELEMS = 1 << 22  # dense scores per block: 4M float64 = 32 MiB, whatever the batch size
_PAIR_BLOCK = 1 << 23  # co-occurrence pairs generated at a time before they are counted


# --------------------------------------------------------------------------------------------------------
# Shared plumbing
# --------------------------------------------------------------------------------------------------------


def _blocks(n: int, n_items: int) -> Iterable[tuple[int, int]]:
    step = max(1, _BLOCK_ELEMS // max(1, n_items))
    for start in range(0, n, step):
        yield start, min(n, start + step)


# --------------------------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CountMatrix:
    """A sparse square matrix in CSR form (rows and columns are item ids).

    Attributes
    ----------
    indptr : ndarray of int64, shape (V + 1,)
    indices : ndarray of int64, shape (nnz,)
        Column of each stored value; sorted inside each row.
    data : ndarray of float64, shape (nnz,)
    n : int
        V, the number of rows and columns.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n: int

    @property
    def nnz(self) -> int:
        """Number of stored values."""
        return int(len(self.data))

    @classmethod
    def from_coo(cls, rows: np.ndarray, cols: np.ndarray, data: np.ndarray, n: int) -> CountMatrix:
        """Build from (row, col, value) triples with unique (row, col)."""
        order = np.lexsort((cols, rows))
        rows, cols, data = rows[order], cols[order], data[order]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        return cls(indptr, cols.astype(np.int64), data.astype(np.float64), n)

    def row_ids(self) -> np.ndarray:
        """Row of each stored value."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))

    def transpose(self) -> CountMatrix:
        """The transposed matrix."""
        return CountMatrix.from_coo(self.indices, self.row_ids(), self.data, self.n)

    def to_dense(self) -> np.ndarray:
        """Dense float64 ``(V, V)``; for small V and tests."""
        out = np.zeros((self.n, self.n), dtype=np.float64)
        out[self.row_ids(), self.indices] = self.data
        return out

    def matmul(self, m: np.ndarray) -> np.ndarray:
        """``self @ m`` for a dense ``m`` of shape (V, r), a bounded slice of the stored values at a time."""
        r = m.shape[1]
        out = np.zeros((self.n, r), dtype=np.float64)
        rows = self.row_ids()
        step = max(1, _PAIR_BLOCK // max(1, r) // 4)
        for s in range(0, self.nnz, step):
            e = min(self.nnz, s + step)
            contrib = self.data[s:e, None] * m[self.indices[s:e]]
            _add_rows(out, rows[s:e], contrib)
        return out

    def sum_rows(self, contexts: Sequence[np.ndarray], start: int, stop: int) -> np.ndarray:
        """Dense ``(stop - start, V)`` float64: for each context, the sum of its items' rows."""
        block = contexts[start:stop]
        b = len(block)
        lens = np.fromiter((len(c) for c in block), dtype=np.int64, count=b)
        if lens.sum() == 0:
            return np.zeros((b, self.n), dtype=np.float64)
        items = np.concatenate(block)
        owner = np.repeat(np.arange(b, dtype=np.int64), lens)
        row_len = self.indptr[items + 1] - self.indptr[items]
        total = int(row_len.sum())
        # positions of every stored value of every context item, without a Python loop
        first = np.repeat(self.indptr[items] - np.cumsum(row_len) + row_len, row_len)
        pos = first + np.arange(total, dtype=np.int64)
        flat = np.repeat(owner, row_len) * self.n + self.indices[pos]
        return np.bincount(flat, weights=self.data[pos], minlength=b * self.n).reshape(b, self.n)


def _add_rows(out: np.ndarray, rows: np.ndarray, contrib: np.ndarray) -> None:
    """``out[rows] += contrib`` for sorted ``rows`` with repeats (a segmented sum, no ``np.add.at``)."""
    if len(rows) == 0:
        return
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    out[rows[starts]] += np.add.reduceat(contrib, starts, axis=0)


def cooccurrence(train: Any, n_items: int, *, max_len: int = 500) -> tuple[CountMatrix, np.ndarray]:
    """Count, for each pair of distinct items, the training sequences that hold both.

    Parameters
    ----------
    train : Corpus or sequence of int arrays
        Training sequences of item ids in ``[0, n_items)``.
    n_items : int
        V, the vocabulary size.
    max_len : int
        A sequence with more distinct items than this is cut into consecutive pieces of this many
        items, so one long sequence cannot produce ``L**2`` pairs.

    Returns
    -------
    counts : CountMatrix
        Symmetric co-occurrence counts, zero diagonal.
    occurrences : ndarray of int64, shape (V,)
        How often each item occurs in the training data (its popularity).
    """
    if not isinstance(n_items, int | np.integer) or n_items < 1:
        raise InputError(f"n_items == {n_items!r}, must be an int >= 1")
    ids, offsets = as_sequences(train)
    n_items = check_training_ids(ids, n_items)
    occurrences = np.bincount(ids, minlength=n_items).astype(np.int64)
    # distinct items per sequence: sort by (sequence, item), drop repeats
    seq = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    order = np.lexsort((ids, seq))
    s, it = seq[order], ids[order]
    keep = np.r_[True, (s[1:] != s[:-1]) | (it[1:] != it[:-1])] if len(s) else np.zeros(0, bool)
    s, it = s[keep], it[keep]
    # piece = sequence cut into runs of at most max_len distinct items
    pos_in_seq = np.arange(len(s)) - np.searchsorted(s, s, side="left")
    piece = s * (1 + (np.max(pos_in_seq, initial=0) // max_len)) + pos_in_seq // max_len
    starts = np.flatnonzero(np.r_[True, piece[1:] != piece[:-1]]) if len(piece) else np.zeros(0, np.int64)
    lens = np.diff(np.r_[starts, len(piece)])
    keys_acc: list[np.ndarray] = []
    vals_acc: list[np.ndarray] = []
    # generate all ordered pairs piece by piece, a bounded number of pairs at a time
    pairs_per = lens * lens
    cut = np.searchsorted(np.cumsum(pairs_per), np.arange(_PAIR_BLOCK, int(pairs_per.sum()) + 1, _PAIR_BLOCK))
    bounds = unique(np.r_[0, cut + 1, len(lens)].clip(0, len(lens)))
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        left, right = segment_pairs(it, starts[a:b], lens[a:b])
        k, c = np.unique(left * n_items + right, return_counts=True)
        keys_acc.append(k)
        vals_acc.append(c)
    if keys_acc:
        allk = np.concatenate(keys_acc)
        allv = np.concatenate(vals_acc)
        k, inv = np.unique(allk, return_inverse=True)
        v = np.bincount(inv, weights=allv).astype(np.float64)
    else:
        k, v = np.zeros(0, np.int64), np.zeros(0, np.float64)
    return CountMatrix.from_coo(k // n_items, k % n_items, v, int(n_items)), occurrences


def ppmi(counts: CountMatrix, alpha: float = 0.75) -> CountMatrix:
    """Positive PMI of a co-occurrence matrix, with context-distribution smoothing ``alpha``.

    ``PPMI(i, j) = max(0, log(C_ij * Z / (C_i. * C_.j ** alpha)))`` with ``Z = sum_j C_.j ** alpha``
    (Levy, Goldberg & Dagan 2015). Zero entries stay zero (sparse).
    """
    if not 0 < alpha <= 1:
        raise InputError(f"alpha == {alpha!r}, must be in (0, 1]")
    rows = counts.row_ids()
    row_sum = np.bincount(rows, weights=counts.data, minlength=counts.n)
    col_sum = np.bincount(counts.indices, weights=counts.data, minlength=counts.n) ** alpha
    z = col_sum.sum()
    with np.errstate(divide="ignore"):
        pmi = np.log(counts.data) + np.log(z) - np.log(row_sum[rows]) - np.log(col_sum[counts.indices])
    keep = pmi > 0
    return CountMatrix.from_coo(rows[keep], counts.indices[keep], pmi[keep], counts.n)


def truncated_svd(
    m: CountMatrix, dim: int, *, seed: int = 0, n_iter: int = 5, oversample: int = 10
) -> tuple[np.ndarray, np.ndarray]:
    """Leading ``dim`` left singular vectors and values of ``m``.

    Exact (LAPACK) when V <= 2,000; otherwise randomized (Halko, Martinsson & Tropp 2011) with
    ``n_iter`` power iterations, seeded, touching ``m`` only through sparse products.

    Returns
    -------
    u : ndarray of float64, shape (V, dim)
    s : ndarray of float64, shape (dim,)
        Descending. Signs are fixed so each column's largest-magnitude entry is positive.
    """
    dim = int(min(dim, m.n))
    if m.n <= 2000:
        u, s, _ = np.linalg.svd(m.to_dense(), full_matrices=False)
        u, s = u[:, :dim], s[:dim]
    else:
        mt = m.transpose()
        rng = np.random.default_rng(seed)
        r = min(m.n, dim + oversample)
        q, _ = np.linalg.qr(m.matmul(rng.standard_normal((m.n, r))))
        for _ in range(n_iter):
            q, _ = np.linalg.qr(mt.matmul(q))
            q, _ = np.linalg.qr(m.matmul(q))
        b = mt.matmul(q).T  # (r, V) = q.T @ m
        ub, s, _ = np.linalg.svd(b, full_matrices=False)
        u, s = (q @ ub)[:, :dim], s[:dim]
    signs = np.sign(u[np.abs(u).argmax(axis=0), np.arange(u.shape[1])])
    signs[signs == 0] = 1
    return u * signs, s


# --------------------------------------------------------------------------------------------------------
# The recommenders
# --------------------------------------------------------------------------------------------------------


class PopularRecommender:
    """The most frequent training items not already in the context.

    Parameters
    ----------
    occurrences : array of int, shape (V,)
        Training frequency of each item.
    """

    name = "popular"

    def __init__(self, occurrences: np.ndarray) -> None:
        self.scores_ = np.asarray(occurrences, dtype=np.float64)
        self.n_items = len(self.scores_)

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """See :class:`Recommender`.

        One global ranking serves every context: its first ``k + L`` items (``L`` the longest context)
        always hold the answer, so the cost per context is O(k + L), not O(V).
        """
        ctx = check_contexts(contexts, self.n_items)
        k = check_k(k, self.n_items, ctx)
        n = len(ctx)
        longest = max((len(c) for c in ctx), default=0)
        order = np.lexsort((np.arange(self.n_items), -self.scores_))[: k + longest]
        out = np.empty((n, k), dtype=np.int64)
        step = max(1, _BLOCK_ELEMS // max(1, len(order)))
        lens = np.fromiter((len(c) for c in ctx), dtype=np.int64, count=n)
        starts = np.r_[0, np.cumsum(lens)]
        flat = np.concatenate(ctx) if n else np.zeros(0, np.int64)
        for a in range(0, n, step):
            b = min(n, a + step)
            rows = np.arange(b - a, dtype=np.int64)
            cand = rows[:, None] * self.n_items + order[None, :]
            used = np.repeat(rows, lens[a:b]) * self.n_items + flat[starts[a] : starts[b]]
            free = ~np.isin(cand, used)
            pick = free & (np.cumsum(free, axis=1) <= k)
            out[a:b] = np.broadcast_to(order, cand.shape)[pick].reshape(b - a, k)
        return out

    def recommend_ids_reference(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """Dense NumPy reference of :meth:`recommend_ids` (a score row per context), for tests."""
        ctx = check_contexts(contexts, self.n_items)
        k = check_k(k, self.n_items, ctx)
        out = np.empty((len(ctx), k), dtype=np.int64)
        for a, b in _blocks(len(ctx), self.n_items):
            scores = np.broadcast_to(self.scores_, (b - a, self.n_items)).copy()
            out[a:b] = top_k_excluding(scores, ctx, k, a)
        return out


class CoCountRecommender:
    """Items ranked by a score matrix summed over the context's rows (co-counts, or PPMI).

    Parameters
    ----------
    matrix : CountMatrix
        Row ``i`` scores every candidate for context item ``i``.
    name : str
    """

    def __init__(self, matrix: CountMatrix, name: str = "cocount") -> None:
        self.matrix_ = matrix
        self.name = name
        self.n_items = matrix.n

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """See :class:`Recommender`.

        Only the stored values of the context items' rows are touched (a bounded number at a time), so
        the cost follows the co-occurrences, not the catalogue size. Every stored value is positive, so
        an item outside the rows scores 0 and is ranked after them, by lower id.
        """
        ctx = check_contexts(contexts, self.n_items)
        k = check_k(k, self.n_items, ctx)
        return _sparse_top_k(self.matrix_, ctx, k)

    def recommend_ids_reference(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """Dense NumPy reference of :meth:`recommend_ids` (a score row per context), for tests."""
        ctx = check_contexts(contexts, self.n_items)
        k = check_k(k, self.n_items, ctx)
        out = np.empty((len(ctx), k), dtype=np.int64)
        for a, b in _blocks(len(ctx), self.n_items):
            out[a:b] = top_k_excluding(self.matrix_.sum_rows(ctx, a, b), ctx, k, a)
        return out

    def item_rows(self, rows: np.ndarray) -> np.ndarray:
        """Rows ``rows`` of the score matrix, dense float32: the items as vectors (compared by cosine)."""
        return self.matrix_.to_dense()[rows].astype(np.float32)


def _sparse_top_k(m: CountMatrix, ctx: list[np.ndarray], k: int, dense: bool | None = None) -> np.ndarray:
    """Top ``k`` of the summed rows of each context, context excluded, ties and zeros by lower id.

    Each block of contexts is scored sparsely (only the stored values of its rows) or, when those rows
    are nearly full, densely; ``dense`` forces one way (for tests).
    """
    n, v = len(ctx), m.n
    out = np.empty((n, k), dtype=np.int64)
    if n == 0 or k == 0:
        return out
    lens = np.fromiter((len(c) for c in ctx), dtype=np.int64, count=n)
    starts = np.r_[0, np.cumsum(lens)]
    flat = np.concatenate(ctx)
    row_len = m.indptr[flat + 1] - m.indptr[flat]
    per_ctx = np.bincount(np.repeat(np.arange(n), lens), weights=row_len, minlength=n)
    # cut the contexts into blocks of about _PAIR_BLOCK stored values each
    cum = np.cumsum(per_ctx)
    cuts = np.searchsorted(cum, np.arange(_PAIR_BLOCK, int(cum[-1]) + 1, _PAIR_BLOCK), side="right")
    bounds = unique(np.r_[0, cuts, n].clip(0, n))
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        if dense is True or (dense is None and cum[b - 1] - (cum[a - 1] if a else 0) > (b - a) * v // 8):
            # rows of popular items are nearly full: one dense score row per context is cheaper than
            # sorting that many (context, item) keys
            for c0, c1 in _blocks(b - a, v):
                out[a + c0 : a + c1] = top_k_excluding(m.sum_rows(ctx, a + c0, a + c1), ctx, k, a + c0)
            continue
        items = flat[starts[a] : starts[b]]
        owner = np.repeat(np.arange(b - a, dtype=np.int64), lens[a:b])
        rl = row_len[starts[a] : starts[b]]
        total = int(rl.sum())
        pos = np.repeat(m.indptr[items] - np.cumsum(rl) + rl, rl) + np.arange(total, dtype=np.int64)
        keys, inv = np.unique(np.repeat(owner, rl) * v + m.indices[pos], return_inverse=True)
        scores = np.bincount(inv, weights=m.data[pos], minlength=len(keys))
        keep = ~np.isin(keys, owner * v + items)
        keys, scores = keys[keep], scores[keep]
        o, col = np.divmod(keys, v)
        order = np.lexsort((col, -scores, o))
        o, col = o[order], col[order]
        rank = np.arange(len(o)) - np.searchsorted(o, o, side="left")
        sel = rank < k
        res = np.full((b - a, k), -1, dtype=np.int64)
        res[o[sel], rank[sel]] = col[sel]
        filled = np.bincount(o[sel], minlength=b - a)
        for r in np.flatnonzero(filled < k).tolist():
            # pad with score-0 items: the lowest ids neither in the context nor already chosen
            taken = set(res[r, : filled[r]].tolist()) | set(ctx[a + r].tolist())
            c, j = int(filled[r]), 0
            while c < k:
                if j not in taken:
                    res[r, c] = j
                    c += 1
                j += 1
        out[a:b] = res
    return out


class PPMIRecommender(CoCountRecommender):
    """Candidates ranked by the sum of their PPMI with the context items."""

    def __init__(self, matrix: CountMatrix) -> None:
        super().__init__(matrix, name="ppmi")


class VectorRecommender:
    """Cosine between each candidate and the mean of the context's unit vectors (as the model does).

    Parameters
    ----------
    vectors : ndarray, shape (V, D)
    name : str
    """

    def __init__(self, vectors: np.ndarray, name: str) -> None:
        self.name = name
        self.normed_ = normalise_rows(np.asarray(vectors, dtype=np.float32))
        self.n_items = len(self.normed_)

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """See :class:`Recommender`."""
        ctx = check_contexts(contexts, self.n_items)
        k = check_k(k, self.n_items, ctx)
        queries = np.zeros((len(ctx), self.normed_.shape[1]), dtype=np.float32)
        for i, c in enumerate(ctx):
            if len(c):
                queries[i] = self.normed_[c].sum(axis=0)
        lens = np.fromiter((len(c) for c in ctx), dtype=np.int64, count=len(ctx))
        ex_rows = np.repeat(np.arange(len(ctx), dtype=np.int64), lens)
        ex_cols = np.concatenate(ctx) if len(ctx) else np.zeros(0, np.int64)
        rows, _ = top_k_search(self.normed_, normalise_rows(queries), k, ex_rows, ex_cols)
        return rows

    def item_rows(self, rows: np.ndarray) -> np.ndarray:
        """The unit vectors of items ``rows``, float32."""
        return self.normed_[rows]


# --------------------------------------------------------------------------------------------------------
# The peers, each declared once
# --------------------------------------------------------------------------------------------------------


def _counts(data: PeerData) -> tuple[CountMatrix, np.ndarray]:
    """Co-occurrence counts and occurrences, counted once for every count baseline of one fit."""
    return data.shared("cooccurrence", lambda: cooccurrence(data.train, data.n_items))


def _ppmi(data: PeerData) -> CountMatrix:
    """The PPMI of :func:`_counts`, once for ``ppmi`` and ``ppmi-svd``."""
    return data.shared("ppmi", lambda: ppmi(_counts(data)[0]))


def _fit_ppmi_svd(data: PeerData) -> VectorRecommender:
    u, s = truncated_svd(_ppmi(data), data.dim, seed=data.seed)
    return VectorRecommender(u * np.sqrt(s), name="ppmi-svd")


#: Every baseline, in the order reports print them. Add a peer here and :func:`fit_baselines`,
#: ``likewise eval --baselines`` and the benchmarks (bench/defaults_vs_baselines.py,
#: bench/supermarket.py) all have it.
PEERS = Peers(
    (
        Peer("popular", lambda d: PopularRecommender(_counts(d)[1]), "the most frequent training items"),
        Peer("cocount", lambda d: CoCountRecommender(_counts(d)[0]), "co-occurrence counts with the context"),
        Peer("ppmi", lambda d: PPMIRecommender(_ppmi(d)), "positive PMI with the context, summed"),
        Peer("ppmi-svd", _fit_ppmi_svd, "cosine on PPMI factorised by truncated SVD to the dimension"),
        Peer(
            "ease",
            lambda d: EASERecommender(seed=d.seed).fit(d.train, d.n_items),
            "EASE item-item ridge regression, its penalty chosen on a held-out slice",
            learned=True,
        ),
        Peer(
            "als",
            lambda d: ALSRecommender(d.dim, seed=d.seed).fit(d.train, d.n_items),
            "confidence-weighted implicit ALS, alpha and regularization chosen on a held-out slice",
            needs="implicit",
            learned=True,
        ),
    )
)
#: Every name :func:`fit_baselines` accepts, as built in.
KNOWN_BASELINES: tuple[str, ...] = PEERS.names
#: The default set: ``als`` only where ``implicit`` is installed (it is an optional dependency).
BASELINES: tuple[str, ...] = PEERS.defaults


def fit_baselines(
    train: Any,
    n_items: int,
    *,
    dim: int | None = None,
    which: Sequence[str] | None = None,
    seed: int = 0,
    peers: Peers | None = None,
) -> dict[str, Recommender]:
    """Fit the baselines on training sequences.

    Parameters
    ----------
    train : Corpus or sequence of int arrays
        One id array per basket / sequence; ids index the same vocabulary as the model.
    n_items : int
        Vocabulary size V.
    dim : int, optional
        Dimension of ``ppmi-svd`` and factors of ``als`` (give the model's); default ``min(100, V)``.
    which : sequence of str, optional
        Names of ``peers``; default their default set (:data:`BASELINES` for :data:`PEERS`).
    seed : int
        Seed of the randomized SVD (used when V > 2,000), of the held-out slices on which ``ease``
        and ``als`` choose their hyper-parameter, and of ALS's initial factors.
    peers : Peers, optional
        The declarations to fit from; default :data:`PEERS`.

    Returns
    -------
    dict of str to Recommender
        In the order of ``which``.

    Raises
    ------
    MissingDependencyError
        ``als`` is asked for and ``implicit`` is not installed.
    """
    peers = PEERS if peers is None else peers
    if which is not None:
        for w in which:  # every name checked before any work
            peers.get(w)
    if dim is not None and (not isinstance(dim, int | np.integer) or dim < 1):
        raise InputError(f"dim == {dim!r}, must be an int >= 1 or None")
    rank = int(dim or min(100, int(n_items)))
    return peers.fit(PeerData(train, n_items, rank, seed), which)
