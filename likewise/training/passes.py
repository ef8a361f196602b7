"""What a training backend is to the epoch loop: the :class:`Passes` protocol and :class:`Backend`.

:func:`likewise.training.train.backend_passes` (the one place a backend is chosen) returns a
:class:`Backend`; its ``make`` builds the :class:`Passes` over a corpus and two tables, and the epoch loop
of :mod:`likewise.training.train` and the checkpoints (:func:`likewise.training.checkpoint.run_state`)
call nothing else. :class:`likewise.training.train_numba.NumbaPasses` (blocks handed to the compiled
kernels) and :class:`likewise.training.train_torch.TorchPasses` (minibatch steps, sharded across
processes) implement it; tests/conftest.py's ``BackendContract`` holds both to it with the same calls.

A *step* is the unit between which progress is shown and a checkpoint may be written: a block of the
numba kernel, a minibatch of torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["COUNTERS", "Backend", "Passes"]

#: The counters :meth:`Passes.epoch` returns: tokens seen, tokens kept by subsampling, pairs trained and
#: the loss summed over them.
COUNTERS = ("seen", "kept", "pairs", "loss")


@runtime_checkable
class Passes(Protocol):
    """Epochs of one backend over one corpus and its tables."""

    #: Steps in one pass.
    n_steps: int

    def epoch(
        self, epoch: int, start: int, counts: dict[str, float], bar: Any, on_step: Any
    ) -> dict[str, float]:
        """Train steps ``start ..`` of pass ``epoch`` and return the pass's :data:`COUNTERS`.

        ``counts`` holds what the pass counted before ``start`` (a resumed run); ``bar`` is a progress
        bar (``update(n, **postfix)``); ``on_step(steps_done, totals)`` is called after every step, with
        ``totals()`` giving the counters so far (a collective in a multi-process run).
        """
        ...

    def lr_at(self, epoch: int, step: int) -> float:
        """The learning rate at the start of step ``step`` of pass ``epoch`` (``step == n_steps``: the
        end of the pass), from :func:`likewise.kernels.params.learning_rate`."""
        ...

    def tables(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The trained input and output tables, float32 of shape (V, dim); None on a rank that does not
        hold the whole space."""
        ...

    def evaluate(self, fn: Callable[[np.ndarray, np.ndarray], Any]) -> Any:
        """``fn(W, C)`` on the current tables, the same value on every rank."""
        ...

    def shards(self) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """This process's rows of ``"W"`` and ``"C"`` as NumPy arrays, and their dtypes' names (what a
        checkpoint saves)."""
        ...

    def restore(self, rows: Callable[[str, np.ndarray], np.ndarray]) -> None:
        """Load this process's rows from ``rows(name, ids)`` (a checkpoint's ``Saved.rows``)."""
        ...


class Backend(NamedTuple):
    """A chosen backend, ready to train.

    Attributes
    ----------
    make : callable
        ``make(ids, offsets, W, C, total_words)`` builds the :class:`Passes` (``total_words``: tokens of
        all planned passes, the learning-rate schedule's length).
    threads : int
        The threads the passes use.
    layout : dict
        What fixes the random streams besides the seed; a checkpoint must match it to be resumed.
    """

    make: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int], Passes]
    threads: int
    layout: dict[str, Any]
