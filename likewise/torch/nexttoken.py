"""The next-token model of makemore (Bengio et al. 2003): predict an item from the k items before it.

Read top to bottom:

1. :class:`NextTokenConfig` -- the hyper-parameters, validated.
2. :func:`next_token_vocab` and :func:`build_examples` -- sequences -> a vocabulary whose id 0 is the
   boundary token (``"."``, as in makemore, so names over a-z give 27 tokens) and the (context, next)
   pairs: each sequence is padded on the left with ``context`` boundaries and ends with one.
3. :class:`NextTokenModel` -- the k context ids -> their table rows concatenated -> ``tanh`` hidden layer
   -> logits over the vocabulary. With ``tied=True`` the output layer reuses the input table: the hidden
   state is projected to ``dim`` and scored against every row (``h @ W_proj @ table.T + b``).
4. :func:`train_next` -- cross-entropy, Adam, minibatches drawn from one seeded generator, a seeded split
   of whole sequences into train and validation; reports both losses (mean nats per token).
5. :func:`sample`, :func:`predict_next`, :func:`sweep_dims`.
6. :func:`save_model` / :func:`load_model` -- plain files: the input table as a normal likewise space in
   ``space/`` (so ``likewise similar MODEL/space ITEM`` works), the other tensors as ``.npy`` and a JSON
   manifest with sha256 checksums. Nothing is pickled.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .._progress import bar as progress_bar
from ..data.vocab import Vocab
from ..errors import InputError
from .embedding import EmbeddingTable, resolve_device

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "NextTokenConfig",
    "NextTokenModel",
    "TrainedNextToken",
    "build_examples",
    "next_token_vocab",
    "predict_next",
    "sample",
    "split_sequences",
    "sweep_dims",
    "train_next",
]

FORMAT = "likewise.nexttoken"
FORMAT_VERSION = 1
_MANIFEST = "manifest.json"
_EVAL_CHUNK = 65_536  # examples per forward pass when measuring a loss


# --------------------------------------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NextTokenConfig:
    """Hyper-parameters of the next-token model and its training.

    Parameters
    ----------
    context : int
        How many previous items the model sees (makemore's ``block_size``).
    dim : int
        Length of each item vector.
    hidden : int
        Units in the tanh layer.
    tied : bool
        Score the output against the input table instead of a separate output matrix.
    steps : int
        Adam steps (one minibatch each).
    batch_size : int
        Examples per step.
    lr : float
        Adam learning rate; it drops tenfold for the last quarter of the steps.
    val_fraction : float
        Share of the sequences held out for the validation loss (0 for none).
    seed : int
        Seeds the split, the initial weights, the minibatches and nothing else.
    boundary : str
        The start/end token; no item may equal it.
    """

    context: int = 3
    dim: int = 2
    hidden: int = 100
    tied: bool = False
    steps: int = 20_000
    batch_size: int = 128
    lr: float = 0.01
    val_fraction: float = 0.1
    seed: int = 0
    boundary: str = "."

    def __post_init__(self) -> None:
        for name in ("context", "dim", "hidden", "steps", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"{name} == {v!r}, must be an int >= 1")
        if not (isinstance(self.lr, int | float) and math.isfinite(self.lr) and self.lr > 0):
            raise InputError(f"lr == {self.lr!r}, must be a finite number > 0")
        if not (isinstance(self.val_fraction, int | float) and 0 <= self.val_fraction < 1):
            raise InputError(f"val_fraction == {self.val_fraction!r}, must be in [0, 1)")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise InputError(f"seed == {self.seed!r}, must be an int")
        if not isinstance(self.boundary, str) or not self.boundary:
            raise InputError(f"boundary == {self.boundary!r}, must be a non-empty str")

    @classmethod
    def from_dict(cls, d: dict) -> NextTokenConfig:
        """Rebuild from :func:`dataclasses.asdict` output; unknown keys are an error."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise InputError(f"unknown next-token config keys {unknown!r}; known: {sorted(names)!r}")
        return cls(**d)


# --------------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------------


def _check_sequences(sequences: Sequence[Sequence[str]]) -> list[list[str]]:
    if isinstance(sequences, str | bytes):
        raise InputError("sequences must be a list of sequences of item keys, got a single str")
    out = [list(s) for s in sequences]
    if not out or not any(out):
        raise InputError("sequences is empty: the next-token model needs at least one non-empty sequence")
    return out


def next_token_vocab(sequences: Sequence[Sequence[str]], boundary: str = ".") -> Vocab:
    """Vocabulary for next-token training: id 0 is ``boundary``, then items by descending count.

    The boundary's count is the number of non-empty sequences (each ends once).
    """
    seqs = _check_sequences(sequences)
    counts = Counter(k for s in seqs for k in s)
    if boundary in counts:
        raise InputError(
            f"item {boundary!r} occurs in the data but is the boundary token; pick another boundary"
        )
    items = sorted(counts.items(), key=lambda kc: (-kc[1], kc[0]))
    keys = [boundary] + [str(k) for k, _ in items]
    return Vocab(keys, [sum(1 for s in seqs if s)] + [c for _, c in items])


def build_examples(
    sequences: Sequence[Sequence[str]], vocab: Vocab, context: int
) -> tuple[np.ndarray, np.ndarray]:
    """The (previous ``context`` ids, next id) pairs of every sequence, makemore style.

    Each sequence is read as ``[b]*context + items + [b]`` with ``b`` the boundary (id 0), so a sequence
    of n items gives n + 1 examples and the last one teaches the model to stop.

    Returns
    -------
    X : ndarray of int64, shape [N, context]
    Y : ndarray of int64, shape [N]
    """
    xs, ys = [], []
    for s in sequences:
        if not s:
            continue
        ids = np.concatenate([np.zeros(context, np.int64), vocab.ids(s).astype(np.int64), [0]])
        windows = np.lib.stride_tricks.sliding_window_view(ids, context + 1)
        xs.append(windows[:, :context])
        ys.append(windows[:, context])
    if not xs:
        return np.zeros((0, context), np.int64), np.zeros(0, np.int64)
    return np.ascontiguousarray(np.concatenate(xs)), np.ascontiguousarray(np.concatenate(ys))


def split_sequences(
    sequences: Sequence[Sequence[str]], val_fraction: float, seed: int
) -> tuple[list[Sequence[str]], list[Sequence[str]]]:
    """Seeded split of whole sequences (a name is never half in train, half in validation)."""
    n = len(sequences)
    n_val = min(n - 1, max(1, round(val_fraction * n))) if val_fraction > 0 and n >= 2 else 0
    perm = np.random.default_rng(seed).permutation(n)
    val = set(perm[:n_val].tolist())
    return [s for i, s in enumerate(sequences) if i not in val], [sequences[i] for i in sorted(val)]


# --------------------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------------------


class NextTokenModel(nn.Module):
    """``context`` ids -> table rows concatenated -> tanh(hidden) -> logits over ``vocab_size`` items.

    Parameters
    ----------
    vocab_size : int
        Rows of the table and width of the logits.
    config : NextTokenConfig
        ``context``, ``dim``, ``hidden`` and ``tied`` are used.
    """

    def __init__(self, vocab_size: int, config: NextTokenConfig) -> None:
        super().__init__()
        self.context = config.context
        self.tied = config.tied
        self.table = EmbeddingTable(vocab_size, config.dim)
        self.hidden = nn.Linear(config.context * config.dim, config.hidden)
        if config.tied:
            self.proj = nn.Linear(config.hidden, config.dim, bias=False)
            self.out_bias = nn.Parameter(torch.zeros(vocab_size))
        else:
            self.out = nn.Linear(config.hidden, vocab_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``[batch, vocab_size]`` for context ids ``x`` of shape ``[batch, context]``."""
        if x.ndim != 2 or x.shape[1] != self.context:
            raise InputError(f"context ids must have shape [batch, {self.context}], got {tuple(x.shape)}")
        h = torch.tanh(self.hidden(self.table(x).flatten(1)))
        if self.tied:
            return self.proj(h) @ self.table.weight.T + self.out_bias
        return self.out(h)


@dataclass
class TrainedNextToken:
    """A trained next-token model with what is needed to use and save it.

    Attributes
    ----------
    model : NextTokenModel
    vocab : Vocab
        Id 0 is the boundary token.
    config : NextTokenConfig
    train_loss, val_loss : float
        Mean cross-entropy (nats per token) on the train and validation examples at the end;
        ``val_loss`` is NaN when nothing was held out.
    history : list of dict
        ``{"step", "train_loss", "val_loss"}`` at each evaluation.
    meta : dict
        Free JSON data (how items were read, sizes, seconds, device).
    """

    model: NextTokenModel
    vocab: Vocab
    config: NextTokenConfig
    train_loss: float
    val_loss: float
    history: list[dict] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    @property
    def device(self) -> torch.device:
        return self.model.table.weight.device

    def to_embeddings(self) -> Any:
        """The input table as a likewise :class:`~likewise.space.embeddings.Embeddings` space."""
        meta = {
            "source": "likewise.torch next-token model (input table)",
            "train_loss": self.train_loss,
            "val_loss": None if math.isnan(self.val_loss) else self.val_loss,
            **{k: v for k, v in self.meta.items() if k in ("items", "sequences", "examples")},
            "nexttoken_config": asdict(self.config),  # not a TrainConfig: the space's config is skip-gram's
        }
        return self.model.table.to_embeddings(self.vocab, meta=meta)


# --------------------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------------------


@torch.no_grad()
def _mean_loss(model: NextTokenModel, x: torch.Tensor, y: torch.Tensor) -> float:
    if len(y) == 0:
        return float("nan")
    total = 0.0
    for start in range(0, len(y), _EVAL_CHUNK):
        logits = model(x[start : start + _EVAL_CHUNK])
        total += float(F.cross_entropy(logits, y[start : start + _EVAL_CHUNK], reduction="sum"))
    return total / len(y)


def train_next(
    sequences: Sequence[Sequence[str]],
    config: NextTokenConfig | None = None,
    *,
    device: str | torch.device = "cpu",
    eval_every: int = 0,
    callback: Callable[[dict], None] | None = None,
    progress: bool | None = None,
    **overrides: Any,
) -> TrainedNextToken:
    """Train the next-token model on ``sequences`` of item keys.

    Parameters
    ----------
    sequences : sequence of sequences of str
        For names: each name as a str (its characters are the items); for sessions: lists of item keys.
    config : NextTokenConfig, optional
        Defaults to ``NextTokenConfig()``; ``overrides`` replace single fields (``dim=10``).
    device : {"cpu", "cuda", "auto"} or torch.device
    eval_every : int
        Also measure both losses every this many steps (0: only at the end); they go to ``history``.
    callback : callable, optional
        Called with each history record.
    progress : bool, optional
        Show a bar of the steps with the running loss (tqdm when installed); default: when stderr is a
        terminal.

    Returns
    -------
    TrainedNextToken
        The model (on ``device``), vocabulary, config, final train and validation losses.

    Notes
    -----
    Same seed, same data and same device give the same model: the split uses NumPy's generator, the
    initial weights come from ``torch.manual_seed(seed)`` inside ``torch.random.fork_rng`` (the caller's
    global RNG state is left alone) and the minibatch ids from a CPU ``torch.Generator``.
    """
    cfg = replace(config or NextTokenConfig(), **overrides) if overrides else (config or NextTokenConfig())
    dev = resolve_device(device)
    seqs = _check_sequences(sequences)
    vocab = next_token_vocab(seqs, cfg.boundary)
    train_seqs, val_seqs = split_sequences(seqs, cfg.val_fraction, cfg.seed)
    xtr, ytr = (torch.from_numpy(a).to(dev) for a in build_examples(train_seqs, vocab, cfg.context))
    xva, yva = (torch.from_numpy(a).to(dev) for a in build_examples(val_seqs, vocab, cfg.context))
    if len(ytr) == 0:
        raise InputError("no training examples: every training sequence is empty")

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = NextTokenModel(len(vocab), cfg)
    model.to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    gen = torch.Generator(device="cpu").manual_seed(cfg.seed)
    decay_at = (3 * cfg.steps) // 4  # the last quarter at lr/10 settles the loss (makemore does the same)
    history: list[dict] = []
    t0 = time.perf_counter()

    def record(step: int) -> None:
        model.eval()
        rec = {
            "step": step,
            "train_loss": _mean_loss(model, xtr, ytr),
            "val_loss": _mean_loss(model, xva, yva),
        }
        model.train()
        history.append(rec)
        if callback is not None:
            callback(rec)

    show = sys.stderr.isatty() if progress is None else bool(progress)
    bar = progress_bar(cfg.steps, f"train-next dim {cfg.dim}", "step", enabled=show)
    every = max(1, cfg.steps // 200)  # a few hundred bar updates, whatever the step count
    model.train()
    for step in range(cfg.steps):
        if step == decay_at:
            for g in opt.param_groups:
                g["lr"] = cfg.lr / 10
        idx = torch.randint(0, len(ytr), (cfg.batch_size,), generator=gen).to(dev)
        loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if show and ((step + 1) % every == 0 or step + 1 == cfg.steps):
            bar.update(every if (step + 1) % every == 0 else (step + 1) % every, loss=f"{loss.item():.3f}")
        if eval_every and (step + 1) % eval_every == 0 and step + 1 < cfg.steps:
            record(step + 1)
    bar.close()
    record(cfg.steps)
    model.eval()
    meta = {
        "sequences": len(seqs),
        "train_sequences": len(train_seqs),
        "val_sequences": len(val_seqs),
        "examples": len(ytr) + len(yva),
        "items": len(vocab),
        "seconds": time.perf_counter() - t0,
        "device": str(dev),
    }
    return TrainedNextToken(
        model, vocab, cfg, history[-1]["train_loss"], history[-1]["val_loss"], history=history, meta=meta
    )


def sweep_dims(
    sequences: Sequence[Sequence[str]],
    dims: Sequence[int],
    *,
    context: int = 3,
    hidden: int = 100,
    steps: int = 20_000,
    seed: int = 0,
    device: str | torch.device = "cpu",
    progress: bool | None = None,
    **overrides: Any,
) -> list[dict]:
    """Train one model per vector length, everything else equal, and report the losses.

    ``progress`` is passed to :func:`train_next` (one bar per length).

    Returns
    -------
    list of dict
        ``{"dim", "train_loss", "val_loss", "weights"}`` per entry of ``dims``, in order; ``weights`` is
        the number of trainable parameters of that model.
    """
    if not dims:
        raise InputError("dims is empty: give at least one vector length")
    rows = []
    for d in dims:
        cfg = NextTokenConfig(context=context, dim=d, hidden=hidden, steps=steps, seed=seed, **overrides)
        res = train_next(sequences, cfg, device=device, progress=progress)
        n_params = sum(p.numel() for p in res.model.parameters())
        rows.append({"dim": d, "train_loss": res.train_loss, "val_loss": res.val_loss, "weights": n_params})
    return rows


# --------------------------------------------------------------------------------------------------------
# Using a model
# --------------------------------------------------------------------------------------------------------


@torch.no_grad()
def sample(
    trained: TrainedNextToken,
    n: int = 20,
    *,
    seed: int = 0,
    temperature: float = 1.0,
    max_len: int = 50,
) -> list[list[str]]:
    """Generate ``n`` sequences: start from boundaries, draw the next item until a boundary comes.

    Parameters
    ----------
    n : int
        How many sequences.
    seed : int
        Seeds a CPU generator used for every draw (the caller's RNG state is untouched).
    temperature : float
        Divides the logits (below 1: safer, above 1: wilder).
    max_len : int
        Stop a sequence after this many items even if no boundary was drawn.

    Returns
    -------
    list of list of str
        The sequences without the boundary token.
    """
    for name, v in (("n", n), ("max_len", max_len)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError(f"{name} == {v!r}, must be an int >= 1")
    if not (isinstance(temperature, int | float) and math.isfinite(temperature) and temperature > 0):
        raise InputError(f"temperature == {temperature!r}, must be a finite number > 0")
    model, keys = trained.model, trained.vocab.keys
    model.eval()
    gen = torch.Generator(device="cpu").manual_seed(seed)
    ctx = torch.zeros((n, model.context), dtype=torch.int64, device=trained.device)
    out: list[list[str]] = [[] for _ in range(n)]
    alive = torch.ones(n, dtype=torch.bool)
    for _ in range(max_len):
        probs = torch.softmax(model(ctx) / temperature, dim=1).to("cpu", torch.float64)
        nxt = torch.multinomial(probs, 1, generator=gen).squeeze(1)
        for i in torch.nonzero(alive & (nxt != 0)).flatten().tolist():
            out[i].append(keys[int(nxt[i])])
        alive &= nxt != 0
        if not alive.any():
            break
        ctx = torch.cat([ctx[:, 1:], nxt.to(ctx.device).unsqueeze(1)], dim=1)
    return out


@torch.no_grad()
def predict_next(
    trained: TrainedNextToken, items: Sequence[str], k: int = 10, *, include_boundary: bool = False
) -> list[tuple[str, float]]:
    """The ``k`` most probable next items after ``items`` (a session or a name prefix), best first.

    Only the last ``context`` items matter; a shorter prefix is padded with boundaries on the left, as it
    was in training (so it is read as the start of a sequence).

    Parameters
    ----------
    items : sequence of str
        Item keys; unknown keys raise :class:`~likewise.errors.UnknownItemError` with suggestions.
    k : int
        How many.
    include_boundary : bool
        Also rank the boundary token (the probability that the sequence ends here).

    Returns
    -------
    list of (str, float)
        ``(item, probability)`` pairs.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k == {k!r}, must be an int >= 1")
    if isinstance(items, str):
        raise InputError(
            "items must be a sequence of item keys, not one str (use list('abc') for characters)"
        )
    model = trained.model
    ids = trained.vocab.ids(list(items)).astype(np.int64)[-model.context :]
    ctx = np.concatenate([np.zeros(model.context - len(ids), np.int64), ids])
    model.eval()
    probs = torch.softmax(model(torch.from_numpy(ctx).unsqueeze(0).to(trained.device)), dim=1)[0]
    probs = probs.to("cpu", torch.float64).numpy()
    order = np.argsort(-probs, kind="stable")
    if not include_boundary:
        order = order[order != 0]
    return [(trained.vocab.keys[i], float(probs[i])) for i in order[:k]]


# --------------------------------------------------------------------------------------------------------
# Persistence
# --------------------------------------------------------------------------------------------------------
