"""The kernels' hyper-parameters in one named structure, and the one learning-rate schedule.

:class:`KernelParams` holds a block kernel's hyper-parameters by name and travels whole: training calls
the kernels of :func:`likewise.kernels.block_kernel` with it, and only the numba boundary
(``likewise.kernels._block.BlockKernel``, through ``Block.scalars``) lays the scalars out in the
compiled drivers' order. The public kernels (:mod:`.sgns`, :mod:`.batched`, :mod:`.typed_negatives`) take them
positionally; :meth:`KernelParams.block_args` lays them out in those kernels' order, so a caller of
those writes the order nowhere else. :func:`learning_rate` is the
schedule every part of training reads (the backends, the epoch summaries, checkpoints); the compiled
kernels inline their own copy of it (``likewise.kernels._common.lr_at``), which the tests hold equal to it.

Plain Python: importing this module loads neither numba nor torch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["KernelParams", "learning_rate"]


def learning_rate(lr0: float, min_lr: float, done: float, total: float) -> float:
    """The learning rate after ``done`` of ``total`` units of planned work (tokens, or passes).

    Linear decay from ``lr0`` to ``min_lr``, as word2vec's; never below ``min_lr``. The kernels compute
    the same expression in the same order and round it to float32.

    Parameters
    ----------
    lr0, min_lr : float
        The starting and the final learning rate.
    done, total : float
        Work done so far and all the work planned (``total > 0``).
    """
    progress = done / total
    return max(min_lr, lr0 - (lr0 - min_lr) * progress)


@dataclasses.dataclass(frozen=True)
class KernelParams:
    """The scalars a block kernel trains with, by name.

    Parameters
    ----------
    mode : int
        0 sequence (a sliding window), 1 basket (every other item of the basket).
    window, negative, max_context : int
        As in :func:`likewise.kernels.train_sgns_block`.
    lr0, min_lr : float
        The learning-rate schedule's ends (:func:`learning_rate`).
    group : int
        Contexts of one centre sharing a set of negatives: 1 for the per-pair kernels (:mod:`.sgns`,
        :mod:`.typed_negatives`), which take no ``group`` argument; more for :mod:`.batched`.
    """

    mode: int
    window: int
    negative: int
    max_context: int
    lr0: float
    min_lr: float
    group: int = 1

    @classmethod
    def of(cls, config: Any, group: int | None = None) -> KernelParams:
        """The parameters of a :class:`~likewise.training.config.TrainConfig` (its ``mode`` resolved to
        ``"sequence"`` or ``"basket"``); ``group`` overrides ``config.neg_group``."""
        return cls(
            mode=0 if config.mode == "sequence" else 1,
            window=int(config.window),
            negative=int(config.negative),
            max_context=int(config.max_context),
            lr0=config.lr,
            min_lr=config.min_lr,
            group=int(config.neg_group if group is None else group),
        )

    def sampling(self) -> tuple[int, int, int, int]:
        """``(mode, window, negative, max_context)``: how contexts and negatives are drawn, in the order
        every kernel (numba and torch) takes them."""
        return self.mode, self.window, self.negative, self.max_context

    def block_args(
        self,
        ids: Any,
        offsets: Any,
        seq_start: int,
        seq_end: int,
        W: Any,
        C: Any,
        keep_prob: Any,
        neg_cum: Any,
        words_before: int,
        total_words: int,
        seed: int,
        n_chunks: int,
    ) -> tuple:
        """The positional arguments of a block kernel call: the batched kernels' when ``group > 1``
        (``group`` after ``max_context``), else the per-pair kernels'."""
        group = () if self.group == 1 else (self.group,)
        return (
            ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, *self.sampling(), *group,
            self.lr0, self.min_lr, words_before, total_words, seed, n_chunks,
        )  # fmt: skip

    def lr_at(self, done: float, total: float) -> float:
        """:func:`learning_rate` of these parameters after ``done`` of ``total``."""
        return learning_rate(self.lr0, self.min_lr, done, total)
