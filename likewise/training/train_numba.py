"""The numba backend's passes over the corpus: blocks of sequences handed to the compiled kernels.

:func:`likewise.training.train.train` runs every backend's epochs through one protocol
(:class:`likewise.training.passes.Passes`); :mod:`likewise.training.train_torch` is the other
implementation. Here a *step* is a block of about ``BLOCK_TOKENS`` tokens: progress is
reported and a checkpoint may be written between blocks. The block layout (not the thread count) fixes
the random streams -- each block's chunks are seeded from the seed, the epoch and the block's first
sequence -- so a run resumed at a block boundary repeats the lost blocks exactly in deterministic mode.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._pages import release_pages
from .._progress import note
from ..errors import InputError
from ..kernels.params import KernelParams
from ..kernels.sampling import sequence_blocks
from .config import TrainConfig
from .passes import Backend

__all__ = [
    "BLOCK_TOKENS",
    "CHUNKS_PER_THREAD",
    "COMPILING",
    "DETERMINISTIC_CHUNKS",
    "NumbaKernel",
    "NumbaPasses",
    "TOKENS_PER_THREAD",
    "compile_notice",
    "epoch_seed",
    "numba_passes",
    "release_compiler_pages",
]

# Work is cut into blocks of about this many tokens: progress is reported between blocks, and the
# block layout (not the thread count) fixes the random streams, so deterministic runs do not depend on it.
BLOCK_TOKENS = 1 << 20
# Chunks per block and thread: threads claim them one at a time, so a thread the OS leaves out on a busy
# machine holds back one small chunk at a block's end; each chunk still spans tens of thousands of tokens.
CHUNKS_PER_THREAD = 16
DETERMINISTIC_CHUNKS = 8
# Without a thread count, one thread per this many tokens (a small corpus trains on one).
TOKENS_PER_THREAD = 50_000
#: What the progress says when numba compiles a kernel (a cold compile cache).
COMPILING = "compiling kernels, once; cached after"


def epoch_seed(seed: int, epoch: int) -> int:
    """The seed of pass ``epoch``'s stream family; blocks and chunks derive theirs inside the kernel."""
    return (seed * 1_000_003 + epoch) % (2**63)


@contextlib.contextmanager
def compile_notice(enabled: Any) -> Iterator[None]:
    """Within the block, say on stderr when numba starts compiling a kernel and how long it took.

    numba fires its ``numba:compile`` event only for a signature it neither holds nor finds in its disk
    cache, so a warm cache says nothing; a compile that compiles its callees is one compile here.

    Parameters
    ----------
    enabled : Progress or bool
        Listen and say it (the run's progress setting); False does nothing.
    """
    if not enabled:
        yield
        return
    from numba.core import event

    class Notice(event.Listener):
        depth, t0 = 0, 0.0

        def on_start(self, ev: event.Event) -> None:
            if self.depth == 0:
                self.t0 = time.perf_counter()
                note(f"{COMPILING} ...", enabled)
            self.depth += 1

        def on_end(self, ev: event.Event) -> None:
            self.depth -= 1
            if self.depth == 0:
                note(f"{COMPILING} ({time.perf_counter() - self.t0:.1f} s)", enabled)

    with event.install_listener("numba:compile", Notice()):
        yield


@dataclasses.dataclass(frozen=True)
class NumbaKernel:
    """What every pass of one numba backend hands its block kernel besides the corpus and the tables.

    Attributes
    ----------
    kernel : callable
        A block kernel of :func:`likewise.kernels.block_kernel`.
    params : KernelParams
        The run's kernel parameters, passed whole (their ``group``: contexts sharing one set of
        negatives, 1 for the per-pair kernels).
    keep_prob, neg_cum : ndarray
        Subsampling and negative-sampling tables.
    seed : int
        The run's seed (each pass's streams derive from it: :func:`epoch_seed`).
    n_chunks : int
        Chunks per block (the deterministic kernels' layout).
    progress : Progress or bool
        Say on stderr when a block's kernel compiles (:func:`compile_notice`).
    """

    kernel: Callable[..., tuple[int, int, int, float]]
    params: KernelParams
    keep_prob: np.ndarray
    neg_cum: np.ndarray
    seed: int
    n_chunks: int
    progress: Any = False


