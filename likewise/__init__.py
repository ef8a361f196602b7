"""likewise: learn what "similar" means from what goes together.

The core imports numpy (and numba lazily, when training); plots, torch and the service are extras.
"""

from __future__ import annotations

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
from .vocab import Vocab

__version__ = "0.1.0"

__all__ = [
    "CorruptModelError",
    "InputError",
    "ItemIndexError",
    "LikewiseError",
    "MissingDependencyError",
    "NotFittedError",
    "SpaceMismatchError",
    "UnknownItemError",
    "Vocab",
    "__version__",
]
