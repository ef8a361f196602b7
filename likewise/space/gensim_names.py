"""gensim's ``KeyedVectors`` names on a space, with gensim's meaning and gensim's answers.

:class:`GensimNames` is a mixin of :class:`~likewise.space.embeddings.Embeddings` (its methods are
``Embeddings`` methods). Code written for gensim (``kv.key_to_index``, ``kv.distance(a, b)``,
``kv.most_similar_cosmul(...)``, ``kv.save_word2vec_format(...)``) runs on a space as it is; each name
is a thin translation onto the space's own queries (``similar``, ``similar_to_vector``, ``similarity``,
the public plumbing every query shares: ``search_rows``, ``answer_of``, ``unit_queries``) and onto the
one word2vec writer, so it answers what the likewise query answers. ``tests/test_gensim_names.py``
compares every name with gensim's own ``KeyedVectors`` on the same vectors.

Where gensim is silent or lenient, likewise's rules hold: an unknown key raises
:class:`~likewise.errors.UnknownItemError` (a ``KeyError``) instead of being skipped, and int ids are
accepted wherever a key is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from .._check import check_k, is_batch, is_item
from ..data._word2vec import write_word2vec
from ..errors import InputError
from .analogies import query_terms
from .host import Item, Restrict
from .results import SpaceVector
from .search import normalise_rows, row_norms

__all__ = ["GENSIM_POINTERS", "GensimNames"]


#: gensim names a space does not answer, with the one line that says what to use instead. Reaching for
#: one raises ``AttributeError`` with that line (``hasattr`` stays False, as for any missing name).
GENSIM_POINTERS: dict[str, str] = {
    "evaluate_word_analogies": (
        "use likewise.evaluate.evaluate_analogies(emb, path) (gensim's counts and accuracy; a dict) or "
        "`likewise eval MODEL --analogies PATH`"
    ),
    "evaluate_word_pairs": (
        "use likewise.evaluate.evaluate_pairs(emb, path) (gensim's Pearson and Spearman; a dict) or "
        "`likewise eval MODEL --pairs PATH`"
    ),
    "add_vectors": (
        "a space is immutable (its fingerprint names its vectors): add items by their baskets with "
        "likewise.retail.update.update(model, new_log) (`likewise update`), or build a new "
        "likewise.Embeddings(vectors, likewise.Vocab(keys))"
    ),
    "add_vector": "a space is immutable: see add_vectors (likewise.retail.update.update)",
    "init_sims": "not needed: emb.normed holds the unit vectors (gensim 4 dropped init_sims too)",
    "vectors_for_all": "use emb.vectors_of(keys) (an unknown key raises, with suggestions)",
    "get_mean_vector": "use emb.vectors_of(keys, norm=True).mean(axis=0)",
    "build_vocab": "likewise.train(data, ...) reads the vocabulary and trains in one call",
    "load_word2vec_format": (
        "use likewise.data.formats.read_word2vec(path) or `likewise import PATH -o SPACE`"
    ),
}


class GensimNames:
    """``key_to_index``, ``index_to_key``, ``vector_size``, ``norms``, ``get_vector``,
    ``get_normed_vectors``, ``similar_by_word`` / ``similar_by_key``, ``similar_by_vector``,
    ``distance``, ``distances``, ``n_similarity``, ``most_similar_cosmul``, ``rank``,
    ``closer_than`` / ``words_closer_than``, ``most_similar_to_given``, ``get_index``,
    ``has_index_for``, ``fill_norms``, ``wv`` and ``save_word2vec_format`` (mixed into
    ``Embeddings``); the names of :data:`GENSIM_POINTERS` say what to use instead."""

    _norms: np.ndarray | None = None  # cache of norms

    def __getattr__(self, name: str) -> Any:
        """Only called for a missing attribute: gensim's names that have a likewise counterpart say which."""
        if name in GENSIM_POINTERS:
            raise AttributeError(f"{name} is gensim's name: {GENSIM_POINTERS[name]}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def wv(self) -> Any:
        """gensim's ``model.wv``: the space itself (it is the ``KeyedVectors``), so ``emb.wv.most_similar``
        runs as written."""
        return self

    def get_index(self, key: Any, default: int | None = None) -> int:
        """gensim's ``get_index``: the id of a key, or an int id in range as it is, else ``default``.

        Raises ``KeyError`` (an :class:`~likewise.errors.UnknownItemError`, with suggestions) when the key
        is missing and no ``default`` is given.
        """
        if isinstance(key, str) and key in self.vocab.index:  # type: ignore[attr-defined]
            return int(self.vocab.index[key])  # type: ignore[attr-defined]
        if is_item(key) and not isinstance(key, str) and 0 <= int(key) < len(self):  # type: ignore[arg-type]
            return int(key)
        if default is not None:
            return default
        return self.id_of(key)  # type: ignore[attr-defined]

    def has_index_for(self, key: Any) -> bool:
        """gensim's ``has_index_for``: True when :meth:`get_index` finds the key (or the id is in range)."""
        return self.get_index(key, -1) >= 0

    def fill_norms(self, force: bool = False) -> None:
        """gensim's ``fill_norms``: compute :attr:`norms` now (they are otherwise computed on first use)."""
        if force:
            self._norms = None
        _ = self.norms

    def closer_than(self, key1: Item, key2: Item) -> list[str]:
        """gensim's ``closer_than``: the keys closer to ``key1`` than ``key2`` is (cosine), in id order."""
        dist = self.distances(key1)
        i, j = self.id_of(key1), self.id_of(key2)  # type: ignore[attr-defined]
        return [self.keys[x] for x in np.flatnonzero(dist < dist[j]).tolist() if x != i]  # type: ignore[attr-defined]

    words_closer_than = closer_than  # gensim 3's name

    def rank(self, key1: Item, key2: Item) -> int:
        """gensim's ``rank``: the rank of ``key2`` among ``key1``'s neighbours, 1 for the nearest."""
        return len(self.closer_than(key1, key2)) + 1

    def most_similar_to_given(self, key1: Item, keys_list: Sequence[Item]) -> Item:
        """gensim's ``most_similar_to_given``: the member of ``keys_list`` most cosine-similar to ``key1``."""
        if not is_batch(keys_list) or len(keys_list) == 0:
            raise InputError(f"keys_list must be a non-empty sequence of keys or ids, got {keys_list!r}")
        sims = [self.similarity(key1, k) for k in keys_list]  # type: ignore[attr-defined]
        return keys_list[int(np.argmax(sims))]

    # ---- the table -------------------------------------------------------------------------------------

    @property
    def key_to_index(self) -> Mapping[str, int]:
        """Key -> row id, as gensim's ``key_to_index``: a read-only view of the vocabulary's own dict.

        Read-only (a ``types.MappingProxyType``) because the vocabulary is shared and immutable; reading,
        ``in``, ``len``, iterating and comparing with a dict work as on gensim's dict, and
        ``dict(emb.key_to_index)`` makes a copy of your own. Holds the keys only (not the bare names a
        typed space also resolves).
        """
        return MappingProxyType(self.vocab.index)

    @property
    def index_to_key(self) -> list[str]:
        """The keys in id order, as gensim's ``index_to_key`` (the same list as :attr:`keys`)."""
        return self.keys

    @property
    def vector_size(self) -> int:
        """The number of dimensions, as gensim's ``vector_size`` (the same as :attr:`dim`)."""
        return self.dim

    @property
    def norms(self) -> np.ndarray:
        """The L2 norm of each raw vector, float32 [V] read-only, as gensim's ``norms``.

        gensim fills its ``norms`` on the first similarity query (``None`` before); here they are
        computed (in float64) on first use and kept.
        """
        if self._norms is None:
            norms = row_norms(self.vectors).astype(np.float32)
            norms.flags.writeable = False
            self._norms = norms
        return self._norms

    def get_vector(self, key: Item, norm: bool = False) -> SpaceVector:
        """gensim's ``get_vector``: the vector of one key or id (:meth:`vector`), unit length if ``norm``.

        Returns
        -------
        SpaceVector, float32 [D]
            A copy, tagged with this space's fingerprint.
        """
        return self.vector(key, norm=norm)

    def get_normed_vectors(self) -> np.ndarray:
        """gensim's ``get_normed_vectors``: every row at unit length, float32 [V, D] (:attr:`normed`)."""
        return self.normed

    # ---- neighbours ------------------------------------------------------------------------------------

    def similar_by_word(
        self, word: Item, topn: int = 10, restrict_vocab: Restrict = None
    ) -> list[tuple[str, float]]:
        """gensim's ``similar_by_word``: the ``topn`` items most cosine-similar to one item, itself excluded.

        Parameters
        ----------
        word : str or int
            A key or an id.
        topn : int
            Results wanted, >= 1.
        restrict_vocab : None, int or collection of keys
            An int ``N`` searches only the ``N`` most frequent items (gensim's meaning); a collection
            of keys or ids is the ``restrict`` of :meth:`similar`.

        Returns
        -------
        list of (str, float)
            ``(key, cosine)`` pairs, best first: :meth:`similar` as a list.
        """
        if not is_item(word):
            raise InputError(
                f"similar_by_word takes one str key or int id, got {type(word).__name__}; "
                "use most_similar(positive=[...]) for several"
            )
        return self.similar(word, topn, restrict=restrict_vocab, evidence=False).pairs()  # gensim's cosine

    similar_by_key = similar_by_word  # gensim 4's name; similar_by_word is its compatibility alias

    def similar_by_vector(
        self, vector: Any, topn: int = 10, restrict_vocab: Restrict = None
    ) -> list[tuple[str, float]]:
        """gensim's ``similar_by_vector``: the ``topn`` items most cosine-similar to a vector.

        Parameters
        ----------
        vector : array-like of float, shape [D]
            One vector; a :class:`SpaceVector` of another space raises :class:`SpaceMismatchError`.
            No item is excluded (a vector of the space finds its own item first).
        topn : int
            Results wanted, >= 1.
        restrict_vocab : None, int or collection of keys
            As in :meth:`similar_by_word`.

        Returns
        -------
        list of (str, float)
            :meth:`similar_to_vector` as a list of ``(key, cosine)`` pairs.
        """
        v = vector if isinstance(vector, np.ndarray) else np.asarray(vector)  # keeps a SpaceVector's tag
        if v.ndim != 1:
            raise InputError(
                f"similar_by_vector takes one vector of shape [{self.dim}], got shape {v.shape}; "
                "use similar_to_vector for a batch"
            )
        return self.similar_to_vector(v, topn, restrict=restrict_vocab).pairs()

    def most_similar_cosmul(
        self, positive: Any = None, negative: Any = None, topn: int = 10, restrict_vocab: Restrict = None
    ) -> list[tuple[str, float]]:
        """gensim's ``most_similar_cosmul``: 3CosMul (Levy & Goldberg 2014), for any number of terms.

        With ``pos(x, y) = (1 + cos(x, y)) / 2`` (cosines shifted to [0, 1], the paper's footnote 7), an
        item ``x`` scores ``prod over positive y of pos(x, y) / (prod over negative y of pos(x, y) +
        1e-6)``. ``most_similar_cosmul(["king", "woman"], ["man"])`` is :meth:`analogy` ``("man",
        "king", "woman", method="mul")``; with one positive term the ranking is :meth:`similar`'s. The
        items named in the terms are never returned.

        Parameters
        ----------
        positive, negative : term, sequence of terms, or None
            A term is a str key or an int id, or a raw 1-D vector of length D (used as given, as gensim
            does: ``(1 + x̂ · v) / 2``, not normalised, and not excluded). A single term needs no list.
            There are no ``(key, weight)`` pairs (gensim's 3CosMul has none either).
        topn : int
            Results wanted, >= 1; fewer when fewer candidates are left.
        restrict_vocab : None, int or collection of keys
            As in :meth:`similar_by_word`. (gensim 4.4 accepts ``restrict_vocab`` here but searches the
            whole vocabulary; likewise honours it.)

        Returns
        -------
        list of (str, float)
            ``(key, score)`` pairs, best first, ties by lower id.

        Raises
        ------
        UnknownItemError
            An unknown key.
        InputError
            No positive term, a malformed term or ``topn``.
        """
        pos = query_terms(positive, "positive")
        neg = query_terms(negative, "negative")
        if not pos:
            raise InputError("most_similar_cosmul needs at least one positive term")
        topn = check_k(topn)
        rows: list[np.ndarray] = []
        exclude: list[int] = []
        for term in neg + pos:  # negatives first: top_k_search's layout for 3CosMul
            if is_item(term):
                i = self.id_of(term)
                exclude.append(i)
                rows.append(self.normed[i])
            elif isinstance(term, np.ndarray) and term.ndim == 1:
                self.unit_queries(term)  # validates the space, dtype, length and finiteness
                rows.append(np.asarray(term, dtype=np.float32))
            else:
                raise InputError(
                    f"a most_similar_cosmul term must be a str key, an int id or a 1-D vector, "
                    f"got {type(term).__name__} {term!r}"
                )
        queries = np.stack(rows)[None]  # one query of T terms: [1, T, D]
        ex_ids = np.asarray(exclude, dtype=np.int64)
        found = self.search_rows(
            queries,
            topn,
            restrict_vocab,
            np.zeros(len(ex_ids), dtype=np.int64),
            ex_ids,
            method="cosmul",
            n_negative=len(neg),
        )
        return self.answer_of(*found, single=True).pairs()

    # ---- pairs -----------------------------------------------------------------------------------------

    def distance(self, w1: Item, w2: Item) -> float:
        """gensim's ``distance``: the cosine distance ``1 - similarity(w1, w2)`` of two items, a float."""
        if not (is_item(w1) and is_item(w2)):
            raise InputError(
                f"distance takes two str keys or int ids, got {type(w1).__name__} and {type(w2).__name__}; "
                "use distances() for several"
            )
        return 1.0 - self.similarity(w1, w2)

    def distances(self, word_or_vector: Any, other_words: Sequence[Item] | None = ()) -> np.ndarray:
        """gensim's ``distances``: cosine distances ``1 - cos`` from one item or vector to other items.

        Parameters
        ----------
        word_or_vector : str, int or array-like of float, shape [D]
            A key, an id or a vector (a :class:`SpaceVector` of another space raises
            :class:`SpaceMismatchError`).
        other_words : sequence of items, optional
            The items to measure to, in the order wanted; empty or None (default): every item, in id
            order, the query item included (at distance about 0).

        Returns
        -------
        ndarray of float32, shape [len(other_words)] or [V]
        """
        if is_item(word_or_vector):
            query = self.normed[self.id_of(word_or_vector)]
        else:
            arr = word_or_vector if isinstance(word_or_vector, np.ndarray) else np.asarray(word_or_vector)
            if arr.ndim != 1:
                raise InputError(
                    f"distances takes one item or one vector of shape [{self.dim}], got shape {arr.shape}"
                )
            query = self.unit_queries(arr)[0][0]
        if other_words is None or (is_batch(other_words) and len(other_words) == 0):
            table = self.normed
        elif is_batch(other_words):
            table = self.normed[self.ids_of(other_words)[0]]
        else:
            raise InputError(
                f"other_words must be a sequence of keys or ids, got {type(other_words).__name__} "
                f"{other_words!r}"
            )
        return np.asarray(1.0 - table @ query, dtype=np.float32)

    def n_similarity(self, ws1: Sequence[Item], ws2: Sequence[Item]) -> float:
        """gensim's ``n_similarity``: the cosine of the means of two sets of items' raw vectors.

        As gensim, the means are of the raw (not unit-length) vectors. Unlike gensim, which skips
        unknown keys, an unknown key raises :class:`UnknownItemError`.

        Parameters
        ----------
        ws1, ws2 : sequence of items
            Non-empty.

        Returns
        -------
        float
        """
        means = []
        for name, ws in (("ws1", ws1), ("ws2", ws2)):
            if not is_batch(ws) or len(ws) == 0:
                raise InputError(f"{name} must be a non-empty sequence of keys or ids, got {ws!r}")
            means.append(np.asarray(self.vectors[self.ids_of(ws)[0]]).mean(axis=0, dtype=np.float64))
        a, b = normalise_rows(np.stack(means))
        return float(a @ b)

    # ---- files -----------------------------------------------------------------------------------------

    def save_word2vec_format(
        self, fname: str | os.PathLike, binary: bool = False, *, replace_space: str | None = None
    ) -> None:
        """gensim's ``save_word2vec_format``: write the vectors as a word2vec text or binary file.

        The file is byte-identical to the one gensim writes for the same keys, vectors and counts (rows
        by descending count): it is :func:`likewise.data.formats.write_word2vec`. gensim's other options
        (``fvocab``, ``prefix``, ``append``, ``write_header``, ...) are not offered.

        Parameters
        ----------
        fname : str or path-like
            The file; written to a temporary file beside it, then renamed.
        binary : bool
            Binary (float32 little-endian) instead of text.
        replace_space : str, optional
            Replace each whitespace character inside a key with this; default: refuse such keys.
        """
        write_word2vec(self, fname, binary=binary, replace_space=replace_space, overwrite=True)