class NumbaPasses:
    """Epochs of the numba kernel over ``W`` and ``C``, trained in place.

    Parameters
    ----------
    ids, offsets : ndarray
        The packed corpus.
    W, C : ndarray of float32, shape (V, dim)
        The tables, trained in place.
    total_words : int
        Tokens of all planned passes (the learning-rate schedule's length).
    kernel : NumbaKernel
        The block kernel, its parameters, tables and layout.
    block_tokens : int, optional
        Tokens per block (default :data:`BLOCK_TOKENS`).
    """

    def __init__(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        W: np.ndarray,
        C: np.ndarray,
        total_words: int,
        kernel: NumbaKernel,
        block_tokens: int | None = None,
    ) -> None:
        self.ids, self.offsets, self.W, self.C = ids, offsets, W, C
        self.total_words, self.kernel = total_words, kernel
        self.blocks = sequence_blocks(offsets, block_tokens or BLOCK_TOKENS)
        release_pages(offsets, 0, len(offsets))  # the scan read every offset: keep none of them resident
        self.n_steps = len(self.blocks)
        self.n_tokens = int(offsets[-1])
        # neg_group=1 runs word2vec's own algorithm (per-pair updates, exact sigmoid: kernels/sgns.py);
        # larger groups the batched kernel, which takes the group size after max_context.
        self.params = kernel.params

    def lr_at(self, epoch: int, step: int) -> float:
        """The learning rate at the start of block ``step`` of pass ``epoch``."""
        s0 = self.blocks[step][0] if step < self.n_steps else len(self.offsets) - 1
        return self.params.lr_at(epoch * self.n_tokens + int(self.offsets[s0]), self.total_words)

    def epoch(
        self, epoch: int, start: int, counts: dict[str, float], bar: Any, on_step: Any
    ) -> dict[str, float]:
        """Train blocks ``start ..`` of pass ``epoch`` from ``counts`` (what it counted before ``start``);
        call ``on_step(blocks_done, totals)`` after each block; return the pass's counts."""
        k = self.kernel
        c = {name: counts.get(name, 0) for name in ("seen", "kept", "pairs", "loss")}
        seed = epoch_seed(k.seed, epoch)
        for step in range(start, self.n_steps):
            s0, s1 = self.blocks[step]
            words_before = epoch * self.n_tokens + int(self.offsets[s0])
            with compile_notice(k.progress):  # arrays of types the warm-up did not compile for
                r = k.kernel(
                    k.params, self.ids, self.offsets, s0, s1, self.W, self.C, k.keep_prob,
                    k.neg_cum, words_before, self.total_words, seed, k.n_chunks,
                )  # fmt: skip
            # a memory-mapped corpus keeps one block resident, not all it has read
            release_pages(self.ids, int(self.offsets[s0]), int(self.offsets[s1]))
            release_pages(self.offsets, s0, s1)
            c["seen"] += int(r[0])
            c["kept"] += int(r[1])
            c["pairs"] += int(r[2])
            c["loss"] += float(r[3])
            lr_now = self.lr_at(epoch, step)
            bar.update(int(r[0]), loss=f"{c['loss'] / max(c['pairs'], 1):.4f}", lr=f"{lr_now:.4g}")
            on_step(step + 1, lambda: dict(c))
        return c

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """The trained tables (the arrays themselves)."""
        return self.W, self.C

    def evaluate(self, fn: Callable[[np.ndarray, np.ndarray], Any]) -> Any:
        """``fn(W, C)``."""
        return fn(self.W, self.C)

    def shards(self) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """The tables as one shard each, and their dtypes (for a checkpoint)."""
        return {"W": self.W, "C": self.C}, {"W": "float32", "C": "float32"}

    def restore(self, rows: Callable[[str, np.ndarray], np.ndarray]) -> None:
        """Load every row from ``rows(name, ids)`` (a checkpoint's :meth:`Saved.rows`)."""
        everything = np.arange(len(self.W), dtype=np.int64)
        self.W[:] = rows("W", everything)
        self.C[:] = rows("C", everything)


