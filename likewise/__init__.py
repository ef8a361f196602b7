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

from ._check import Row
from ._lazy import lazy_names
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
from .training.train import EpochStats, RunOptions, TrainConfig

if TYPE_CHECKING:
    from .data.corpus import Corpus, build_corpus, corpus_from_sequences
    from .readers import InputSpec, ReadOptions
    from .retail.fit import CustomerOptions

from ._version import __version__

__all__ = [
    "Corpus",
    "CorruptModelError",
    "CustomerOptions",
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
    "ReadOptions",
    "Row",
    "RunOptions",
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
    "ReadOptions": "readers",
    "CustomerOptions": "retail.fit",
}


__getattr__ = lazy_names(__name__, _LAZY)  # the names below, then any submodule, on first use


def load(path: str, *, mmap: bool = False, verify: bool = True) -> Embeddings:
    """Load a saved space (see :meth:`Embeddings.load`)."""
    return Embeddings.load(path, mmap=mmap, verify=verify)


def train(
    data: Any = None,
    config: TrainConfig | None = None,
    *,
    read: ReadOptions | None = None,
    run: RunOptions | None = None,
    customers: CustomerOptions | None = None,
    **keywords: Any,
) -> Embeddings:
    """Train item vectors; with ``user_col`` (or a matrix's ``user_keys``) also customers.

    The options are four objects, each given whole or by its fields as keywords (each keyword goes
    into the one object whose field it names; a field both set in a given object and given as a
    keyword is refused, naming both, and an unknown keyword is refused with the closest name):
    ``config`` (:class:`TrainConfig`: what is learnt, ``dim``, ``epochs``, ...; its keywords replace
    single fields), ``read`` (:class:`ReadOptions`: how the input is read, ``basket_col``,
    ``user_col``, ...), ``run`` (:class:`RunOptions`: ``callback``, ``progress``, ``cache_dir``,
    the checkpoints) and ``customers`` (:class:`CustomerOptions`: ``half_life_days``,
    ``popularity_power``). ``likewise.train(data, TrainConfig(dim=8), read=ReadOptions(basket_col="order"),
    run=RunOptions(progress="none"))`` trains as ``likewise.train(data, dim=8, basket_col="order",
    progress="none")`` does. ``names=`` and ``name_col=`` (display names) are keywords of their own.

    ``data`` is what :func:`likewise.training.train.train` takes (sequences, a path, an
    :class:`InputSpec`, a corpus, or a pyarrow Table / pandas / polars DataFrame with ``basket_col`` and
    ``item_col``); :func:`likewise.readers.resolve_input` decides which, for every front end. The
    order-log columns (``user_col``, ``time_col``, ``quantity_col``, ``sessions``; ``half_life_days`` and
    ``popularity_power`` weigh the customer vectors) are read beside the items, as ``likewise train
    --user-col`` does, and the space gets customer vectors (``emb.customers``,
    :func:`likewise.retail.fit.after_training`); so do the options of a typed space (``type_col``,
    ``type_map``, ``type_cols``, ``item_attrs``, ``attrs_item_col``, ``typed_negatives``).
    ``tokenize="simple"`` reads a text file lower-cased and split at punctuation (:class:`InputSpec`; the
    default ``"none"`` keeps words as written). Other keywords (``dim=``, ``epochs=``, ``callback=``,
    ``progress=``, ...) pass through. gensim's ``sentences=``, ``corpus_iterable=`` and ``corpus_file=``
    (a path, read as a text file: a sentence per line, words split at whitespace) are accepted as
    ``data``.

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
    ``recommend(basket, k)``, ``recommend(user_items[rows])``) take keys (without ``item_keys`` the
    column numbers, given as ints or as text: ``3`` or ``"3"``) and return :class:`Neighbours` whose
    ``ids`` are matrix columns too.
    """
    from .retail.fit import train as _train  # the one way into training (likewise.readers.resolve_input)

    return _train(data, config, read=read, run=run, customers=customers, **keywords)
