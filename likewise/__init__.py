"""likewise: learn what "similar" means from what goes together.

>>> import likewise
>>> emb = likewise.train([["tent", "headlamp"], ["kettle", "coffee mug"]] * 50,
...                      mode="basket", dim=8, min_count=1)          # doctest: +SKIP
>>> emb.similar("tent", k=3)                                          # doctest: +SKIP

The core imports numpy at ``import likewise``; pyarrow (readers) and numba (the kernel) load on first
use, and plots, torch and the service are extras that the core never imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._check import is_matrix
from ._threads import query_threads
from .data.vocab import Vocab, parse_item
from .errors import (
    CorruptModelError,
    DistributedError,
    InputError,
    ItemIndexError,
    LikewiseError,
    MissingDependencyError,
    NotFittedError,
    SpaceMismatchError,
    UnknownItemError,
    WriteError,
)
from .space.embeddings import Embeddings, Neighbours, SpaceVector
from .training.train import EpochStats, TrainConfig
from .training.train import train as _train_items

if TYPE_CHECKING:
    from .data.corpus import Corpus, build_corpus, corpus_from_sequences
    from .readers import InputSpec

from ._version import __version__

__all__ = [
    "Corpus",
    "CorruptModelError",
    "DistributedError",
    "Embeddings",
    "EpochStats",
    "InputError",
    "InputSpec",
    "ItemIndexError",
    "LikewiseError",
    "MissingDependencyError",
    "Neighbours",
    "NotFittedError",
    "SpaceMismatchError",
    "SpaceVector",
    "TrainConfig",
    "UnknownItemError",
    "Vocab",
    "WriteError",
    "__version__",
    "build_corpus",
    "corpus_from_sequences",
    "load",
    "parse_item",
    "query_threads",
    "train",
]

# Names whose modules import pyarrow: resolved on first access so `import likewise` stays light.
_LAZY = {
    "Corpus": "data.corpus",
    "build_corpus": "data.corpus",
    "corpus_from_sequences": "data.corpus",
    "InputSpec": "readers",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'likewise' has no attribute {name!r}")


_TYPED_OPTIONS = ("type_col", "type_map", "type_cols", "item_attrs", "attrs_item_col", "typed_negatives")


def load(path: str, *, mmap: bool = False, verify: bool = True) -> Embeddings:
    """Load a saved space (see :meth:`Embeddings.load`)."""
    return Embeddings.load(path, mmap=mmap, verify=verify)


def train(
    data: Any = None,
    config: TrainConfig | None = None,
    *,
    basket_col: str | None = None,
    item_col: str | None = None,
    order_col: str | None = None,
    user_col: str | None = None,
    time_col: str | None = None,
    quantity_col: str | None = None,
    sessions: str | int | None = None,
    item_keys: Any = None,
    user_keys: Any = None,
    **kwargs: Any,
) -> Embeddings:
    """Train item vectors; with ``user_col`` / ``time_col`` / ``quantity_col`` / ``sessions`` also customers.

    ``data`` is what :func:`likewise.training.train.train` takes (sequences, a path, an
    :class:`InputSpec`, a corpus, or a pyarrow Table / pandas / polars DataFrame with ``basket_col``
    and ``item_col``). The order-log columns route to :func:`likewise.retail.train_from_log`, as
    ``likewise train --user-col`` does, and the space gets customer vectors (``emb.customers``); so do
    the options of a typed space (``type_col``, ``type_map``, ``type_cols``, ``item_attrs``,
    ``attrs_item_col``, ``typed_negatives``). ``tokenize="simple"`` reads a text file lower-cased and
    split at punctuation (:class:`InputSpec`; the default ``"none"`` keeps words as written). Other
    keywords (``dim=``, ``epochs=``, ``callback=``, ``progress=``, ...) pass through. gensim's
    ``sentences=``, ``corpus_iterable=`` and ``corpus_file=`` (a path, read as a text file: a sentence
    per line, words split at whitespace) are accepted as ``data``.

    A user × item matrix (what ``implicit`` trains on: scipy.sparse in any format, or a dense 2-D
    NumPy array of numbers) trains as baskets, ``mode="basket"`` unless asked otherwise: each row is one
    basket of the columns where it holds a value > 0. **Confidence values are not used**: a basket is a
    set, so a count or a confidence of 5 weighs as 1 (implicit's ``alpha * X`` weighting has no
    counterpart here); values must be finite and >= 0. ``item_keys`` names the columns (one distinct
    str each; default the column numbers ``"0"``, ``"1"``, ...); ``user_keys`` names the rows, and then
    the space also gets a customer vector per row (:func:`likewise.space.customers.customer_table`,
    the mean of the row's item vectors; ``emb.customers``). A column that holds no value > 0 is in no
    basket and has no vector: ``meta["dropped"]`` lists it (reason ``"empty"``) and a query naming it
    says so.

    The space remembers the matrix's columns (``meta["matrix"]``, saved with it), so implicit's names
    answer in columns, as implicit does: ``ids, scores = emb.recommend(userid, user_items[userid],
    N=10)`` (``filter_items=``, ``items=``, batches of user ids), ``emb.similar_items(column, N=10)``,
    ``emb.similar_users(row, N=10)`` (with ``user_keys``) and ``emb.item_factors`` (see
    :class:`likewise.space.implicit_names.ImplicitNames`). likewise's own queries (``similar``,
    ``recommend(basket, k)``) take keys (the column number as a str, ``"3"``, when no ``item_keys``
    were given) or likewise ids, the rows of ``emb.vectors``, and return :class:`Neighbours`.
    """
    data = _gensim_data(data, kwargs)
    typed = {k: kwargs.pop(k) for k in _TYPED_OPTIONS if k in kwargs}
    tokenize = kwargs.pop("tokenize", "none")
    if is_matrix(data) or item_keys is not None or user_keys is not None:
        options = {"basket_col": basket_col, "item_col": item_col, "order_col": order_col}
        options |= {"user_col": user_col, "time_col": time_col, "quantity_col": quantity_col}
        options |= {"sessions": sessions, **typed, "tokenize": None if tokenize == "none" else tokenize}
        return _train_matrix(data, config, item_keys, user_keys, [k for k, v in options.items() if v], kwargs)
    if tokenize != "none":
        import dataclasses
        import os

        from .readers import InputSpec

        if not isinstance(data, str | os.PathLike | InputSpec):
            got = type(data).__name__
            raise InputError(f"tokenize={tokenize!r} reads text files: give a path, got {got}")
        spec = data if isinstance(data, InputSpec) else InputSpec(paths=(os.fspath(data),))
        data = dataclasses.replace(spec, tokenize=tokenize)
    if user_col is None and time_col is None and quantity_col is None and sessions is None and not typed:
        return _train_items(
            data, config, basket_col=basket_col, item_col=item_col, order_col=order_col, **kwargs
        )
    from . import retail

    if not (basket_col and (item_col or typed.get("type_cols"))):
        raise InputError("an order log needs basket_col= and item_col= (e.g. 'order_id' and 'product_id')")
    if order_col is not None:
        raise InputError("with an order log, name the order time with time_col=, not order_col=")
    if "callback" in kwargs:
        raise InputError("callback= is not supported when training from an order log with customers")
    cols = {"basket_col": basket_col, "item_col": item_col, "user_col": user_col}
    cols |= {"time_col": time_col, "quantity_col": quantity_col}
    return retail.train_from_log(data, config, sessions=sessions, **cols, **typed, **kwargs)  # tables too


_GENSIM_DATA = ("sentences", "corpus_iterable", "corpus_file")


def _gensim_data(data: Any, kwargs: dict) -> Any:
    """``data``, or what gensim's ``sentences=`` / ``corpus_iterable=`` / ``corpus_file=`` gave (popped)."""
    given = {k: kwargs.pop(k) for k in _GENSIM_DATA if k in kwargs}
    if len(given) + (data is not None) > 1:
        names = (["data"] if data is not None else []) + [f"{k}=" for k in given]
        raise InputError(f"the training data is given twice ({' and '.join(names)}): give it once")
    if given:
        data = next(iter(given.values()))
    if data is None:
        raise InputError(
            "train needs data: sequences, a path, a table or a user × item matrix, likewise.train(data, ...)"
        )
    return data


def _train_matrix(
    data: Any, config: TrainConfig | None, item_keys: Any, user_keys: Any, unused: list[str], kwargs: dict
) -> Embeddings:
    """:func:`train` on a scipy.sparse matrix: the rows as baskets, and customers with ``user_keys``."""
    from .readers import sparse_baskets
    from .space.customers import customer_table

    if not is_matrix(data):
        raise InputError(
            "item_keys= and user_keys= name the columns and rows of a user × item matrix (scipy.sparse "
            f"or a 2-D NumPy array of numbers); got {type(data).__name__}"
        )
    if unused:
        raise InputError(f"{unused[0]}= does not apply to a sparse matrix (each row is a basket)")
    baskets = sparse_baskets(data, item_keys, user_keys)
    emb = _train_items(baskets, config, **kwargs)
    if emb is not None and baskets.user_keys is not None:
        users, ids = baskets.lines(emb.vocab.index)
        emb.attach_customers(
            customer_table(emb.vectors, emb.counts, emb.fingerprint, baskets.user_keys, users, ids)
        )
    return emb
