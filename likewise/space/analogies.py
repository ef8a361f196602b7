"""The word-vector queries of a space: analogies, the odd one out, pairwise similarity, gensim's
``most_similar``.

:class:`WordQueries` is a mixin of :class:`~likewise.space.embeddings.Embeddings` (its methods are
``Embeddings`` methods, documented there); it lives apart so that the class's core -- construction,
lookup, neighbours and recommendations -- reads in one file. It relies on the host's ``normed``,
``ids_of``, ``id_of``, ``similar_to_vector`` and the public plumbing every query shares
(``search_rows``, ``answer_of``, ``unit_queries``): what :class:`~likewise.space.host.SpaceHost` lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from .._check import Row, check_k, is_batch, is_item
from ..data.vocab import OnUnknown
from ..errors import InputError
from .host import Item, Restrict
from .results import Neighbours
from .search import normalise_rows

__all__ = ["AnalogyMethod", "WordQueries", "query_terms"]

#: How an analogy combines its three items (3CosAdd or 3CosMul): declared once for every front end.
AnalogyMethod = Literal["add", "mul"]


class WordQueries:
    """Analogy, ``doesnt_match``, ``similarity`` and ``most_similar`` (mixed into ``Embeddings``)."""

    def analogy(
        self,
        a: Item | Sequence[Item],
        b: Item | Sequence[Item],
        c: Item | Sequence[Item],
        k: int = 10,
        *,
        method: AnalogyMethod = "add",
        restrict: Restrict = None,
    ) -> Neighbours:
        """Answer "``a`` is to ``b`` as ``c`` is to ?"; ``a``, ``b`` and ``c`` themselves are excluded.

        Parameters
        ----------
        a, b, c : item, or sequences of items of equal length
            One analogy (1-D result) or a batch (2-D result).
        k : int
            Answers per analogy, >= 1; clamped to the number of candidates available.
        method : {"add", "mul"}
            ``"add"`` (3CosAdd): score ``cos(x, b̂ - â + ĉ)`` on unit vectors. ``"mul"`` (3CosMul, Levy &
            Goldberg 2014, as gensim's ``most_similar_cosmul``): with ``pos(y) = (1 + cos(x, y)) / 2``, score
            ``pos(b) * pos(c) / (pos(a) + 1e-6)``.
        restrict : None, int or collection of keys
            As in :meth:`similar`.

        Returns
        -------
        Neighbours
        """
        if method not in ("add", "mul"):
            raise InputError(f"method == {method!r}, must be 'add' or 'mul'")
        if is_item(a) and is_item(b) and is_item(c):
            single, abc = True, [[a], [b], [c]]
        elif is_batch(a) and is_batch(b) and is_batch(c):
            if not len(a) == len(b) == len(c):  # type: ignore[arg-type]
                raise InputError(f"a, b and c must have equal lengths, got {len(a)}, {len(b)}, {len(c)}")  # type: ignore[arg-type]
            single, abc = False, [a, b, c]
        else:
            raise InputError("a, b and c must all be single items or all be sequences of items")
        ia, ib, ic = (self.ids_of(x)[0] for x in abc)
        n = len(ia)
        normed = self.normed
        if method == "add":
            queries = normalise_rows(normed[ib] - normed[ia] + normed[ic])
        else:
            queries = np.stack([normed[ia], normed[ib], normed[ic]], axis=1)
        rows = np.tile(np.arange(n), 3)
        out_ids, scores = self.search_rows(
            queries,
            k,
            restrict,
            rows,
            np.concatenate([ia, ib, ic]),
            method="dot" if method == "add" else "cosmul",
        )
        return self.answer_of(out_ids, scores, single)

    def doesnt_match(self, items: Sequence[Item], *, on_unknown: OnUnknown = "raise") -> str:
        """The item least like the others: lowest cosine to the mean of the unit vectors (gensim semantics).

        Parameters
        ----------
        items : sequence of items
            At least two (known) items.
        on_unknown : {"raise", "skip"}
            ``"skip"`` drops unknown keys first.

        Returns
        -------
        str
            Its key; ties go to the lower id.
        """
        if not is_batch(items):
            raise InputError(f"items must be a sequence of at least two items, got {type(items).__name__}")
        ids, _ = self.ids_of(items, on_unknown)
        if len(ids) < 2:
            raise InputError(f"doesnt_match needs at least two known {self.vocab.what}s, got {len(ids)}")
        vecs = self.normed[ids]
        mean = normalise_rows(vecs.mean(axis=0, keepdims=True))[0]
        dists = vecs @ mean
        worst = np.lexsort((ids, dists))[0]
        return self.keys[int(ids[worst])]

    def similarity(self, a: Item | Sequence[Item], b: Item | Sequence[Item]) -> Any:
        """Cosine of two items (a float), or of two equal-length sequences pairwise (float32 [n])."""
        if is_item(a) and is_item(b):
            normed = self.normed
            return float(normed[self.id_of(a)] @ normed[self.id_of(b)])
        if is_batch(a) and is_batch(b):
            if len(a) != len(b):  # type: ignore[arg-type]
                raise InputError(f"a and b must have equal lengths, got {len(a)} and {len(b)}")  # type: ignore[arg-type]
            va, vb = self.normed[self.ids_of(a)[0]], self.normed[self.ids_of(b)[0]]
            return np.einsum("ij,ij->i", va, vb).astype(np.float32)
        raise InputError("a and b must both be single items or both be sequences of items")

    def most_similar(
        self,
        positive: Any = None,
        negative: Any = None,
        topn: int | None = 10,
        clip_start: int = 0,
        clip_end: int | None = None,
        *,
        restrict: Restrict = None,
        restrict_vocab: Restrict = None,
        indexer: Any = None,
    ) -> Any:
        """gensim's ``KeyedVectors.most_similar``: the items nearest to ``mean(positive) - mean(negative)``.

        The query is the weighted mean of the terms' unit vectors (weight +1 for each positive term and
        -1 for each negative one), normalised; items are ranked by cosine to it and the items named in
        ``positive`` and ``negative`` are never returned. ``most_similar(positive=["king", "woman"],
        negative=["man"])`` is :meth:`analogy` ``("man", "king", "woman")``; ``most_similar("tent")`` is
        :meth:`similar` ``("tent")``.

        Parameters
        ----------
        positive, negative : term, sequence of terms, or None
            A term is a str key or an int id, a ``(key, weight)`` pair (the weight replaces the default
            +1 or -1, in either list, as in gensim), or a raw 1-D vector of length D (added as given, not
            normalised, and not excluded from the result, as in gensim; a :class:`SpaceVector` of another
            space raises :class:`SpaceMismatchError`). A single key, id or 1-D vector needs no list.
        topn : int or None
            Results wanted, >= 1; fewer when fewer candidates are left. As gensim: ``None`` returns the
            cosine of every item in ``[clip_start, clip_end)`` to the query, a float32 array in id order
            (the named items included), and an int < 1 an empty list.
        clip_start, clip_end : int
            gensim's id range of the candidates (``restrict_vocab=N`` is ``clip_end=N``); default all.
        restrict : None, int or collection of keys
            As in :meth:`similar`; an int ``N`` is gensim's ``restrict_vocab=N``.
        restrict_vocab : None, int or collection of keys
            gensim's name for ``restrict``, accepted so gensim code runs unchanged; give one of the two.
        indexer
            gensim's approximate indexers are not taken: attach a likewise index (``emb.attach_index``).

        Returns
        -------
        list of (str, float)
            ``(key, cosine)`` pairs, best first, ties by lower id (an array for ``topn=None``).

        Raises
        ------
        UnknownItemError
            An unknown key.
        InputError
            No term at all, or a malformed term or ``topn``.
        """
        if restrict_vocab is not None:
            if restrict is not None:
                raise InputError(
                    f"restrict={restrict!r} and restrict_vocab={restrict_vocab!r}: give one "
                    "(restrict_vocab is gensim's name for restrict)"
                )
            restrict = restrict_vocab
        if indexer is not None:
            raise InputError(
                "indexer= is gensim's approximate index: build one with likewise.index and attach it "
                "with emb.attach_index(index); most_similar then uses it"
            )
        if isinstance(topn, int | np.integer) and not isinstance(topn, bool) and topn < 1:
            return []  # gensim's answer to topn=0
        clip = clip_start != 0 or clip_end is not None
        if clip:
            if restrict is not None:
                raise InputError("give clip_start/clip_end or restrict/restrict_vocab, not both")
            start, end = int(clip_start), len(self) if clip_end is None else int(clip_end)
            if not 0 <= start < end <= len(self):
                raise InputError(
                    f"clip_start={clip_start!r}, clip_end={clip_end!r}: need 0 <= clip_start < clip_end <= "
                    f"{len(self)} (the number of items)"
                )
            restrict = np.arange(start, end, dtype=np.int64)
        terms = [(t, 1.0) for t in query_terms(positive, "positive")]
        terms += [(t, -1.0) for t in query_terms(negative, "negative")]
        if not terms:
            raise InputError("most_similar needs at least one positive or negative term")
        if topn is not None:
            topn = check_k(topn)
        query = np.zeros(self.dim, dtype=np.float64)
        total = 0.0
        exclude: list[int] = []
        normed = self.normed
        for term, default in terms:
            weight = default
            if isinstance(term, tuple):
                if len(term) != 2 or not isinstance(term[1], int | float | np.integer | np.floating):
                    raise InputError(f"a weighted term must be a (key, weight) pair, got {term!r}")
                term, weight = term[0], float(term[1])
            if is_item(term):
                i = self.id_of(term)
                exclude.append(i)
                query += weight * normed[i]
            elif isinstance(term, np.ndarray) and term.ndim == 1:
                self.unit_queries(term)  # validates the space, dtype, length and finiteness
                query += weight * np.asarray(term, dtype=np.float64)
            else:
                raise InputError(
                    f"a most_similar term must be a str key, an int id, a (key, weight) pair or a 1-D "
                    f"vector, got {type(term).__name__} {term!r}"
                )
            total += abs(weight)
        if total > 0:
            query /= total
        if topn is None:  # gensim: the cosine of every candidate, in id order
            return self._all_cosines(query, restrict)
        found = self.similar_to_vector(query, topn, restrict=restrict, exclude=[Row(i) for i in exclude])
        return found.pairs()

    def _all_cosines(self, query: np.ndarray, restrict: Restrict) -> np.ndarray:
        """``most_similar(topn=None)``: cosines of the ids ``[0, N)`` (``restrict=N``) or of a range."""
        if restrict is None:
            table = self.normed
        elif isinstance(restrict, int | np.integer) and not isinstance(restrict, bool):
            table = self.normed[: int(restrict)]
        elif isinstance(restrict, np.ndarray) and restrict.dtype.kind in "iu":
            table = self.normed[restrict]
        else:
            raise InputError("topn=None answers for every item, or the N most frequent (restrict_vocab=N)")
        unit, _ = self.unit_queries(query)
        return np.asarray(table @ unit[0], dtype=np.float32)


def query_terms(value: Any, name: str) -> list[Any]:
    """``positive`` or ``negative`` of ``most_similar`` as a list of terms (gensim's ``_ensure_list``).

    Shared by :meth:`WordQueries.most_similar` and
    :meth:`~likewise.space.gensim_names.GensimNames.most_similar_cosmul`: a term is a key, an id, a
    ``(key, weight)`` pair or a 1-D vector; a 2-D array is a list of vectors. ``name`` names the argument
    in the error.
    """
    if value is None:
        return []
    if is_item(value) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return [value]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return list(value)
    if is_batch(value):
        return list(value)
    raise InputError(
        f"{name} must be a term or a sequence of terms (keys, ids, (key, weight) pairs or vectors), "
        f"got {type(value).__name__} {value!r}"
    )
