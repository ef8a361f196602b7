"""Training kernels: pure functions of arrays and scalars, each with a NumPy reference.

The numba kernels (:mod:`.sgns`, :mod:`.batched`) train blocks of sequences one centre at a time; the
torch kernel (:mod:`.minibatch`, with its counter-based draws in :mod:`.draws`) trains a step of
sequences at once on any torch device. The tables (:mod:`.tables`) are plain NumPy and import without
numba, so query code can use them; the kernels load numba on first use (``from likewise.kernels import
train_sgns_batched_block``), and :mod:`.minibatch` imports torch (``pip install '.[torch]'``).
``import likewise`` imports none of this.
"""

from __future__ import annotations

import importlib
from typing import Any

from .tables import NEG_CUM_DOMAIN, make_keep_prob, make_neg_cum, sequence_blocks

__all__ = [
    "MAX_EXP",
    "MODE_BASKET",
    "MODE_SEQUENCE",
    "NEG_CUM_DOMAIN",
    "SETTLED",
    "add_weighted_rows",
    "add_weighted_rows_reference",
    "build_batch_reference",
    "check_corpus",
    "make_keep_prob",
    "make_neg_cum",
    "sequence_blocks",
    "sgns_grads_reference",
    "train_sgns_batched_block",
    "train_sgns_batched_block_reference",
    "train_sgns_batched_block_serial",
    "train_sgns_block",
    "train_sgns_block_reference",
    "train_sgns_block_serial",
    "train_sgns_typed_block",
    "train_sgns_typed_block_reference",
    "train_sgns_typed_block_serial",
    "typed_kernel",
]

_WHERE = {
    "MAX_EXP": "sgns",
    "MODE_BASKET": "sgns",
    "MODE_SEQUENCE": "sgns",
    "SETTLED": "_common",
    "check_corpus": "sgns",
    "add_weighted_rows": "rowsum",
    "add_weighted_rows_reference": "rowsum",
    "train_sgns_block": "sgns",
    "train_sgns_block_serial": "sgns",
    "train_sgns_batched_block": "batched",
    "train_sgns_batched_block_serial": "batched",
    "train_sgns_batched_block_reference": "reference",
    "train_sgns_block_reference": "reference",
    "train_sgns_typed_block": "typed",
    "train_sgns_typed_block_serial": "typed",
    "train_sgns_typed_block_reference": "reference",
    "typed_kernel": "typed",
    "build_batch_reference": "reference",
    "sgns_grads_reference": "reference",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
