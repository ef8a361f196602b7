"""Training kernels: pure functions of arrays and scalars, compiled with numba, each with a NumPy reference.

Importing this package imports numba; ``import likewise`` does not import it.
"""

from __future__ import annotations

from .batched import train_sgns_batched_block, train_sgns_batched_block_serial
from .reference import train_sgns_batched_block_reference, train_sgns_block_reference
from .sgns import (
    MAX_EXP,
    MODE_BASKET,
    MODE_SEQUENCE,
    check_corpus,
    train_sgns_block,
    train_sgns_block_serial,
)
from .tables import NEG_CUM_DOMAIN, make_keep_prob, make_neg_cum

__all__ = [
    "MAX_EXP",
    "MODE_BASKET",
    "MODE_SEQUENCE",
    "NEG_CUM_DOMAIN",
    "check_corpus",
    "make_keep_prob",
    "make_neg_cum",
    "train_sgns_batched_block",
    "train_sgns_batched_block_reference",
    "train_sgns_batched_block_serial",
    "train_sgns_block",
    "train_sgns_block_reference",
    "train_sgns_block_serial",
]