def numba_passes(
    config: TrainConfig,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    n_tokens: int = 0,
    counts: np.ndarray | None = None,
    neg_types: np.ndarray | None = None,
    warm_like: tuple[np.ndarray, np.ndarray] | None = None,
    progress: bool = False,
) -> Backend:
    """The kernel ``config`` asks for, as a :class:`~likewise.training.passes.Backend`: ``make(ids,
    offsets, W, C, total_words)`` builds the passes, ``threads`` is what they use, ``layout`` what fixes
    the streams.

    Without ``config.threads`` a corpus of ``n_tokens`` gets one thread per :data:`TOKENS_PER_THREAD`
    (at least one, at most the cores). With ``neg_types`` (a type code per id) the typed per-pair kernel
    of :mod:`likewise.kernels.typed_negatives` draws each pair's negatives from its target's type. With
    ``warm_like`` (the corpus's ``ids`` and ``offsets``, before any table is allocated) the kernel is
    compiled for their array types on a one-row table at once, and :func:`release_compiler_pages` runs.
    With ``progress``, a kernel that compiles (a cold compile cache) says so on stderr
    (:func:`compile_notice`).
    """
    from .. import kernels

    if config.deterministic:
        threads, n_chunks = 1, DETERMINISTIC_CHUNKS
    else:
        import numba

        threads = config.threads or numba.config.NUMBA_NUM_THREADS
        # A small corpus gains nothing from more threads (a pass takes milliseconds) and its few rows
        # collide under hogwild, so by default it trains on one (and is then the same run to run).
        auto = max(1, int(n_tokens) // TOKENS_PER_THREAD) if n_tokens else threads
        threads = min(threads, numba.config.NUMBA_NUM_THREADS, config.threads or auto)
        numba.set_num_threads(threads)
        n_chunks = threads * CHUNKS_PER_THREAD
    group = int(config.neg_group)  # resolved by the plan (likewise.training.auto.plan_training)
    typed = None
    if neg_types is not None:  # typed negatives: the per-pair kernel, drawing from the centre's type
        if counts is None:
            raise InputError("typed negatives need the counts of the ids")
        typed = kernels.make_typed_tables(counts, neg_types, config.ns_exponent)
        group = 1
    kernel = kernels.block_kernel(group, serial=config.deterministic, typed=typed)

    if warm_like is not None and neg_types is None:
        # Compile (or load from numba's cache) before the tables exist, then hand LLVM's code pages back:
        # they are needed to compile, not to run, and would otherwise sit in the peak beside the tables.
        with compile_notice(progress):
            _warm(kernel, group, config, n_chunks, *warm_like, keep_prob)
        release_compiler_pages()

    setup = NumbaKernel(
        kernel, KernelParams.of(config, group), keep_prob, neg_cum, config.seed, n_chunks, progress
    )

    def make(
        ids: np.ndarray, offsets: np.ndarray, W: np.ndarray, C: np.ndarray, total_words: int
    ) -> NumbaPasses:
        return NumbaPasses(ids, offsets, W, C, total_words, setup)

    return Backend(
        make, threads, {"block_tokens": BLOCK_TOKENS, "deterministic_chunks": DETERMINISTIC_CHUNKS}
    )


def _warm(
    kernel: Callable[..., Any],
    group: int,
    config: TrainConfig,
    n_chunks: int,
    ids: np.ndarray,
    offsets: np.ndarray,
    keep_prob: np.ndarray,
) -> None:
    """Run ``kernel`` once on a two-token block over a one-row table of ``config.dim`` columns: the
    compiled specialisation (array types, read-only flags, literal width) is the real run's. Only the
    corpus arrays can be read-only maps; the others are built fresh, as the real ones are."""
    from ..kernels.sampling import make_neg_cum

    def like(a: np.ndarray, values: list[float]) -> np.ndarray:
        out = np.array(values, dtype=a.dtype)
        out.flags.writeable = a.flags.writeable
        return out

    one_neg = make_neg_cum(np.ones(1, dtype=np.int64), config.ns_exponent)  # neg_cum's own maker
    W = np.zeros((1, config.dim), dtype=np.float32)
    C = np.zeros((1, config.dim), dtype=np.float32)
    corpus = like(ids, [0, 0]), like(offsets, [0, 2])
    ones = np.ones(1, dtype=keep_prob.dtype)
    kernel(KernelParams.of(config, group), *corpus, 0, 1, W, C, ones, one_neg, 0, 2, config.seed, n_chunks)


def release_compiler_pages(library: str = "libllvmlite") -> int:
    """Hand back the resident pages of ``library``'s read-only file mappings; return the bytes released.

    LLVM (~70 MiB of code and constants once numba has compiled or loaded a function) is needed to
    compile, not to run compiled code: released pages are read again from the page cache if a later
    compilation needs them. Only mappings that are not writable and hold no private (copied-on-write)
    pages are touched, so relocated data is never reverted. Linux only (``/proc/self/smaps`` and
    ``madvise``); elsewhere, or if anything fails, nothing happens and 0 is returned.

    Parameters
    ----------
    library : str
        A substring of the mapped file's path.
    """
    if not sys.platform.startswith("linux"):
        return 0
    try:
        spans = _clean_mappings(library)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        released = 0
        for start, stop, resident in spans:
            if libc.madvise(start, stop - start, 4) == 0:  # 4: MADV_DONTNEED
                released += resident
        return released
    except (OSError, ValueError, AttributeError):
        return 0


def _clean_mappings(library: str) -> list[tuple[int, int, int]]:
    """``(start, stop, resident bytes)`` of each read-only mapping of ``library`` with no private pages."""
    maps: list[tuple[int, int, dict[str, int]]] = []  # the wanted mappings and their counters
    fields: dict[str, int] | None = None  # the counters of the mapping being read, if wanted
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as f:
        for line in f:
            head = line.split(maxsplit=5)
            if ":" not in head[0]:  # a mapping's first line: range, perms, offset, dev, inode[, path]
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                wanted = len(head) == 6 and library in head[5] and "w" not in head[1]
                fields = {} if wanted else None
                if fields is not None:
                    maps.append((lo, hi, fields))
            elif fields is not None and len(head) > 1:
                fields[head[0]] = int(head[1]) if head[1].isdigit() else 0
    return [
        (lo, hi, f.get("Rss:", 0) * 1024)
        for lo, hi, f in maps
        if not f.get("Anonymous:") and not f.get("Private_Dirty:")
    ]
