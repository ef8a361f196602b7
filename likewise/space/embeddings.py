"""A trained embedding space: vectors + vocabulary + fingerprint, and the queries on it.

:class:`Embeddings` is a thin class: it validates its arguments, resolves keys to ids and calls the pure
search functions of :mod:`likewise.space.search` (blocked matrix products through BLAS, top-k with a
deterministic tie-break by id). Word-vector queries (analogies, ``most_similar``) come from the
:class:`~likewise.space.analogies.WordQueries` mixin and gensim's other ``KeyedVectors`` names
(``key_to_index``, ``distance``, ``most_similar_cosmul``, ``save_word2vec_format`` ...) from the
:class:`~likewise.space.gensim_names.GensimNames` mixin; saving and loading use the plain files of
:mod:`likewise.space.store`.

All scores are cosines computed on unit-normalised vectors (except 3CosMul, whose score is documented on
:meth:`Embeddings.analogy`, and the affinity of :meth:`Embeddings.recommend`). Results are best first;
equal scores are ordered by ascending id so that two runs on the same space always agree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np

from .._arrays import unique
from .._check import check_k, check_vectors, is_batch, is_item, jsonable
from ..data.vocab import OnUnknown, Vocab
from ..errors import InputError, ItemIndexError, SpaceMismatchError, UnknownItemError
from ..index import Searcher, check_index_for, searcher_for
from ..training.config import TrainConfig
from ..training.report import TrainReport
from .affinity import BasketQueries
from .analogies import WordQueries
from .gensim_names import GensimNames
from .host import Item, Restrict, Types
from .implicit_names import ImplicitNames
from .itemtable import ItemTable
from .names import DisplayNames
from .persist import SpaceFiles
from .results import Neighbours, SpaceVector, compute_fingerprint
from .search import centred_unit_rows, evidence_weights, normalise_rows, top_k_search
from .vectorstores import StoreExports

__all__ = ["Embeddings", "Neighbours", "SpaceVector", "compute_fingerprint", "top_k_search"]


class Embeddings(
    BasketQueries, WordQueries, GensimNames, ImplicitNames, ItemTable, DisplayNames, SpaceFiles, StoreExports
):
    """Item vectors with their vocabulary, and neighbour / recommendation / analogy queries.

    Parameters
    ----------
    vectors : array-like of float, shape [V, D]
        One row per vocabulary item, in id order. Stored as float32 (float64 input is converted); must be
        finite. A float32 C-contiguous array (or memory map) is used without a copy.
    vocab : Vocab
        The items, ``len(vocab) == V``.
    config : TrainConfig or dict, optional
        The training configuration as asked (a dict is read by :meth:`TrainConfig.from_dict`, as a saved
        one is); None (or an empty dict) for a space not trained by likewise.
    fingerprint : str, optional
        Identity of the space; computed from the vectors and keys when omitted (see
        :func:`compute_fingerprint`). Spaces with different fingerprints cannot be compared.
    meta : dict, optional
        Free JSON-serialisable metadata (parent model, creation time ...).
    check_finite : bool
        Scan the vectors for NaN and infinities (O(V·D)); loading skips it for files whose checksums
        were verified.

    Notes
    -----
    An item is the key as written, everywhere: a str key, an int (the key written the same way: ``43`` is
    ``"43"``, as a table's int64 ids are stored), or a unique display name (:attr:`names`); a row is asked
    for only as ``likewise.Row(n)``. Unknown keys raise :class:`~likewise.errors.UnknownItemError` (a
    ``KeyError``) with close suggestions; rows outside ``[0, V)`` raise
    :class:`~likewise.errors.ItemIndexError` (an ``IndexError``) naming the table size.
    Queries use :attr:`normed`, a unit-length float32 copy of the vectors computed once and cached.
    """

    def __init__(
        self,
        vectors: Any,
        vocab: Vocab,
        *,
        config: TrainConfig | dict | None = None,
        fingerprint: str | None = None,
        meta: dict | None = None,
        check_finite: bool = True,
    ) -> None:
        self._setup(vectors, vocab, config, fingerprint, meta, check_finite=check_finite)

    def _setup(
        self,
        vectors: Any,
        vocab: Vocab,
        config: TrainConfig | dict | None,
        fingerprint: str | None,
        meta: dict | None,
        check_finite: bool,
    ) -> None:
        if not isinstance(vocab, Vocab):
            raise InputError(f"vocab must be a likewise.Vocab, got {type(vocab).__name__}")
        arr = check_vectors(vectors, vocab.keys, check_finite=check_finite)
        if fingerprint is not None and (not isinstance(fingerprint, str) or not fingerprint):
            raise InputError(f"fingerprint == {fingerprint!r}, must be a non-empty str or None")
        view = arr.view()
        view.flags.writeable = False  # a read-only view: the fingerprint and the normed cache stay valid
        self._vectors = view
        self._vocab = vocab
        self._config = _as_config(config)
        self._meta = jsonable(meta, "meta")
        self._fingerprint = fingerprint
        self._normed: np.ndarray | None = None
        self._centred: np.ndarray | None = None  # cache of centred_unit_rows (similar by evidence)
        self._index: Any = None  # an attached likewise.index.AnnIndex, used by queries without restrict
        self._searcher: Searcher | None = None  # how queries are answered (searcher_for), on the first one
        self._customers: Any = None  # an attached likewise.retail.CustomerTable
        self._context: np.ndarray | None = None  # skip-gram's output table, when kept
        # the mixins' own state (types, the item-item model, caches, display names) starts as their class
        # defaults: the host sets none of it (likewise.space.host)

    # ---- properties ------------------------------------------------------------------------------------

    @property
    def vocab(self) -> Vocab:
        """The vocabulary (ids ordered by descending count)."""
        return self._vocab

    @property
    def keys(self) -> list[str]:
        """Keys in id order."""
        return self._vocab.keys

    @property
    def counts(self) -> np.ndarray:
        """Count of each item, int64 [V]."""
        return self._vocab.counts

    @property
    def vectors(self) -> np.ndarray:
        """The raw vectors, float32 [V, D], read-only."""
        return self._vectors

    @property
    def dim(self) -> int:
        """Number of dimensions D."""
        return int(self._vectors.shape[1])

    @property
    def config(self) -> TrainConfig | None:
        """The training configuration as asked (``mode="auto"``; :attr:`report` has what training
        resolved), or None for a space not trained by likewise (imported vectors, say)."""
        return self._config

    @property
    def meta(self) -> dict:
        """Free metadata."""
        return self._meta

    @property
    def fingerprint(self) -> str:
        """Identity of the space (computed once, on first use, when not given)."""
        if self._fingerprint is None:
            self._fingerprint = compute_fingerprint(self._vectors, self._vocab.keys)
        return self._fingerprint

    @property
    def nbytes(self) -> int:
        """Bytes held by the raw vectors (the :attr:`normed` cache, once built, takes as many again)."""
        return int(self._vectors.nbytes)

    @property
    def normed(self) -> np.ndarray:
        """Unit-length rows, float32 [V, D], read-only and cached; all-zero rows stay zero."""
        if self._normed is None:
            normed = normalise_rows(self._vectors)
            normed.flags.writeable = False
            self._normed = normed
        return self._normed

    @property
    def evidence_shrink(self) -> float | None:
        """How :meth:`similar` weighs evidence by default: the ``shrink`` chosen at training, or None.

        Training in basket mode chooses it on held-out baskets (``emb.meta["similar_evidence"]``); a
        space without that choice (text, sessions, small data, older models) answers by plain cosine.
        """
        chosen = (self._meta or {}).get("similar_evidence")
        if not isinstance(chosen, dict) or chosen.get("shrink") is None:
            return None
        shrink = chosen["shrink"]
        if isinstance(shrink, bool) or not isinstance(shrink, (int, float)) or not shrink >= 0:
            raise InputError(
                f"meta['similar_evidence']['shrink'] == {shrink!r} in the saved space, must be a number >= 0;"
                " the manifest was edited or damaged: train the space again"
            )
        return float(shrink)

    def _evidence_rows(self) -> np.ndarray:
        """Unit rows less their count-weighted mean (:func:`~likewise.space.search.centred_unit_rows`)."""
        if self._centred is None:
            rows = centred_unit_rows(self._vectors, self.counts)
            rows.flags.writeable = False
            self._centred = rows
        return self._centred

    def __len__(self) -> int:
        return len(self._vocab)

    def __contains__(self, item: object) -> bool:
        """True exactly for what :meth:`id_of` finds: a key (an int: the key written the same way), a unique
        display name, or a ``Row`` in ``[0, V)``."""
        if not is_item(item):
            return False
        try:
            self.id_of(item)
        except (UnknownItemError, ItemIndexError):
            return False
        return True

    def __getitem__(self, item: Item | Sequence[Item]) -> SpaceVector:
        """``emb["tent"]``, ``emb[7]``: the raw vector of an item; ``emb[["tent", "tarp"]]``: a stack of them.

        Parameters
        ----------
        item : str, int, or sequence of them
            A key or a Row (as in :meth:`vector`), or a batch of them (as in :meth:`vectors_of`).

        Returns
        -------
        SpaceVector
            float32 [D] for one item, float32 [n, D] for a batch; tagged with this space's fingerprint.

        Raises
        ------
        UnknownItemError
            An unknown key (a ``KeyError``, with close suggestions).
        ItemIndexError
            An id outside ``[0, V)`` (an ``IndexError``).
        InputError
            Anything else (a slice, a float, a dict ...).

        Notes
        -----
        The mapping protocol is consistent: ``x in emb`` is True exactly for the keys and ids ``emb[x]``
        accepts, ``len(emb)`` is V and iterating yields the keys in id order.
        """
        if is_item(item):
            return self.vector(item)  # type: ignore[arg-type]
        if is_batch(item):
            return self.vectors_of(item)  # type: ignore[arg-type]
        raise InputError(
            "emb[...] takes a str key, an int key, a Row or a sequence of them, "
            f"got {type(item).__name__} {item!r}"
        )

    def __iter__(self) -> Iterator[str]:
        """The keys in id order (as a dict iterates its keys; without this, ``__getitem__`` would be used)."""
        return iter(self._vocab.keys)

    def __repr__(self) -> str:
        return (
            f"Embeddings({len(self)} {self._vocab.what}s × {self.dim} dims, fingerprint={self.fingerprint!r})"
        )

    @property
    def index(self) -> Any:
        """The attached approximate index (:class:`likewise.index.AnnIndex`), or None for exact search."""
        return self._index

    def attach_index(self, index: Any) -> None:
        """Answer queries without ``restrict`` through an approximate index (None detaches it).

        Raises :class:`SpaceMismatchError` when the index was built on another space. Queries with
        ``restrict`` and 3CosMul analogies always use exact search.
        """
        if index is not None:
            check_index_for(self, index)
        self._index = index
        if self._searcher is not None:  # chosen again; the plain searcher (its int8 table) is kept
            self._searcher = searcher_for(self.normed, index, plain=self._searcher.plain)

    @property
    def report(self) -> TrainReport:
        """What training chose and how it went (:class:`~likewise.training.report.TrainReport`): the
        mode, ``sample``, passes, basket rule and completion model, each with its reason; the history
        and the seconds per step. Read from ``meta`` (:meth:`TrainReport.from_dict`), so a space saved by any
        version has one.
        """
        return TrainReport.from_dict(
            self.meta, self.config, basket_rule=self.basket_rule, completion=self.completion
        )

    @property
    def customers(self) -> Any:
        """The customer table (:class:`likewise.retail.CustomerTable`) saved with this space, or None."""
        return self._customers

    def attach_customers(self, table: Any) -> None:
        """Attach a customer table built in this space (None detaches it); saved with the space.

        Raises :class:`SpaceMismatchError` when the table carries another space's fingerprint, and
        :class:`InputError` when its dimension differs.
        """
        if table is not None:
            if table.fingerprint != self.fingerprint:
                raise SpaceMismatchError(self.fingerprint, str(table.fingerprint), what="customer table")
            if table.dim != self.dim:
                raise InputError(f"customer vectors have dim {table.dim}, the space has dim {self.dim}")
        self._customers = table

    @property
    def context(self) -> np.ndarray | None:
        """The output ("context") table of skip-gram, float32 [V, D] read-only, when kept; else None.

        Spaces trained from an order log keep it: ``vectors[i] @ context[j]`` scores how much more
        often ``j`` goes with ``i`` than chance (complements), and an update continues from it.
        """
        return self._context

    def attach_context(self, table: Any) -> None:
        """Keep the output table (float32 [V, D], same shape as :attr:`vectors`); saved with the space."""
        if table is not None:
            arr = np.ascontiguousarray(table, dtype=np.float32)
            if arr.shape != self._vectors.shape:
                raise InputError(f"context table has shape {arr.shape}, expected {self._vectors.shape}")
            arr = arr.view()
            arr.flags.writeable = False
            table = arr
        self._context = table  # affinity_table, cached per context table, is built again on first use

    def replace_vocab(self, vocab: Vocab) -> None:
        """Read items through ``vocab``: the same keys and counts, other names that find them (the typed
        aliases of :meth:`attach_types`).

        Raises
        ------
        InputError
            ``vocab`` is not a :class:`Vocab` with this space's keys and counts.
        """
        mine = self._vocab  # a vocabulary derived from this one shares its keys and counts: no scan
        same = isinstance(vocab, Vocab) and (vocab.keys is mine.keys or vocab.keys == mine.keys)
        if not same or not (vocab.counts is mine.counts or np.array_equal(vocab.counts, mine.counts)):
            raise InputError("replace_vocab takes a Vocab with the space's keys and counts, in id order")
        self._vocab = vocab

    def check_same_space(self, other: Any) -> None:
        """Raise :class:`SpaceMismatchError` unless ``other`` is this space."""
        got = getattr(other, "fingerprint", None)
        if got != self.fingerprint:
            raise SpaceMismatchError(self.fingerprint, str(got), what="Embeddings")

    # ---- items -----------------------------------------------------------------------------------------

    def id_of(self, item: object) -> int:
        """Row of one item: the one reading of an item given to a query (:meth:`Vocab.resolve`), then the
        display names the space carries (:attr:`names`).

        Parameters
        ----------
        item : str, int or Row
            A key; an int is the key written the same way (``43`` is the key ``"43"``); a unique display
            name (``"Tent, 2 person"``) is its item; ``likewise.Row(n)`` is row ``n`` (checked against
            the table size).

        Returns
        -------
        int

        Raises
        ------
        UnknownItemError
            An unknown key (with close matches, and why it is missing when training dropped it), or a
            display name several items carry (the message lists them).
        ItemIndexError
            A row outside ``[0, V)``.
        InputError
            Anything else (a float, a bool ...).
        """
        try:
            return self._vocab.resolve(item)
        except UnknownItemError as e:
            if isinstance(item, str):
                found = self.id_of_name(item)
                if found is not None:
                    return found
            if e.note is None and self._customers is not None and str(e.key) in self._customers:
                raise UnknownItemError(
                    e.key,
                    (),
                    what=self._vocab.what,
                    note=f"it is a customer of this space, not a {self._vocab.what}: ask for-customer, "
                    "similar-customers or lookalike (emb.customers in Python)",
                ) from None
            raise self._visible_suggestions(e) from None

    def _visible_suggestions(self, e: UnknownItemError) -> UnknownItemError:
        """``e`` without the suggestions of hidden types (``attr:`` tokens): they are never asked for."""
        types = self.types
        if types is None or not types.hidden or not e.suggestions:
            return e
        index = self._vocab.index
        shown = [s for s in e.suggestions if s not in index or types.type_of(index[s]) not in types.hidden]
        return e if shown == e.suggestions else UnknownItemError(e.key, shown, what=e.what, note=e.note)

    def ids_of(self, items: Any, on_unknown: OnUnknown = "raise") -> tuple[np.ndarray, np.ndarray]:
        """Ids of a batch of items.

        Parameters
        ----------
        items : iterable of str or int
            Keys and/or ids.
        on_unknown : {"raise", "skip"}
            ``"skip"`` leaves unknown keys out (ids out of range always raise).

        Returns
        -------
        ids : ndarray of int64
            The ids of the items kept.
        kept : ndarray of int64
            Their positions in ``items``.
        """
        if on_unknown not in ("raise", "skip"):
            raise InputError(f"on_unknown == {on_unknown!r}, must be 'raise' or 'skip'")
        ids: list[int] = []
        kept: list[int] = []
        for pos, item in enumerate(items):
            try:
                ids.append(self.id_of(item))
            except UnknownItemError:
                if on_unknown == "skip":
                    continue
                raise
            kept.append(pos)
        return np.asarray(ids, dtype=np.int64), np.asarray(kept, dtype=np.int64)

    def vector(self, item: Item, *, norm: bool = False) -> SpaceVector:
        """The vector of one item.

        Parameters
        ----------
        item : str or int
            Key or id.
        norm : bool
            Return the unit-length vector instead of the raw one.

        Returns
        -------
        SpaceVector, float32 [D]
            A copy, tagged with this space's fingerprint.
        """
        if not is_item(item):
            raise InputError(
                f"vector() takes one key (str or int) or Row, got {type(item).__name__}; "
                "use vectors_of() for a batch"
            )
        source = self.normed if norm else self._vectors
        return SpaceVector(source[self.id_of(item)].copy(), self.fingerprint)

    def vectors_of(self, items: Sequence[Item], *, norm: bool = False) -> SpaceVector:
        """Vectors of a batch of items, float32 [n, D], as a :class:`SpaceVector`."""
        if not is_batch(items):
            raise InputError(
                f"vectors_of() takes a sequence of items, got {type(items).__name__}; "
                "use vector() for one item"
            )
        ids, _ = self.ids_of(items)
        source = self.normed if norm else self._vectors
        return SpaceVector(source[ids].reshape(len(ids), self.dim), self.fingerprint)

    # ---- query plumbing --------------------------------------------------------------------------------

    def candidates(self, restrict: Restrict) -> tuple[np.ndarray, np.ndarray | None]:
        """The rows a query with ``restrict`` may return (the one reading of ``restrict``).

        Parameters
        ----------
        restrict : None, int or collection of keys
            As in :meth:`similar`; an int64 array is read as ids (what :meth:`typed_restrict` gives).

        Returns
        -------
        table : ndarray of float32, shape [n, D]
            The candidates' unit rows.
        ids : ndarray of int64, shape [n], or None
            The candidates' sorted ids, or None when ``table`` is the first ``n`` rows.
        """
        if restrict is None:
            return self.normed, None
        if is_item(restrict) and not isinstance(restrict, str):
            n = int(restrict)  # type: ignore[arg-type]
            if not 1 <= n <= len(self):
                raise InputError(f"restrict == {n}, must be between 1 and the vocabulary size {len(self)}")
            top = self._vocab.most_frequent(n)  # by count: rows appended by update or place may rank high
            return (self.normed[:n], None) if top is None else (self.normed[top], top)
        if isinstance(restrict, str) or not isinstance(restrict, Sequence | set | frozenset | np.ndarray):
            raise InputError(
                f"restrict must be None, an int (the N most frequent items) or a collection of keys, "
                f"got {type(restrict).__name__} {restrict!r}"
            )
        if isinstance(restrict, np.ndarray) and restrict.dtype.kind in "iu":
            ids = self._vocab.check_ids(restrict.reshape(-1))  # ids, as typed_restrict gives them
        else:
            ids, _ = self.ids_of(list(restrict))
        if len(ids) == 0:
            raise InputError("restrict is an empty collection: there would be nothing to return")
        cand = unique(ids)
        return self.normed[cand], cand

    def search_rows(
        self,
        queries: np.ndarray,
        k: int,
        restrict: Restrict,
        ex_rows: np.ndarray,
        ex_ids: np.ndarray,
        method: Literal["dot", "cosmul"] = "dot",
        n_negative: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The top ``k`` rows for unit query rows: the one search every cosine query of a space makes.

        Checks ``k``, reads ``restrict`` (:meth:`candidates`) and asks the space's searcher
        (:meth:`likewise.index.Searcher.search`: exact, int8 scan or the attached index, chosen once).

        Parameters
        ----------
        queries : ndarray of float32, shape [n, D] (or [n, T, D] for ``"cosmul"``)
            Unit query rows (:meth:`unit_queries`).
        k : int
            Rows per query, >= 1; clamped to the candidates left.
        restrict : None, int or collection of keys
            As in :meth:`similar`.
        ex_rows, ex_ids : ndarray of int64
            Pairs (query, id) never returned (a query's own items).
        method, n_negative
            Those of :func:`~likewise.space.search.top_k_search`.

        Returns
        -------
        ids, scores : ndarray, shape [n, k']
            int64 rows and float32 scores, best first, ties by lower id.
        """
        k = check_k(k)
        among = None if restrict is None else self.candidates(restrict)
        if self._searcher is None:  # chosen on the first query, so that loading computes no unit rows
            self._searcher = searcher_for(self.normed, self._index)
        return self._searcher.search(queries, k, ex_rows, ex_ids, among, method, n_negative)

    def answer_of(
        self, ids: np.ndarray, scores: np.ndarray, single: bool, queries: np.ndarray | None = None
    ) -> Neighbours:
        """The answer of :meth:`search_rows`: one query's 1-D :class:`Neighbours` when ``single``, else a
        batch whose ``queries`` say which input each row answers (default: every input, in order)."""
        if single:
            return self.neighbours_of(ids[0], scores[0])
        return self.neighbours_of(
            ids, scores, np.arange(len(ids), dtype=np.int64) if queries is None else queries
        )

    def neighbours_of(
        self, rows: np.ndarray, scores: np.ndarray, queries: np.ndarray | None = None
    ) -> Neighbours:
        """The answer of a query that found ``rows`` of this space: every query's one way to a result.

        Parameters
        ----------
        rows : ndarray of int, shape [k] or [n, k]
            Rows of this space, best first.
        scores : ndarray of float, same shape
        queries : ndarray of int64, optional
            For a batch: the input position each row answers.

        Returns
        -------
        Neighbours
            With the keys and display names of the rows; its ``ids`` are the rows, or in a space trained
            from a matrix the matrix's columns.
        """
        rows = np.asarray(rows, dtype=np.int64)
        keys = self._vocab.keys
        named = self.item_names
        flat = rows.reshape(-1).tolist()
        key_list = [keys[i] for i in flat]
        name_list = None if named is None else [named.names[i] for i in flat]
        ids = self.public_ids(rows)
        scores = np.asarray(scores, dtype=np.float32)
        counts = np.asarray(self.counts, dtype=np.int64)[rows]  # each answer's evidence
        if rows.ndim == 1:
            return Neighbours(key_list, ids, scores, names=name_list, counts=counts)
        width = rows.shape[1]
        chunk = [key_list[r * width : (r + 1) * width] for r in range(rows.shape[0])]
        names = (
            None
            if name_list is None
            else [name_list[r * width : (r + 1) * width] for r in range(rows.shape[0])]
        )
        return Neighbours(chunk, ids, scores, queries, names=names, counts=counts)

    def unit_queries(self, v: Any) -> tuple[np.ndarray, bool]:
        """Query vectors, checked, as unit rows: ``(float32 [n, D], single)``, single for a 1-D ``v``.

        Raises :class:`SpaceMismatchError` for a :class:`SpaceVector` of another space and
        :class:`InputError` for a wrong length or dtype, NaN, infinities or an all-zero vector.
        """
        if isinstance(v, SpaceVector) and v.fingerprint is not None and v.fingerprint != self.fingerprint:
            raise SpaceMismatchError(self.fingerprint, v.fingerprint, what="vector")
        arr = np.asarray(v)
        if arr.dtype.kind not in "fiu":
            raise InputError(f"query vector must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim not in (1, 2):
            raise InputError(f"query vector must be 1-D [D] or 2-D [n, D], got shape {arr.shape}")
        single = arr.ndim == 1
        arr = np.array(arr.reshape(1, -1) if single else arr, dtype=np.float32)  # always a copy
        if arr.shape[1] != self.dim:
            raise InputError(f"query vector has length {arr.shape[1]}, expected {self.dim} (the space's dim)")
        if not np.isfinite(arr).all():
            raise InputError("query vector contains NaN or infinite values")
        zero = ~np.any(arr, axis=1)
        if zero.any():  # cosine with a zero vector is undefined: any "neighbours" would be arbitrary
            where = "" if single else f" (row {int(np.argmax(zero))})"
            raise InputError(f"query vector{where} is all zeros: its cosine similarity is undefined")
        return normalise_rows(arr), single

    # ---- queries ---------------------------------------------------------------------------------------

    def similar(
        self,
        items: Item | Sequence[Item],
        k: int = 10,
        *,
        restrict: Restrict = None,
        on_unknown: OnUnknown = "raise",
        types: Types = None,
        evidence: bool | float = True,
    ) -> Neighbours:
        """The ``k`` items most similar to each query item, the query itself excluded.

        By plain cosine, or, in a space trained on baskets, by cosine weighed by evidence: the vectors
        less their count-weighted mean (what they share with everything popular), and each candidate's
        cosine shrunk by ``count / (count + shrink)``, so that a product seen in two baskets does not
        crowd out one seen in thousands at nearly the same cosine. ``shrink`` is chosen at training on
        held-out baskets (:attr:`evidence_shrink`); ``emb.counts[ids]`` is each answer's evidence.

        Parameters
        ----------
        items : str, int, or sequence of them
            One item (1-D result) or a batch (2-D result, one row per query).
        k : int
            Neighbours per query, >= 1. Clamped to the number of candidates available (for a batch, the
            smallest number available to any query, so that the result stays rectangular).
        restrict : None, int or collection of keys
            Only return items among the ``N`` most frequent (an int, ``1 <= N <= V``; ids ``< N``) or among
            the given keys/ids.
        on_unknown : {"raise", "skip"}
            With ``"skip"`` unknown keys in a batch are dropped; ``Neighbours.queries`` then says which
            input each row answers. A single unknown item always raises. Out-of-range ids always raise.
        types : str or list of str, optional
            In a typed space, return only items of these types (``["campaign"]``); default: every type
            but hidden ones (side information). See :meth:`typed_restrict`.
        evidence : bool or float
            ``True`` (default): weigh evidence as the space chose at training (plain cosine where it chose
            nothing); ``False``: plain cosine; a number >= 0: weigh evidence with that ``shrink``.

        Returns
        -------
        Neighbours
            ids/scores of shape [k] for one item, [n, k] for a batch. Scores are cosines, shrunk by
            evidence when it is weighed.
        """
        if is_item(items):
            ids, kept = np.array([self.id_of(items)], dtype=np.int64), None
            single = True
        elif is_batch(items):
            ids, kept = self.ids_of(items, on_unknown)
            single = False
        else:
            raise InputError(f"items must be a key, a Row or a sequence of them, got {type(items).__name__}")
        restrict = self.typed_restrict(restrict, types)
        shrink = self._shrink_of(evidence)
        if shrink is None:
            out_ids, scores = self.search_rows(self.normed[ids], k, restrict, np.arange(len(ids)), ids)
            return self.answer_of(out_ids, scores, single, kept)
        # exact: every candidate's score is reweighed, so no index or int8 scan can pre-select them
        rows = self._evidence_rows()
        weights = evidence_weights(self.counts, shrink)
        table, cand = rows, None
        if restrict is not None:
            prefix, cand = self.candidates(restrict)
            cand = np.arange(len(prefix), dtype=np.int64) if cand is None else cand  # the first rows
            table, weights = rows[cand], weights[cand]
        ex_rows = np.arange(len(ids), dtype=np.int64)
        ex_ids = ids
        if cand is not None:
            pos = np.minimum(np.searchsorted(cand, ids), len(cand) - 1)
            inside = cand[pos] == ids
            ex_rows, ex_ids = ex_rows[inside], pos[inside]
        out_ids, scores = top_k_search(table, rows[ids], check_k(k), ex_rows, ex_ids, col_weights=weights)
        if cand is not None:
            out_ids = cand[out_ids]
        return self.answer_of(out_ids, scores, single, kept)

    def _shrink_of(self, evidence: bool | float) -> float | None:
        """The ``shrink`` of :meth:`similar`'s ``evidence`` argument; None for plain cosine."""
        if evidence is True:
            return self.evidence_shrink
        if evidence is False:
            return None
        if isinstance(evidence, (int, float)) and evidence >= 0:
            return float(evidence)
        raise InputError(f"evidence == {evidence!r}, must be True, False or a shrink >= 0 (in baskets)")

    def similar_to_vector(
        self,
        v: Any,
        k: int = 10,
        *,
        restrict: Restrict = None,
        exclude: Item | Sequence[Item] = (),
        types: Types = None,
    ) -> Neighbours:
        """The ``k`` items most cosine-similar to a vector.

        Parameters
        ----------
        v : array-like, shape [D] or [n, D]
            Query vector(s); a :class:`SpaceVector` from another space raises :class:`SpaceMismatchError`.
        k : int
            Neighbours per query, >= 1; clamped to the number of candidates available.
        restrict : None, int or collection of keys
            As in :meth:`similar`.
        exclude : item or sequence of items
            Items never returned (for every query).
        types : str or list of str, optional
            As in :meth:`similar`.

        Returns
        -------
        Neighbours
            1-D for a 1-D ``v``, 2-D for a 2-D ``v``.
        """
        queries, single = self.unit_queries(v)
        ex = self.ids_of([exclude] if is_item(exclude) else list(exclude))[0]
        n = len(queries)
        restrict = self.typed_restrict(restrict, types)
        out_ids, scores = self.search_rows(
            queries, k, restrict, np.repeat(np.arange(n), len(ex)), np.tile(ex, n)
        )
        return self.answer_of(out_ids, scores, single)


def _as_config(config: Any) -> TrainConfig | None:
    """A space's config: a TrainConfig as given, a dict (saved, or written by hand) read by
    :meth:`TrainConfig.from_dict`, None (or an empty dict) for none."""
    if config is None or isinstance(config, TrainConfig):
        return config
    if not isinstance(config, dict):
        raise InputError(f"config must be a TrainConfig or a dict, got {type(config).__name__}")
    return TrainConfig.from_dict(jsonable(config, "config")) if config else None
