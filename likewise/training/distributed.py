"""Many processes, one run: where the process group comes from, and the few collectives training uses.

The one place a multi-process run is detected: ``torchrun`` (or any launcher that follows its contract)
sets ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` (and ``MASTER_ADDR`` / ``MASTER_PORT`` for the
rendezvous) in each process's environment; :func:`detect` reads them and nothing else does. Rank 0
alone logs and writes. Every collective below runs on all ranks in the same order and, when one fails
(a peer died: Gloo sees its socket close; or nobody answered within ``LIKEWISE_DIST_TIMEOUT`` seconds),
raises :class:`~likewise.errors.DistributedError` naming this rank and what it was doing, instead of
waiting forever.

torch is imported inside the functions, so this module costs nothing to import; the process group
backend is ``cpu:gloo,cuda:nccl`` on GPUs (NCCL for CUDA tensors, Gloo for the few CPU ones) and
``gloo`` on CPUs.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import DistributedError, InputError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "Dist",
    "all_gather_rows",
    "all_reduce_sum",
    "all_to_all_back",
    "all_to_all_rows",
    "barrier",
    "broadcast_object",
    "detect",
    "end",
    "gather_rows",
    "start",
    "torch_device",
]

#: Seconds a collective may wait for the other ranks before the run fails (``LIKEWISE_DIST_TIMEOUT``).
DEFAULT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Dist:
    """Where this process stands in the run.

    Parameters
    ----------
    rank, world, local_rank : int
        This process's rank, the number of processes, and its rank on this machine (its GPU).
    timeout_s : float
        How long a collective waits for the others before failing.
    """

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def main(self) -> bool:
        """True on rank 0, the one process that logs and writes."""
        return self.rank == 0

    @property
    def active(self) -> bool:
        """True when the run has more than one process."""
        return self.world > 1


def _env_int(env: Mapping[str, str], name: str, default: int, low: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"environment variable {name}={raw!r}, must be an integer >= {low}") from None
    if value < low:
        raise InputError(f"environment variable {name}={raw!r}, must be an integer >= {low}")
    return value


def detect(env: Mapping[str, str] | None = None) -> Dist:
    """This process's place in the run, from ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK``.

    Without them (a plain ``python`` or ``likewise`` command) the run is one process of rank 0.

    Raises
    ------
    InputError
        A variable that is not an integer, or ``RANK`` outside ``[0, WORLD_SIZE)``.
    """
    env = os.environ if env is None else env
    world = _env_int(env, "WORLD_SIZE", 1, 1)
    rank = _env_int(env, "RANK", 0, 0)
    local_rank = _env_int(env, "LOCAL_RANK", 0, 0)
    if rank >= world:
        raise InputError(f"environment variable RANK={rank} is outside [0, WORLD_SIZE={world})")
    raw = env.get("LIKEWISE_DIST_TIMEOUT", "")
    try:
        timeout = float(raw) if raw else DEFAULT_TIMEOUT_S
    except ValueError:
        timeout = -1.0
    if not timeout > 0:
        raise InputError(f"environment variable LIKEWISE_DIST_TIMEOUT={raw!r}, must be seconds > 0")
    return Dist(rank, world, local_rank, timeout)


def torch_device(name: str = "auto", local_rank: int = 0) -> Any:
    """The torch device for ``"auto"`` (the GPU of ``local_rank`` when CUDA is present, else the CPU),
    ``"cpu"``, ``"cuda"`` (the GPU of ``local_rank``) or ``"cuda:N"``.

    Raises
    ------
    InputError
        An unknown name, or CUDA asked for where torch sees no GPU.
    """
    import torch

    text = str(name).strip().lower()
    if text == "auto":
        text = "cuda" if torch.cuda.is_available() else "cpu"
    if text == "cpu":
        return torch.device("cpu")
    if text == "cuda" or (text.startswith("cuda:") and text[5:].isdigit()):
        if not torch.cuda.is_available():
            raise InputError(
                f"device == {name!r} but torch sees no CUDA GPU (torch {torch.__version__}, "
                f"built for CUDA {torch.version.cuda}); use device 'cpu' or 'auto'"
            )
        if text == "cuda":
            return torch.device("cuda", local_rank % max(1, torch.cuda.device_count()))
        return torch.device(text)
    raise InputError(f"device == {name!r}, must be 'cpu', 'cuda', 'cuda:N' or 'auto'")


def start(d: Dist, device: Any) -> bool:
    """Join the process group of a multi-process run (no-op for one process or when already joined).

    Returns
    -------
    bool
        True when this call created the group (the caller then closes it with ``end``).
    """
    if not d.active:
        return False
    import torch.distributed as dist

    if dist.is_initialized():
        if dist.get_world_size() != d.world or dist.get_rank() != d.rank:
            raise InputError(
                f"the process group has rank {dist.get_rank()} of {dist.get_world_size()} but the "
                f"environment says RANK={d.rank}, WORLD_SIZE={d.world}"
            )
        return False
    backend = "gloo"  # a CPU build of torch has no NCCL
    if device.type == "cuda":
        import torch

        torch.cuda.set_device(device)
        backend = "cpu:gloo,cuda:nccl"
    try:
        dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=d.timeout_s))
    except Exception as e:
        raise DistributedError(
            f"rank {d.rank} of {d.world}: joining the process group ({backend}) failed: {str(e)[:500]}"
        ) from e
    return True


def end(created: bool) -> None:
    """Leave the process group made by :func:`start` (when it made one)."""
    if created:
        import torch.distributed as dist

        with contextlib.suppress(Exception):
            dist.destroy_process_group()


@contextlib.contextmanager
def _guard(d: Dist, what: str) -> Iterator[None]:
    """Turn a failed collective into one clear :class:`DistributedError`."""
    try:
        yield
    except DistributedError:
        raise
    except Exception as e:  # Gloo / NCCL raise RuntimeError or torch.distributed.DistError
        raise DistributedError(
            f"rank {d.rank} of {d.world}: {what} failed: another process of the run has probably died "
            f"or stopped answering (each collective waits at most {d.timeout_s:g} s, "
            f"LIKEWISE_DIST_TIMEOUT); see the other ranks' logs. Cause: {str(e)[:500]}"
        ) from e


def all_to_all_rows(d: Dist, send: Any, send_counts: list[int], what: str) -> tuple[Any, list[int]]:
    """Send ``send[...]`` in consecutive parts of ``send_counts[r]`` rows to rank ``r``; return what each
    rank sent here, concatenated in rank order, and how many rows came from each."""
    import torch
    import torch.distributed as dist

    with _guard(d, what):
        counts = torch.tensor(send_counts, dtype=torch.int64, device=send.device)
        got = torch.empty_like(counts)
        dist.all_to_all_single(got, counts)
        recv_counts = [int(v) for v in got.tolist()]
        out = torch.empty((sum(recv_counts), *send.shape[1:]), dtype=send.dtype, device=send.device)
        dist.all_to_all_single(out, send.contiguous(), recv_counts, send_counts)
    return out, recv_counts


def all_to_all_back(d: Dist, send: Any, send_counts: list[int], recv_counts: list[int], what: str) -> Any:
    """The reply of :func:`all_to_all_rows`: ``send_counts`` rows back to each rank, whose sizes
    (``recv_counts``) are already known, so no counts travel."""
    import torch
    import torch.distributed as dist

    with _guard(d, what):
        out = torch.empty((sum(recv_counts), *send.shape[1:]), dtype=send.dtype, device=send.device)
        dist.all_to_all_single(out, send.contiguous(), recv_counts, send_counts)
    return out


def all_reduce_sum(d: Dist, values: Any, what: str) -> Any:
    """``values`` (a tensor) summed over the ranks, in place."""
    import torch.distributed as dist

    if d.active:
        with _guard(d, what):
            dist.all_reduce(values)
    return values


def broadcast_object(d: Dist, obj: Any, what: str) -> Any:
    """Rank 0's ``obj`` (JSON-like: small dicts, strings, numbers) on every rank."""
    import torch.distributed as dist

    if not d.active:
        return obj
    box = [obj if d.main else None]
    with _guard(d, what):
        dist.broadcast_object_list(box, src=0)
    return box[0]


