"""The torch backend's passes over the corpus, in one process or in many under ``torchrun``.

:func:`likewise.training.train.train` chooses it (``backend="torch"``) and runs its epochs exactly as it
runs the numba kernel's, through the same protocol (:class:`likewise.training.passes.Passes`); this
module holds what is particular to torch:

* **Steps.** The corpus is cut into steps of about ``batch_tokens`` tokens of whole sequences
  (:func:`likewise.kernels.sequence_blocks`; smaller for a small corpus, see :data:`MIN_STEPS`), the
  same cut whatever the number of processes. Each step
  is one update of the tables (:mod:`likewise.kernels.minibatch`): all its pairs read the tables as they
  were at its start. The learning rate decays linearly with the corpus tokens before the step.
* **Dealing.** A step's sequences are cut into ``world`` pieces of about equal tokens, and piece
  ``(rank - epoch) mod world`` goes to ``rank``: the corpus is split by token count and dealt again,
  differently, every epoch. A piece may be empty (one long sequence); its rank still takes part in
  every collective of the step, with nothing to send, so nothing waits on it.
* **Sharding.** Rank ``r`` holds rows ``r, r + world, ...`` of both tables (owner = id mod world),
  as one tensor: input rows first, output rows after. A step's distinct row keys are sent to their
  owners with one all-to-all, the rows come back with a second, the step's updates go back to the
  owners with a third, and each owner adds them (``index_add_``). One process is the same code without
  the collectives.
* **One answer.** Draws depend on corpus positions only (:mod:`likewise.kernels.draws`) and updates
  are sums over the step, so 1 and N processes train the same vectors up to the order of float
  additions, and a resumed run repeats the steps it lost exactly.

Rank 0 alone shows progress; :func:`likewise.training.train.train` returns the space on rank 0 only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels.draws import epoch_keys, round_keys
from ..kernels.params import KernelParams
from ..kernels.sampling import sequence_blocks
from . import distributed
from .config import TrainConfig
from .distributed import Dist
from .passes import Backend

__all__ = ["MIN_STEPS", "TorchPasses", "deal", "step_tokens", "torch_passes"]

#: A pass has at least this many steps. A step sums its updates without feedback, so a step that holds
#: a large share of a small corpus moves every row by many updates at once. Measured: the seed shop of
#: tests/test_defaults.py (1,274 tokens) in one step per pass ends at a loss of 12.3 per pair against
#: the numba kernel's 1.9 (in 64 steps: 1.95-2.0); planted groups (10 x 10 items, 60 % noise, 6,750
#: tokens, 10 passes, 3 seeds) reach label purity 0.889 in 16 steps per pass, 0.9447 in 64, and the
#: numba kernel 0.9447.
MIN_STEPS = 64


def step_tokens(n_tokens: int, batch_tokens: int) -> int:
    """Tokens per step: ``batch_tokens``, or less so that a pass has at least :data:`MIN_STEPS` steps."""
    return max(1, min(batch_tokens, -(-n_tokens // MIN_STEPS)))


def deal(offsets: np.ndarray, s0: int, s1: int, world: int) -> np.ndarray:
    """Cut sequences ``[s0, s1)`` into ``world`` consecutive pieces of about equal tokens.

    Returns
    -------
    ndarray of int64, shape (world + 1,)
        Piece ``p`` is sequences ``[bounds[p], bounds[p + 1])``; pieces may be empty.
    """
    base = int(offsets[s0])
    tokens = int(offsets[s1]) - base
    targets = base + (np.arange(world + 1, dtype=np.int64) * tokens) // world
    bounds = s0 + np.searchsorted(offsets[s0 : s1 + 1], targets, side="left")
    bounds = np.minimum(bounds, s1).astype(np.int64)
    bounds[0], bounds[-1] = s0, s1
    return bounds


class TorchPasses:
    """Epochs of minibatch SGNS on this rank's shard of the tables.

    Parameters
    ----------
    ids, offsets : ndarray
        The packed corpus (every rank holds it, usually memory-mapped).
    W, C : ndarray of float32, shape (V, dim)
        Starting tables; this rank keeps rows ``rank::world``.
    keep_prob, neg_cum : ndarray
        Subsampling and negative-sampling tables of the whole corpus (negatives follow the global
        unigram distribution on every rank).
    config : TrainConfig
    total_words : int
        Tokens of all planned passes (the learning-rate schedule's length).
    dist : Dist
    device : torch.device
    """

    def __init__(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        W: np.ndarray,
        C: np.ndarray,
        keep_prob: np.ndarray,
        neg_cum: np.ndarray,
        config: TrainConfig,
        total_words: int,
        dist: Dist,
        device: Any,
    ) -> None:
        import torch

        self.torch = torch
        self.ids, self.offsets = ids, offsets
        self.config, self.dist, self.device = config, dist, device
        self.n_items, self.dim = W.shape
        self.here = len(range(dist.rank, self.n_items, dist.world))  # rows this rank owns, per table
        self.dtype = torch.bfloat16 if config.table_dtype == "bfloat16" else torch.float32
        shard = np.concatenate([W[dist.rank :: dist.world], C[dist.rank :: dist.world]])
        self.S = torch.from_numpy(shard).to(device=device, dtype=self.dtype)
        self.keep_prob = torch.from_numpy(np.asarray(keep_prob, dtype=np.float32)).to(device)
        self.neg_cum = torch.from_numpy(np.asarray(neg_cum, dtype=np.int64)).to(device)
        self.steps = sequence_blocks(offsets, step_tokens(int(offsets[-1]), config.batch_tokens))
        self.n_steps = len(self.steps)
        self.n_tokens = int(offsets[-1])
        self.total_words = total_words
        self.params = KernelParams.of(config)  # neg_group resolved by the plan

    # --- the tables ---------------------------------------------------------------------------------

    def _local(self, keys: Any) -> Any:
        """Row of ``S`` holding global key ``id`` (input table) or ``V + id`` (output table)."""
        table = keys >= self.n_items
        return (keys - table * self.n_items) // self.dist.world + table * self.here

    def _round_keys(self, step: int):
        """Stochastic rounding keys of the rows of ``S``: a hash of the step and of each element's
        global (table, id, column), so the rounding does not depend on the number of processes."""
        from ..kernels.minibatch import token_keys

        k0, k1 = round_keys(self.config.seed, step)
        cols = self.torch.arange(self.dim, device=self.device)

        def keys(rows: Any) -> Any:
            table = rows // self.here
            gid = (rows % self.here) * self.dist.world + self.dist.rank
            elem = ((table * self.n_items + gid) * self.dim)[:, None] + cols[None, :]
            return token_keys(elem, k0, k1)

        return keys

    def _fetch(self, keys: Any) -> tuple[Any, Any]:
        """The float32 rows of ``keys`` (from their owners), and what :meth:`_push` needs to answer."""
        d = self.dist
        if not d.active:
            return self.S[keys].float(), None
        owner = (keys % self.n_items) % d.world
        order = self.torch.argsort(owner, stable=True)
        send_counts = [int(v) for v in self.torch.bincount(owner, minlength=d.world).tolist()]
        asked, recv_counts = distributed.all_to_all_rows(d, keys[order], send_counts, "asking for rows")
        local = self._local(asked)
        rows = distributed.all_to_all_back(d, self.S[local].float(), recv_counts, send_counts, "sending rows")
        mine = self.torch.empty_like(rows)
        mine[order] = rows
        return mine, (order, send_counts, recv_counts, local)

    def _push(self, keys: Any, delta: Any, updates: Any, route: Any, step: int) -> None:
        """Add ``delta`` (from ``updates`` pair updates per row) to the rows of ``keys`` at their owners."""
        from ..kernels.minibatch import add_rows

        sr = self._round_keys(step) if self.dtype != self.torch.float32 else None
        cap = float(self.config.max_row_updates)
        if route is None:
            add_rows(self.S, keys, delta, updates, cap, sr)
            return
        order, send_counts, recv_counts, local = route
        both = self.torch.cat([delta, updates[:, None]], 1)[order]  # the counts travel as one more column
        got = distributed.all_to_all_back(self.dist, both, send_counts, recv_counts, "sending updates")
        add_rows(self.S, local, got[:, :-1], got[:, -1], cap, sr)

    # --- one pass -----------------------------------------------------------------------------------

    def epoch(
        self, epoch: int, start: int, counts: dict[str, float], bar: Any, on_step: Any
    ) -> dict[str, float]:
        """Train steps ``start ..`` of pass ``epoch``; return the pass's counts summed over the ranks.

        ``counts`` holds what the pass had counted before ``start`` (a resumed run), all ranks together
        (rank 0 carries it); ``on_step(step_done, totals)`` is called after every step, where
        ``totals()`` returns the counts so far summed over the ranks (a collective: all ranks call it
        together or none does).
        """
        from ..kernels import minibatch as K

        torch, d, cfg = self.torch, self.dist, self.config
        k0, k1 = epoch_keys(cfg.seed, epoch)
        acc = torch.zeros(4, dtype=torch.float64, device=self.device)  # seen, kept, pairs, loss
        if d.main:
            before = [float(counts.get(k, 0.0)) for k in ("seen", "kept", "pairs", "loss")]
            acc += torch.tensor(before, dtype=torch.float64, device=self.device)
        piece = (d.rank - epoch) % d.world

        def totals() -> dict[str, float]:
            summed = distributed.all_reduce_sum(d, acc.clone(), "summing the counters")
            return dict(zip(("seen", "kept", "pairs", "loss"), summed.tolist(), strict=True))

        for step in range(start, self.n_steps):
            s0, s1 = self.steps[step]
            cut = deal(self.offsets, s0, s1, d.world)
            a, b = int(cut[piece]), int(cut[piece + 1])
            t0, t1 = int(self.offsets[a]), int(self.offsets[b])
            ids = torch.from_numpy(np.asarray(self.ids[t0:t1], dtype=np.int64)).to(self.device)
            lengths = torch.from_numpy(np.diff(self.offsets[a : b + 1]).astype(np.int64)).to(self.device)
            p = self.params
            batch = K.build_batch(
                ids, lengths, t0, self.keep_prob, self.neg_cum, *p.sampling(), p.group, k0, k1
            )
            lr = float(np.float32(self.lr_at(epoch, step)))
            w_ids, ctx, c_ids, tgt = K.batch_rows(batch)
            keys = torch.cat([w_ids, c_ids + self.n_items])
            rows, route = self._fetch(keys)
            dw, dc, loss, nw, nc = K.sgns_grads(
                rows[: len(w_ids)], rows[len(w_ids) :], ctx, tgt, batch.tgt_ok, lr
            )
            self._push(keys, torch.cat([dw, dc]), torch.cat([nw, nc]), route, epoch * self.n_steps + step)
            acc[0] += batch.seen
            acc[1] += batch.kept
            acc[2] += batch.pairs
            acc[3] += loss
            bar.update(int(self.offsets[s1]) - int(self.offsets[s0]))
            on_step(step + 1, totals)
        return totals()

    def lr_at(self, epoch: int, step: int) -> float:
        """The learning rate of step ``step`` of pass ``epoch``."""
        s0 = self.steps[step][0] if step < self.n_steps else len(self.offsets) - 1
        return self.params.lr_at(epoch * self.n_tokens + int(self.offsets[s0]), self.total_words)

    # --- tables out and in --------------------------------------------------------------------------

    def _numpy(self, t: Any) -> np.ndarray:
        return t.float().cpu().numpy()

    def tables(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The full float32 tables on rank 0; None on the other ranks."""
        W = distributed.gather_rows(self.dist, self.S[: self.here], self.n_items, "gathering the input table")
        C = distributed.gather_rows(
            self.dist, self.S[self.here :], self.n_items, "gathering the output table"
        )
        if not self.dist.main:
            return None
        return self._numpy(W), self._numpy(C)

    def evaluate(self, fn: Any) -> Any:
        """``fn(W, C)`` computed on rank 0 and sent to every rank (so all take the same decision)."""
        full = self.tables()
        value = fn(*full) if full is not None else None
        return distributed.broadcast_object(self.dist, value, "sharing the held-out score")

    def shards(self) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """This rank's rows of each table as NumPy (bfloat16 as its uint16 bits), and their dtypes."""
        out = {}
        for name, part in (("W", self.S[: self.here]), ("C", self.S[self.here :])):
            if self.dtype == self.torch.float32:
                out[name] = part.cpu().numpy().copy()
            else:
                out[name] = part.cpu().view(self.torch.int16).numpy().view(np.uint16).copy()
        return out, {"W": self.config.table_dtype, "C": self.config.table_dtype}

    def restore(self, rows: Any) -> None:
        """Load this rank's rows from ``rows(name, ids)`` (a checkpoint's :meth:`Saved.rows`)."""
        torch = self.torch
        mine = np.arange(self.dist.rank, self.n_items, self.dist.world, dtype=np.int64)
        parts = []
        for name in ("W", "C"):
            got = rows(name, mine)
            if got.dtype == np.uint16:
                parts.append(torch.from_numpy(got.view(np.int16)).view(torch.bfloat16))
            else:
                parts.append(torch.from_numpy(got))
        self.S = torch.cat(parts).to(device=self.device, dtype=self.dtype)


def torch_passes(
    config: TrainConfig, keep_prob: np.ndarray, neg_cum: np.ndarray, dist: Dist, device: Any
) -> Backend:
    """The :class:`~likewise.training.passes.Backend` of torch, as
    :func:`likewise.training.train_numba.numba_passes` gives the numba kernel's.

    On the CPU torch runs on ``config.threads`` threads, one by default: a step is many small operations,
    and waking threads for each costs more than they give (the seed shop of tests/test_defaults.py on
    this project's shared 2-core machine: 3.5 s on one thread, 39 s on two). ``deterministic`` runs
    one thread (and asks CUDA for deterministic kernels: best effort, not measured here; cuBLAS also
    wants ``CUBLAS_WORKSPACE_CONFIG=:4096:8``).
    """
    import torch

    if config.deterministic and device.type == "cuda":
        torch.use_deterministic_algorithms(True, warn_only=True)
    if device.type == "cpu" or config.deterministic:
        torch.set_num_threads(1 if config.deterministic else (config.threads or 1))

    def make(
        ids: np.ndarray, offsets: np.ndarray, W: np.ndarray, C: np.ndarray, total_words: int
    ) -> TorchPasses:
        return TorchPasses(ids, offsets, W, C, keep_prob, neg_cum, config, total_words, dist, device)

    layout = {"draws": "lowbias32 v1", "batch_tokens": config.batch_tokens}
    return Backend(make, torch.get_num_threads(), layout)
