"""The benchmark peers, each declared once: its name, how it is fitted, the optional library it needs, whether
it is in the default set, and one line about it.

A :class:`Peer` is a declaration; :class:`Peers` an ordered, immutable set of them. The built-in set is
:data:`likewise.baselines.counts.PEERS` (the count baselines, EASE and ALS, in the order the reports
print them); :func:`likewise.baselines.counts.fit_baselines`, ``likewise eval --holdout`` (its
``--baselines`` help and default) and the benchmarks under ``bench/`` all read that one set, so a peer
added there is fitted, offered and benchmarked everywhere. A benchmark that compares against peers of
its own adds them to a copy (:meth:`Peers.plus`), never to a second list of names.

Every peer is fitted from one :class:`PeerData` (the training sequences, the id space, the dimension and
the seed); work that several peers share (the co-occurrence counts behind ``popular``, ``cocount``,
``ppmi`` and ``ppmi-svd``) is computed once per :class:`PeerData`, by the first peer that asks
(:meth:`PeerData.shared`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from ..errors import InputError, MissingDependencyError

__all__ = ["Peer", "PeerData", "Peers", "Recommender"]

T = TypeVar("T")


@runtime_checkable
class Recommender(Protocol):
    """Anything that ranks items for contexts (the model, or a baseline).

    Attributes
    ----------
    name : str
        Shown in reports.
    """

    name: str

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """Top-``k`` item ids for each context, int64 ``(n, k)``, best first, context items excluded.

        ``k`` is clamped to the number of items left once the largest context is excluded, so the
        result is always rectangular. Ties are broken by the lower id.
        """
        ...


@dataclass
class PeerData:
    """What every peer is fitted from.

    Parameters
    ----------
    train : Corpus or sequence of int arrays
        One id array per basket / sequence, ids in ``[0, n_items)``.
    n_items : int
        Size of the id space V.
    dim : int
        Dimension of the peers that have one (``ppmi-svd``, the factors of ``als``).
    seed : int
        Seed of every random choice a peer makes (its held-out slice, its initial factors).
    """

    train: Any
    n_items: int
    dim: int
    seed: int = 0
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """``make()``, computed once per :class:`PeerData` whichever peer asks first (under ``key``)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Peer:
    """One benchmark peer, declared once.

    Parameters
    ----------
    name : str
        Its name in ``which=``, ``--baselines`` and every report row.
    fit : callable
        ``fit(data: PeerData) -> Recommender``, fitted on ``data.train``.
    about : str
        One line for ``--help`` and the docs.
    needs : str, optional
        The optional package it imports (import name = pip name), e.g. ``"implicit"``; None: none.
    default : bool
        In the default set (where ``needs`` is installed).
    learned : bool
        It learns, choosing its hyper-parameters on a held-out slice of the training data (a *peer* in
        the benchmarks' sense), rather than counting.
    """

    name: str
    fit: Callable[[PeerData], Recommender]
    about: str
    needs: str | None = None
    default: bool = True
    learned: bool = False

    @property
    def available(self) -> bool:
        """Whether ``needs`` can be imported (looked up, not imported: some take a second to import)."""
        return self.needs is None or importlib.util.find_spec(self.needs) is not None

    def missing(self) -> MissingDependencyError | None:
        """The error that says what to install, or None when :attr:`available`."""
        if self.available:
            return None
        return MissingDependencyError(str(self.needs), None, f"the {self.name} baseline")


@dataclass(frozen=True)
class Peers:
    """An ordered set of :class:`Peer`, names unique; iterate it for the peers in order.

    Parameters
    ----------
    peers : tuple of Peer
    """

    peers: tuple[Peer, ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for p in self.peers:
            if not isinstance(p, Peer):
                raise InputError(f"{p!r} is not a Peer")
            if p.name in seen:
                raise InputError(f"peer {p.name!r} is declared twice; each peer is declared once")
            seen.add(p.name)

    def __iter__(self) -> Iterator[Peer]:
        return iter(self.peers)

    def __len__(self) -> int:
        return len(self.peers)

    def __contains__(self, name: object) -> bool:
        return any(p.name == name for p in self.peers)

    @property
    def names(self) -> tuple[str, ...]:
        """Every name, in order."""
        return tuple(p.name for p in self.peers)

    @property
    def defaults(self) -> tuple[str, ...]:
        """The default set: peers marked ``default`` whose optional library is installed, in order."""
        return tuple(p.name for p in self.peers if p.default and p.available)

    def get(self, name: str) -> Peer:
        """The peer called ``name``; InputError naming the known ones when there is none."""
        for p in self.peers:
            if p.name == name:
                return p
        raise InputError(f"unknown baseline {name!r}; known: {', '.join(self.names)}")

    def plus(self, *extra: Peer) -> Peers:
        """A copy with ``extra`` appended (a benchmark's own peers)."""
        return Peers(self.peers + tuple(extra))

    def help(self) -> str:
        """One ``name: about`` line per peer, optional libraries named (for ``--help`` and docs)."""
        return "; ".join(
            f"{p.name}: {p.about}" + (f" (needs {p.needs})" if p.needs else "") for p in self.peers
        )

    def fit(self, data: PeerData, which: Sequence[str] | None = None) -> dict[str, Recommender]:
        """Fit the peers ``which`` (default :attr:`defaults`) on ``data``, in the order of ``which``.

        Raises
        ------
        InputError
            A name is not a peer of this set.
        MissingDependencyError
            A peer asked for needs a library that is not installed (the message has the install line).
        """
        chosen = [self.get(w) for w in (self.defaults if which is None else which)]
        for p in chosen:  # before any work
            err = p.missing()
            if err is not None:
                raise err
        return {p.name: p.fit(data) for p in chosen}
