"""What the mixins of a space share: the types of an item and of a restriction, and the host they need.

:class:`~likewise.space.embeddings.Embeddings` is assembled from mixins (``BasketQueries``,
``WordQueries``, ``GensimNames``, ``ImplicitNames``, ``ItemTable``, ``DisplayNames``, ``SpaceFiles``,
``StoreExports``), each in its own module. Both sides import this module and nothing of each other's:
the mixins take :data:`Item`, :data:`Restrict` and :data:`Types` from here, and what a mixin uses of the
space it is mixed into is :class:`SpaceHost`, stated once. A mixin uses only public names of its host
(never ``self._x`` defined elsewhere); its own state (a cache, an attached model) is its own private
attribute with a class default. ``tests/test_space_host.py`` checks both from the source: every name a
mixin uses that it does not define is a member of :class:`SpaceHost`, every member is used by some mixin,
and ``Embeddings`` has them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

import numpy as np

from .._check import Row
from ..data.vocab import OnUnknown, Vocab
from .results import Neighbours, SpaceVector

__all__ = ["Item", "Restrict", "SpaceHost", "Types"]

#: One item as a query takes it: a key (an int is the key written the same way), a display name or a Row.
Item = str | int | np.integer | Row
#: The rows a query may return: None (all), an int N (the N most frequent) or a collection of items.
Restrict = int | Sequence[Item] | set | frozenset | np.ndarray | None
#: The item types a query may return in a typed space (None: every type that is not hidden).
Types = str | Iterable[str] | None


class SpaceHost(Protocol):
    """What the mixins of :class:`~likewise.space.embeddings.Embeddings` need of the space they are mixed
    into: exactly the names they use without defining them.

    The space's own (defined by ``Embeddings``): its tables (``vocab``, ``keys``, ``counts``, ``vectors``,
    ``normed``, ``context``, ``customers``), identity and settings (``fingerprint``, ``dim``, ``config``,
    ``meta``), item lookup (``id_of``, ``ids_of``, ``vector``, ``replace_vocab``), its cosine queries
    (``similar``, ``similar_to_vector``) and the plumbing every query shares: ``candidates`` (the one
    reading of ``restrict``), ``unit_queries`` (query vectors checked), ``search_rows`` (the one
    search) and ``answer_of`` (the one answer). The public names of other mixins a mixin calls:
    ``recommend``, ``typed_restrict``, ``similarity``, ``matrix_baskets``, ``implicit_recommend``.
    """

    # ---- the space's tables, identity and settings ------------------------------------------------------

    @property
    def vocab(self) -> Vocab: ...

    @property
    def keys(self) -> list[str]: ...

    @property
    def counts(self) -> np.ndarray: ...

    @property
    def vectors(self) -> np.ndarray: ...

    @property
    def normed(self) -> np.ndarray: ...

    @property
    def context(self) -> np.ndarray | None: ...

    @property
    def customers(self) -> Any: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def config(self) -> Any: ...  # the TrainConfig as asked (likewise.training.config), or None

    @property
    def meta(self) -> dict: ...

    @property
    def report(self) -> Any: ...  # the choices training made (likewise.training.report.TrainReport)

    def __len__(self) -> int: ...

    # ---- items ------------------------------------------------------------------------------------------

    def id_of(self, item: object) -> int: ...

    def ids_of(self, items: Any, on_unknown: OnUnknown = "raise") -> tuple[np.ndarray, np.ndarray]: ...

    def vector(self, item: Item, *, norm: bool = False) -> SpaceVector: ...

    def replace_vocab(self, vocab: Vocab) -> None: ...

    # ---- the plumbing every query shares ----------------------------------------------------------------

    def candidates(self, restrict: Restrict) -> tuple[np.ndarray, np.ndarray | None]: ...

    def unit_queries(self, v: Any) -> tuple[np.ndarray, bool]: ...

    def search_rows(
        self,
        queries: np.ndarray,
        k: int,
        restrict: Restrict,
        ex_rows: np.ndarray,
        ex_ids: np.ndarray,
        method: Literal["dot", "cosmul"] = "dot",
        n_negative: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def answer_of(
        self, ids: np.ndarray, scores: np.ndarray, single: bool, queries: np.ndarray | None = None
    ) -> Neighbours: ...

    # ---- queries (the space's and other mixins') ------------------------------------------------------

    def similar(self, items: Any, k: int = 10, **options: Any) -> Neighbours: ...

    def similar_to_vector(self, v: Any, k: int = 10, **options: Any) -> Neighbours: ...

    def similarity(self, a: Any, b: Any) -> Any: ...

    def recommend(self, basket: Any, *args: Any, **options: Any) -> Any: ...

    def typed_restrict(self, restrict: Any, types: Types) -> Any: ...

    def matrix_baskets(self, matrix: object, item_keys: Sequence[str] | None = None) -> list[list[str]]: ...

    def implicit_recommend(
        self, userid: Any, user_items: Any, N: int = 10, **options: Any
    ) -> tuple[np.ndarray, np.ndarray]: ...
