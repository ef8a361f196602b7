"""The kernels' named hyper-parameters and the one learning-rate schedule (likewise.kernels.params)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from likewise.kernels.params import KernelParams, learning_rate
from likewise.training.config import TrainConfig

NAMES = ("mode", "window", "negative", "max_context", "group", "lr0", "min_lr")


@pytest.mark.parametrize(
    ("kernel", "group"),
    [("train_sgns_block", 1), ("train_sgns_block_serial", 1), ("train_sgns_typed_block", 1),
     ("train_sgns_batched_block", 4), ("train_sgns_batched_block_serial", 4)],
)  # fmt: skip
def test_block_args_follow_each_kernels_signature(kernel: str, group: int) -> None:
    from likewise import kernels

    p = KernelParams(mode=1, window=2, negative=3, max_context=5, lr0=0.025, min_lr=1e-4, group=group)
    names = list(inspect.signature(getattr(kernels, kernel)).parameters)
    # the arrays and per-call scalars stand for themselves; the hyper-parameters must land on their names
    args = p.block_args(*[f"<{n}>" for n in ("ids", "offsets", "seq_start", "seq_end", "W", "C",
                                              "keep_prob", "neg_cum", "words_before", "total_words",
                                              "seed", "n_chunks")])  # fmt: skip
    got = dict(zip(names, args, strict=False))
    assert len(args) == len(names) - (4 if "type_cum" in names else 0)
    for name in NAMES:
        if name in names:
            assert got[name] == getattr(p, name)
    assert (
        got["ids"] == "<ids>" and got["n_chunks"] == "<n_chunks>" and got["words_before"] == "<words_before>"
    )


def test_params_of_a_config() -> None:
    cfg = TrainConfig(
        mode="sequence", window=7, negative=4, max_context=9, lr=0.05, min_lr=0.001, neg_group=8
    )
    assert KernelParams.of(cfg) == KernelParams(0, 7, 4, 9, 0.05, 0.001, 8)
    assert KernelParams.of(cfg, group=1).group == 1
    assert KernelParams.of(TrainConfig(mode="basket", neg_group=2)).mode == 1


def test_schedule_ends_and_floor() -> None:
    assert learning_rate(0.025, 1e-4, 0, 100) == 0.025
    assert learning_rate(0.025, 1e-4, 100, 100) == pytest.approx(1e-4)
    assert learning_rate(0.025, 1e-4, 250, 100) == 1e-4  # never below min_lr
    assert KernelParams(0, 5, 5, 5, 0.025, 1e-4).lr_at(50, 100) == learning_rate(0.025, 1e-4, 50, 100)


def test_the_compiled_copy_is_the_same_schedule() -> None:
    """The kernels inline their own lr_at; it must round the one schedule to float32, bit for bit."""
    from likewise.kernels._common import lr_at

    rng = np.random.default_rng(0)
    for _ in range(300):
        lr0 = float(rng.uniform(1e-3, 0.5))
        min_lr = float(rng.uniform(0, lr0))
        total = int(rng.integers(1, 10**9))
        words_before, base = int(rng.integers(0, total)), int(rng.integers(0, 1000))
        a = base + int(rng.integers(0, 1000))
        want = np.float32(learning_rate(lr0, min_lr, float(words_before + (a - base)), float(total)))
        assert lr_at(a, base, float(words_before), float(total), lr0, min_lr) == want


@pytest.mark.parametrize("group", [1, 4])
def test_the_kernel_training_calls_takes_the_params_whole(group: int) -> None:
    """block_kernel's kernel (params whole) and the positional public kernel train the same bytes."""
    from likewise import kernels

    rng = np.random.default_rng(3)
    offsets = np.array([0, 5, 9, 16, 20], dtype=np.int64)
    ids = rng.integers(0, 6, 20).astype(np.int32)
    counts = np.bincount(ids, minlength=6) + 1
    keep, neg = kernels.make_keep_prob(counts, 0.0), kernels.make_neg_cum(counts, 0.75)
    p = KernelParams(mode=1, window=2, negative=3, max_context=3, lr0=0.05, min_lr=1e-4, group=group)
    positional = kernels.train_sgns_block_serial if group == 1 else kernels.train_sgns_batched_block_serial
    W0 = rng.random((6, 8), dtype=np.float32)
    out = []
    for run in (
        lambda block: kernels.block_kernel(group, serial=True)(p, *block),
        lambda block: positional(*p.block_args(*block)),
    ):
        W, C = W0.copy(), np.zeros((6, 8), dtype=np.float32)
        out.append((run((ids, offsets, 0, 4, W, C, keep, neg, 0, 20, 7, 2)), W.tobytes(), C.tobytes()))
    assert out[0] == out[1] and out[0][0][2] > 0
