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

from .embeddings import Embeddings, Neighbours, SpaceVector
from .errors import (
    CorruptModelError,
    InputError,
    ItemIndexError,
    LikewiseError,
    MissingDependencyError,
    NotFittedError,
    SpaceMismatchError,
    UnknownItemError,
)
from .train import EpochStats, TrainConfig, train
from .vocab import Vocab

if TYPE_CHECKING:
    from .corpus import Corpus, build_corpus, corpus_from_sequences
    from .readers import InputSpec

__version__ = "0.1.0"

__all__ = [
    "Corpus",
    "CorruptModelError",
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
    "__version__",
    "build_corpus",
    "corpus_from_sequences",
    "load",
    "train",
]

# Names whose modules import pyarrow: resolved on first access so `import likewise` stays light.
_LAZY = {
    "Corpus": "corpus",
    "build_corpus": "corpus",
    "corpus_from_sequences": "corpus",
    "InputSpec": "readers",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'likewise' has no attribute {name!r}")


def load(path: str, *, mmap: bool = False, verify: bool = True) -> Embeddings:
    """Load a saved space (see :meth:`Embeddings.load`)."""
    return Embeddings.load(path, mmap=mmap, verify=verify)
