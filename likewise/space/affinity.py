"""Basket queries of a space: :meth:`recommend` and skip-gram's affinity, the one scoring path.

:class:`BasketQueries` is a mixin of :class:`~likewise.space.embeddings.Embeddings` (its methods are
``Embeddings`` methods). The Python API, the CLI (``likewise recommend``, the retail commands) and the
HTTP service all rank basket completions here: :meth:`affinity_top_k` for a basket of items (a mixture,
:func:`likewise.space.search.basket_affinity_top_k`), :attr:`affinity_table` for a vector query such as a
customer's mean. It relies on the host's ``normed``, ``vectors``, ``context``, ``counts``, ``config``,
``ids_of`` and the public plumbing every query shares (``candidates``, ``search_rows``, ``answer_of``):
what :class:`~likewise.space.host.SpaceHost` lists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from .._arrays import unique
from .._check import check_k, is_batch, is_matrix, is_sparse
from ..data.vocab import OnUnknown
from ..errors import InputError, ItemIndexError, NotFittedError
from .host import Item, Restrict, Types
from .results import Neighbours
from .search import BASKET_RULES, BasketRule, affinity_bias, basket_affinity_top_k, normalise_rows

if TYPE_CHECKING:
    from .itemitem import ItemItem

__all__ = ["IMPLICIT_OPTIONS", "SCORINGS", "BasketQueries", "Scoring"]

#: How ``recommend`` scores a basket's completions: declared once, read by the CLI, HTTP and the docs.
Scoring = Literal["auto", "itemitem", "affinity", "mixture", "product", "cosine"]
SCORINGS: tuple[str, ...] = get_args(Scoring)
#: The keywords of implicit's ``recommend(userid, user_items, N=...)`` that ``recommend`` also takes.
IMPLICIT_OPTIONS = ("N", "filter_already_liked_items", "filter_items", "recalculate_user", "items")


class BasketQueries:
    """``recommend``, ``affinity_top_k``, ``basket_rule``, ``affinity_bias``, ``affinity_table`` (mixed into
    Embeddings)."""

    _bias: np.ndarray | None = None  # cache of affinity_bias
    _affinity_table: tuple[Any, np.ndarray] | None = None  # (the context table it was built from, table)
    _itemitem: ItemItem | None = None  # the item-item completion model, if fitted

    def recommend(
        self,
        basket: Sequence[Item] | Sequence[Sequence[Item]] | Any,
        *args: Any,
        k: int = 10,
        restrict: Restrict = None,
        on_unknown: OnUnknown = "raise",
        scoring: Scoring = "auto",
        types: Types = None,
        item_keys: Sequence[str] | None = None,
        **implicit: Any,
    ) -> Neighbours | tuple[np.ndarray, np.ndarray]:
        """Items to add to a basket, basket items excluded: ``recommend(basket, k=10)``.

        Called as implicit's ``recommend(userid, user_items, N=10, ...)`` on a space trained from a
        matrix, it answers as implicit does: ``(ids, scores)`` NumPy arrays whose ids are matrix columns
        (see :mod:`likewise.space.implicit_names`). ``userid`` is an int or a 1-D array of ints and
        ``user_items`` holds one row per user (``user_items[userid]``); ``filter_items=`` / ``items=``
        are columns; ``recalculate_user`` is accepted either way (the answer always comes from the row
        given: likewise keeps no user factors that could be stale), and ``filter_already_liked_items=
        False`` raises (a basket's own items are never proposed).

        Parameters
        ----------
        basket : sequence of items, sequence of such sequences, or scipy.sparse matrix
            One basket (1-D result) or a batch of baskets (2-D result). A sparse matrix (any format) is
            a batch, a basket per row, as ``implicit``'s ``model.recommend(users, user_items[users])``
            takes it: row ``r`` is the basket of the columns where it holds a value > 0 (values must be
            >= 0 and are otherwise not used), and gives row ``r`` of the 2-D result. A row with no
            value > 0 raises :class:`InputError` (there is nothing to complete; drop such rows first).
        k : int
            Recommendations per basket, >= 1 (default 10; may be given as the second positional
            argument, or as implicit's ``N=``); clamped to the number of candidates available.
        restrict : None, int or collection of keys
            As in :meth:`similar`.
        on_unknown : {"raise", "skip"}
            With ``"skip"`` unknown keys are dropped from the baskets; a basket left with no known item
            raises :class:`InputError`.
        scoring : {"auto", "affinity", "mixture", "product", "cosine"}
            ``affinity`` (needs the :attr:`context` table, which :func:`likewise.train` keeps): each
            basket item ``i`` scores a candidate ``j`` by ``vectors[i] · context[j] + a·log(count[j])``,
            skip-gram's estimate of ``log P(j | i)`` up to a constant (``a`` = the ``ns_exponent`` it
            was trained with), and the basket combines them by the space's :attr:`basket_rule`, which
            training chose on held-out baskets: ``mixture`` (the log of the mean of ``exp`` of those: a
            candidate that goes with *one* basket item ranks high, as co-purchase counts summed over the
            basket do) or ``product`` (their sum: a candidate must go with *all* of them, what baskets
            that mix several tastes need). ``mixture`` and ``product`` ask for one rule explicitly.
            ``cosine``: the cosine to the sum of the basket's unit vectors (finds items *like* the
            basket: substitutes more than complements; repeated items weigh more). ``itemitem``: the
            item-item model (EASE) training fitted beside the vectors (:attr:`itemitem`): a candidate
            scores the sum of its learned weights from the basket's items (:meth:`complete_top_k`).
            ``auto``: the space's :attr:`completion` (``itemitem`` when training kept the item-item
            model, else ``affinity`` when the space has a context table, else cosine).
        types : str or list of str, optional
            In a typed space, recommend only items of these types (see :meth:`similar`).
        item_keys : sequence of str, optional
            With a sparse matrix: the key of each of its columns. Default: the columns of the matrix the
            space was trained on with :func:`likewise.train` (``meta["matrix"]``, saved with the space);
            a space not trained on a matrix needs them here.
        **implicit
            implicit's keywords, for the ``recommend(userid, user_items, N=...)`` form (see above):
            ``N`` (``k``'s other name, for either form), ``filter_already_liked_items``,
            ``filter_items``, ``recalculate_user``, ``items`` (:data:`IMPLICIT_OPTIONS`). Any other
            keyword raises ``TypeError``, as for any function.

        Returns
        -------
        Neighbours, or implicit's ``(ids, scores)`` when called as implicit's ``recommend``
        """
        if len(args) > 1:
            raise InputError(
                f"recommend takes a basket and k (or implicit's userid and user_items), got {1 + len(args)} "
                "positional arguments"
            )
        second = args[0] if args else None
        unknown = sorted(set(implicit) - set(IMPLICIT_OPTIONS))
        if unknown:
            raise TypeError(f"recommend() got an unexpected keyword argument {unknown[0]!r}")
        N = implicit.get("N")
        filter_already_liked_items = implicit.get("filter_already_liked_items", True)
        filter_items, items = implicit.get("filter_items"), implicit.get("items")
        if N is not None and k != 10:
            raise InputError(f"give k= or N= (implicit's name), not both: k={k!r}, N={N!r}")
        k = k if N is None else N
        if is_matrix(second):
            return self.implicit_recommend(  # type: ignore[attr-defined]
                basket,
                second,
                k,
                filter_already_liked_items=filter_already_liked_items,
                filter_items=filter_items,
                items=items,
                scoring=scoring,
            )
        if second is not None:
            if k != 10:
                raise InputError(f"k is given twice: as {second!r} and as a keyword")
            k = second
        given = {"filter_items": filter_items, "items": items}
        given |= {"filter_already_liked_items": not filter_already_liked_items or None}
        given |= {"recalculate_user": implicit.get("recalculate_user", False) or None}
        asked = [name for name, v in given.items() if v is not None]
        if asked:
            raise InputError(
                f"{asked[0]}= is an option of implicit's recommend(userid, user_items, N=...), which takes "
                "matrix rows; with a basket of items use restrict= (the items allowed) and k="
            )
        if is_sparse(basket):
            basket = self.matrix_baskets(basket, item_keys)  # type: ignore[attr-defined]
        elif item_keys is not None:
            raise InputError(
                f"item_keys= names the columns of a sparse matrix; basket is {type(basket).__name__}"
            )
        if not is_batch(basket):
            raise InputError(
                f"basket must be a sequence of items, got {type(basket).__name__} {basket!r} "
                "(wrap a single item in a list)"
            )
        if len(basket) == 0:
            raise InputError("basket is empty: give at least one item")
        nested = [is_batch(b) for b in basket]
        if all(nested):
            baskets, single = list(basket), False
        elif not any(nested):
            baskets, single = [basket], True
        else:
            raise InputError("basket mixes items and lists of items: give one basket or a list of baskets")
        if scoring not in SCORINGS:
            raise InputError(f"scoring == {scoring!r}, must be one of {', '.join(map(repr, SCORINGS))}")
        if scoring in ("affinity", *BASKET_RULES) and self.context is None:
            raise NotFittedError(
                f"scoring={scoring!r} needs the context (output) table, which this space does not have "
                "(it was imported or trained by an older version); use scoring='cosine'"
            )
        if scoring == "itemitem" and self.itemitem is None:
            raise NotFittedError(
                "scoring='itemitem' needs the item-item model, which this space does not have (trained "
                "in sequence mode, with completion='affinity', or by an older version); use 'affinity'"
            )
        use_itemitem = scoring == "itemitem" or (scoring == "auto" and self.completes_by_itemitem(types))
        use_affinity = scoring not in ("auto", "cosine") or (scoring == "auto" and self.context is not None)
        rule = scoring if scoring in BASKET_RULES else None
        restrict = self.typed_restrict(restrict, types)
        ex_rows: list[np.ndarray] = []
        ex_ids: list[np.ndarray] = []
        contexts: list[np.ndarray] = []
        queries = np.zeros((len(baskets), self.dim), dtype=np.float32)
        for row, b in enumerate(baskets):
            ids, _ = self.ids_of(b, on_unknown)
            if len(ids) == 0:
                where = "basket" if single else f"basket {row}"
                raise InputError(f"{where} has no known {self.vocab.what} (given {list(b)[:5]!r})")
            contexts.append(ids)
            queries[row] = self.normed[ids].sum(axis=0)
            ex_rows.append(np.full(len(ids), row, dtype=np.int64))
            ex_ids.append(ids)
        if use_itemitem:
            out_ids, scores = self.complete_top_k(contexts, k, restrict=restrict, types=types)
            return self.answer_of(out_ids, scores, single)
        if use_affinity:
            out_ids, scores = self.affinity_top_k(contexts, k, restrict=restrict, rule=rule)
            return self.answer_of(out_ids, scores, single)
        out_ids, scores = self.search_rows(
            normalise_rows(queries), k, restrict, np.concatenate(ex_rows), np.concatenate(ex_ids)
        )
        return self.answer_of(out_ids, scores, single)

    def affinity_top_k(
        self,
        contexts: Sequence[np.ndarray],
        k: int,
        *,
        restrict: Restrict = None,
        rule: BasketRule | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids for each context (an array of item ids) by the affinity of :meth:`recommend`.

        A context's own items are never returned; an empty context is ranked by ``a·log(count)`` alone.
        ``rule`` (``"mixture"`` or ``"product"``) combines a context's items; default: the space's
        :attr:`basket_rule`.

        Returns
        -------
        ids, scores : ndarray, shape [n, k']
            int64 ids and float32 scores, best first, ties by lower id; ``k`` is clamped to the fewest
            candidates any context leaves.

        Raises
        ------
        NotFittedError
            The space has no :attr:`context` table.
        """
        if self.context is None:
            raise NotFittedError("this space has no context (output) table: affinity needs one")
        ctx, allowed, k = self._completion_cases(contexts, k, restrict)
        rule = self.basket_rule if rule is None else rule
        if rule not in BASKET_RULES:
            raise InputError(f"rule == {rule!r}, must be one of {', '.join(map(repr, BASKET_RULES))}")
        return basket_affinity_top_k(
            np.asarray(self.vectors), np.asarray(self.context), self.affinity_bias, ctx, k, allowed, rule
        )

    def _completion_cases(
        self, contexts: Sequence[np.ndarray], k: int, restrict: Restrict
    ) -> tuple[list[np.ndarray], np.ndarray, int]:
        """Contexts as sorted unique ids (checked), the allowed candidates (bool [V]) and ``k`` clamped
        to the fewest candidates any context leaves; shared by both completions."""
        k = check_k(k)
        table, cand = self.candidates(restrict)
        ctx = [unique(np.asarray(c, dtype=np.int64).reshape(-1)) for c in contexts]
        for c in ctx:
            if len(c) and (c[0] < 0 or c[-1] >= len(self)):
                raise ItemIndexError(int(c[0] if c[0] < 0 else c[-1]), len(self))
        if cand is None:  # the first rows: all of them, or the N most frequent when they are rows 0..N-1
            allowed = np.arange(len(self)) < len(table)
        else:
            allowed = np.isin(np.arange(len(self)), cand)
        left = min((int(allowed.sum()) - int(allowed[c].sum()) for c in ctx), default=int(allowed.sum()))
        k = min(k, left)
        if k < 1:
            raise InputError("no candidate is left after excluding the context's own items")
        return ctx, allowed, k

    @property
    def itemitem(self) -> ItemItem | None:
        """The item-item completion model (:class:`likewise.space.itemitem.ItemItem`) training kept, or
        None."""
        return self._itemitem

    @property
    def completion(self) -> str:
        """What completes a basket by default: ``"itemitem"``, ``"affinity"`` or ``"cosine"``.

        Training in basket mode chooses between the item-item model and the affinity on held-out baskets
        (``meta["completion_reason"]`` says how); a space without either answers by cosine.
        """
        if self.itemitem is not None:
            return "itemitem"
        return "affinity" if self.context is not None else "cosine"

    def attach_itemitem(self, model: ItemItem | None) -> None:
        """Keep an item-item completion model of this space (None drops it); saved with the space.

        A model fitted before rows were appended (``place``, ``update``) keeps answering for the rows it
        covers; the appended rows are completed through their vectors.

        Raises
        ------
        InputError
            The model was fitted for more rows than the space has.
        """
        if model is not None:
            if model.n_items > len(self):
                raise InputError(
                    f"the item-item model is for {model.n_items} rows, the space has {len(self)}"
                )
            if model.n_items < len(self):
                model = dataclasses.replace(model, n_items=len(self))
        self._itemitem = model

    def completes_by_itemitem(self, types: Types = None) -> bool:
        """Whether a completion asking for ``types`` is answered by the item-item model.

        True when the space has one, unless training found the affinity better for every type asked
        for (``meta["completion_by_type"]``, measured per type in a typed space).
        """
        if self.itemitem is None:
            return False
        by_type = (self.meta or {}).get("completion_by_type") or {}
        if types is None or not by_type:
            return True
        names = [types] if isinstance(types, str) else list(types)
        return not all(by_type.get(n) == "affinity" for n in names)

    def complete_top_k(
        self, contexts: Sequence[np.ndarray], k: int, *, restrict: Restrict = None, types: Types = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids for each context (an array of item ids) by the space's :attr:`completion`.

        With the item-item model: a candidate scores the sum of its weights from the context's items
        (:meth:`likewise.space.itemitem.ItemItem.top_k`). The model covers the items it was fitted on (every
        item with orders, or the most frequent ``completion_max_items``); where it has fewer than ``k``
        candidates with a weight, or none of the context's items, the rest of the row comes from
        :meth:`affinity_top_k` (items the model does not cover, placed products among them), after the
        model's. Without the model: :meth:`affinity_top_k` under the space's :attr:`basket_rule`.

        Returns
        -------
        ids, scores : ndarray, shape [n, k']
            int64 ids and float32 scores, best first; ``k`` clamped as :meth:`affinity_top_k` does.
        """
        model = self.itemitem
        if model is None or not self.completes_by_itemitem(types):
            return self.affinity_top_k(contexts, k, restrict=restrict)
        ctx, allowed, k = self._completion_cases(contexts, k, restrict)
        ids, scores = model.top_k(ctx, k, allowed)
        short = np.flatnonzero(~np.isfinite(scores[:, -1]) | (scores[:, -1] == 0)) if k else []
        if len(short) and self.context is not None:
            # rows the model cannot fill with weighted candidates: the affinity ranks the rest
            more_ids, more_scores = self.affinity_top_k([ctx[r] for r in short], k, restrict=restrict)
            for j, r in enumerate(short.tolist()):
                keep = np.isfinite(scores[r]) & (scores[r] != 0)
                mine = ids[r][keep]
                extra = ~np.isin(more_ids[j], mine)
                n_more = k - len(mine)
                ids[r] = np.r_[mine, more_ids[j][extra][:n_more]]
                scores[r] = np.r_[scores[r][keep], more_scores[j][extra][:n_more]]
        return ids, scores

    @property
    def basket_rule(self) -> BasketRule:
        """How :meth:`recommend` combines a basket's items: ``"mixture"`` or ``"product"``.

        Training picks the rule with the better leave-one-out completion on its held-out slice
        (``meta["basket_scoring"]``, with ``meta["scoring_reason"]``); a space trained without one, or
        by an older version, uses the mixture.
        """
        rule = (self.meta or {}).get("basket_scoring", "mixture")
        return rule if rule in BASKET_RULES else "mixture"

    @property
    def affinity_bias(self) -> np.ndarray:
        """The popularity term of the affinity (see :meth:`recommend`), float64 [V], cached.

        :func:`likewise.space.search.affinity_bias` of the counts, the config's ``ns_exponent`` and the keep
        probabilities of its ``sample``: what turns ``vectors[i] · context[j]`` into ``log P(j | i)`` of
        the real baskets, up to a constant.
        """
        if self._bias is None:
            from ..kernels.sampling import make_keep_prob  # NumPy only

            cfg = self.config
            sample = self.report.sample.value  # as trained (the config keeps what was asked: None, "auto")
            counts = np.maximum(np.asarray(self.counts, dtype=np.float64), 1.0)
            keep = make_keep_prob(counts, float(sample or 0.0))
            self._bias = affinity_bias(counts, float(cfg.ns_exponent if cfg is not None else 0.75), keep)
        return self._bias

    @property
    def affinity_table(self) -> np.ndarray:
        """``[context | affinity_bias]``, float32 [V, D + 1], cached: ``[q, 1] · row j`` is the affinity.

        Used to score a vector query (a customer's mean vector) against every product in one product.

        Raises
        ------
        NotFittedError
            The space has no :attr:`context` table.
        """
        if self.context is None:
            raise NotFittedError(
                "this space has no context table; train it from an order log (train_from_log)"
            )
        context = self.context
        if self._affinity_table is None or self._affinity_table[0] is not context:
            bias = self.affinity_bias.astype(np.float32)
            table = np.hstack([np.asarray(context, dtype=np.float32), bias[:, None]])
            table.flags.writeable = False
            self._affinity_table = (context, table)
        return self._affinity_table[1]
