"""Training kernels: pure functions of arrays and scalars, each with a NumPy reference.

The numba kernels (:mod:`.sgns`, :mod:`.batched`, :mod:`.typed_negatives`) train blocks of sequences
one centre at a time (:func:`block_kernel` picks one for training, which passes it a
:class:`.params.KernelParams` whole; the ``train_sgns_*`` functions take the same scalars positionally); the
torch kernel (:mod:`.minibatch`, with its counter-based draws in :mod:`.draws`) trains a step of
sequences at once on any torch device. The tables (:mod:`.sampling`) are plain NumPy and import without
numba, so query code can use them; the kernels load numba on first use (``from likewise.kernels import
train_sgns_batched_block``), and :mod:`.minibatch` imports torch (``pip install '.[torch]'``).
``import likewise`` imports none of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .sampling import NEG_CUM_DOMAIN, make_keep_prob, make_neg_cum, sequence_blocks

if TYPE_CHECKING:
    from ._block import BlockKernel

__all__ = [
    "MAX_EXP",
    "MODE_BASKET",
    "MODE_SEQUENCE",
    "NEG_CUM_DOMAIN",
    "SETTLED",
    "add_weighted_rows",
    "add_weighted_rows_reference",
    "block_kernel",
    "build_batch_reference",
    "check_corpus",
    "make_keep_prob",
    "make_neg_cum",
    "make_typed_tables",
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
    "train_sgns_typed_block": "typed_negatives",
    "train_sgns_typed_block_serial": "typed_negatives",
    "train_sgns_typed_block_reference": "reference",
    "typed_kernel": "typed_negatives",
    "make_typed_tables": "typed_negatives",
    "build_batch_reference": "reference",
    "sgns_grads_reference": "reference",
}


def block_kernel(group: int, *, serial: bool, typed: tuple | None = None) -> BlockKernel:
    """The block kernel training runs: called as ``kernel(params, ids, offsets, seq_start, seq_end, W, C,
    keep_prob, neg_cum, words_before, total_words, seed, n_chunks)`` with a
    :class:`~likewise.kernels.params.KernelParams` whole (:class:`._block.BlockKernel`).

    Parameters
    ----------
    group : int
        Contexts sharing one set of negatives: 1 for word2vec's per-pair kernel (:mod:`.sgns`), more for
        the batched one (:mod:`.batched`).
    serial : bool
        One thread, chunks in order (bit-identical across runs), or ``numba.get_num_threads()`` threads.
    typed : tuple, optional
        The four type tables of :func:`make_typed_tables`: the per-pair kernel with typed negatives
        (:mod:`.typed_negatives`; ``group`` is then not used).
    """
    if typed is not None:
        from .typed_negatives import typed_block_kernel

        return typed_block_kernel(typed, serial=serial)
    if group == 1:
        from .sgns import PER_PAIR, PER_PAIR_SERIAL

        return PER_PAIR_SERIAL if serial else PER_PAIR
    from .batched import BATCHED, BATCHED_SERIAL

    return BATCHED_SERIAL if serial else BATCHED


__getattr__ = lazy_names(__name__, _WHERE, keep=globals())  # kept once imported