def barrier(d: Dist, what: str) -> None:
    """Wait until every rank gets here."""
    import torch.distributed as dist

    if d.active:
        with _guard(d, what):
            dist.barrier()


def _interleave(parts: list[Any], n_rows: int, world: int) -> Any:
    """Full table from row shards: shard ``r`` holds rows ``r, r + world, ...`` (padded to equal length)."""
    import torch

    full = torch.empty((n_rows, *parts[0].shape[1:]), dtype=parts[0].dtype, device=parts[0].device)
    for r, part in enumerate(parts):
        full[r::world] = part[: len(range(r, n_rows, world))]
    return full


def gather_rows(d: Dist, shard: Any, n_rows: int, what: str) -> Any | None:
    """The full table on rank 0 (None elsewhere) from each rank's shard of rows ``rank::world``."""
    import torch
    import torch.distributed as dist

    if not d.active:
        return shard
    longest = -(-n_rows // d.world)
    padded = torch.zeros((longest, *shard.shape[1:]), dtype=shard.dtype, device=shard.device)
    padded[: len(shard)] = shard
    parts = [torch.empty_like(padded) for _ in range(d.world)] if d.main else None
    with _guard(d, what):
        dist.gather(padded, parts, dst=0)
    return _interleave(parts, n_rows, d.world) if d.main else None


def all_gather_rows(d: Dist, shard: Any, n_rows: int, what: str) -> Any:
    """The full table on every rank from each rank's shard of rows ``rank::world``."""
    import torch
    import torch.distributed as dist

    if not d.active:
        return shard
    longest = -(-n_rows // d.world)
    padded = torch.zeros((longest, *shard.shape[1:]), dtype=shard.dtype, device=shard.device)
    padded[: len(shard)] = shard
    parts = [torch.empty_like(padded) for _ in range(d.world)]
    with _guard(d, what):
        dist.all_gather(parts, padded)
    return _interleave(parts, n_rows, d.world)
