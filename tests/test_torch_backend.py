"""The torch backend in one process: its kernel against the NumPy reference, the draws, the contract every
backend passes, the seed shop from the command line, and its choice in select_backend.

The multi-process runs are in test_distributed.py; the checkpoints in test_checkpoints.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import BackendContract

torch = pytest.importorskip("torch")

from likewise.errors import InputError  # noqa: E402
from likewise.kernels import draws, make_keep_prob, make_neg_cum  # noqa: E402
from likewise.kernels import minibatch as K  # noqa: E402
from likewise.kernels.reference import build_batch_reference, sgns_grads_reference  # noqa: E402
from likewise.training.config import select_backend  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_defaults import own_department, seed_shop, write_orders  # noqa: E402


class TestTorchBackend(BackendContract):
    """The torch backend on the CPU passes the contract of every backend."""

    backend = {"backend": "torch", "device": "cpu"}


def test_torch_hash_is_the_numpy_hash():
    rng = np.random.default_rng(0)
    pos = rng.integers(0, 2**62, size=1000, dtype=np.int64)
    k0, k1 = draws.epoch_keys(7, 3)
    want = draws.draw(draws.token_keys(pos, k0, k1), 5)
    got = K.draw(K.token_keys(torch.from_numpy(pos), k0, k1), 5)
    np.testing.assert_array_equal(got.numpy(), want.astype(np.int64))
    keys, purposes = pos & 0xFFFFFFFF, rng.integers(0, 1000, size=1000)  # keys are 32-bit values
    np.testing.assert_array_equal(
        K.draw(torch.from_numpy(keys), torch.from_numpy(purposes)).numpy(),
        draws.draw(keys, purposes).astype(np.int64),
    )


def _random_batch_inputs(rng, mode):
    lengths = rng.integers(1, 14, size=int(rng.integers(1, 12))).astype(np.int64)
    ids = rng.integers(0, 25, size=int(lengths.sum())).astype(np.int64)
    counts = np.bincount(ids, minlength=25) + 1
    keep = make_keep_prob(counts, 0.04 if mode == 0 else 0.0)
    return ids, lengths, keep, make_neg_cum(counts, 0.75)


@pytest.mark.parametrize("mode", [0, 1])
def test_build_batch_is_the_reference(mode):
    """Same groups, contexts, negatives and counts as the one-token-at-a-time reference, including
    subsampling, shrunk windows, sampled contexts of baskets larger than max_context (here 5) and
    negatives that drew the centre."""
    rng = np.random.default_rng(mode)
    for trial in range(25):
        ids, lengths, keep, neg_cum = _random_batch_inputs(rng, mode)
        first = int(rng.integers(0, 2**40))
        args = (mode, 3, 4, 5, 3, *draws.epoch_keys(11, trial))
        want = build_batch_reference(ids, lengths, first, keep, neg_cum, *args)
        t = [torch.from_numpy(a) for a in (ids, lengths)]
        got = K.build_batch(t[0], t[1], first, torch.from_numpy(keep), torch.from_numpy(neg_cum), *args)
        assert (got.seen, got.kept, got.pairs) == want[3:]
        if len(want[0]):
            for a, b in zip((got.ctx, got.tgt, got.tgt_ok), want[:3], strict=True):
                np.testing.assert_array_equal(a.numpy(), b)
        else:
            assert got.ctx.shape[0] == 0 and got.tgt.shape == (0, 5)


def test_an_empty_piece_is_an_empty_batch():
    neg_cum = torch.from_numpy(make_neg_cum(np.ones(4), 0.75))
    empty = torch.zeros(0, dtype=torch.int64)
    got = K.build_batch(empty, empty, 0, torch.ones(4), neg_cum, 0, 5, 5, 50, 16, 1, 2)
    assert (got.seen, got.kept, got.pairs) == (0, 0, 0) and got.tgt.shape == (0, 6)
    with pytest.raises(InputError, match="lengths sum to 3 but ids has 2"):
        K.build_batch(
            torch.zeros(2, dtype=torch.int64),
            torch.tensor([3]),
            0,
            torch.ones(4),
            neg_cum,
            0,
            5,
            5,
            50,
            16,
            1,
            2,
        )


def test_sgns_grads_is_the_reference():
    rng = np.random.default_rng(3)
    ids, lengths, keep, neg_cum = _random_batch_inputs(rng, 1)
    t = [torch.from_numpy(a) for a in (ids, lengths, keep, neg_cum)]
    batch = K.build_batch(t[0], t[1], 0, t[2], t[3], 1, 3, 4, 5, 3, 1, 2)
    w_ids, ctx, c_ids, tgt = K.batch_rows(batch)
    W = rng.standard_normal((len(w_ids), 8)).astype(np.float32)
    C = rng.standard_normal((len(c_ids), 8)).astype(np.float32)
    dw, dc, loss, nw, nc = K.sgns_grads(
        torch.from_numpy(W), torch.from_numpy(C), ctx, tgt, batch.tgt_ok, 0.05
    )
    rw, rc, rl = sgns_grads_reference(W, C, ctx.numpy(), tgt.numpy(), batch.tgt_ok.numpy(), 0.05)
    np.testing.assert_allclose(dw.numpy(), rw, atol=1e-6)
    np.testing.assert_allclose(dc.numpy(), rc, atol=1e-6)
    assert float(loss) == pytest.approx(rl, rel=1e-5)
    # updates per row: each context slot is one update of its input row
    np.testing.assert_array_equal(nw.numpy(), np.bincount(ctx[ctx >= 0].numpy(), minlength=len(w_ids)))
    assert float(nc.sum()) == pytest.approx(float(((ctx >= 0).sum(1, keepdim=True) * batch.tgt_ok).sum()))


def test_add_rows_sums_repeats_and_caps_busy_rows():
    table = torch.zeros((3, 2))
    rows = torch.tensor([0, 0, 2, 2, 2])
    delta = torch.ones((5, 2))
    K.add_rows(table, rows, delta, torch.tensor([1.0, 1.0, 2.0, 2.0, 2.0]), cap=4)
    # row 0: 2 updates, under the cap: the sum; row 2: 6 updates, over it: 4 x the mean (3 / 6)
    np.testing.assert_allclose(table.numpy(), [[2, 2], [0, 0], [2, 2]])
    K.add_rows(table, rows, delta, torch.full((5,), 9.0), cap=0)  # 0: no cap
    np.testing.assert_allclose(table.numpy(), [[4, 4], [0, 0], [5, 5]])


def test_bfloat16_rounding_is_unbiased():
    x = torch.full((200000,), 1.0 + 2.0**-10)  # between two bfloat16 neighbours, 1/8 of the way up
    keys = K.hash32(torch.arange(200000, dtype=torch.int64))
    r = K.round_bf16(x, keys).float()
    assert set(r.unique().tolist()) == {1.0, 1.0078125}
    assert float(r.double().mean()) == pytest.approx(1.0 + 2.0**-10, abs=2.5e-5)  # 4 standard errors


def test_bfloat16_tables_train_the_planted_groups(data):
    from likewise import train
    from likewise.evaluate import label_purity

    emb = train(data[0], mode="basket", dim=16, epochs=8, min_count=1, seed=3, backend="torch",
                device="cpu", table_dtype="bfloat16")  # fmt: skip
    assert label_purity(emb, data[1], k=5) >= 0.9


def test_backend_choice(monkeypatch):
    import likewise.training.config as config

    assert select_backend("torch") == "torch" and select_backend("cpu") == "cpu"
    monkeypatch.setattr(config, "_cuda_present", lambda: False)
    assert select_backend("auto") == "cpu"
    assert select_backend("auto", world_size=2) == "torch"  # the numba kernel cannot run on several
    monkeypatch.setattr(config, "_cuda_present", lambda: True)
    assert select_backend("auto") == "torch"
    with pytest.raises(InputError, match="backend == 'cpu' in a run of 2 processes"):
        select_backend("cpu", world_size=2)
    with pytest.raises(InputError, match="device == 'gpu'"):
        config.TrainConfig(device="gpu").validate()
    with pytest.raises(InputError, match="table_dtype == 'bfloat16' needs backend='torch'"):
        config.TrainConfig(table_dtype="bfloat16", backend="cpu").validate()


def test_import_likewise_does_not_import_torch():
    import subprocess

    code = "import sys, likewise; likewise.TrainConfig(backend='torch').validate()"
    code += "; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_seed_shop_from_the_command_line(tmp_path, capsys):
    from likewise import load
    from likewise.cli import main

    orders = write_orders(seed_shop(1), tmp_path / "orders.csv")
    args = [
        "train",
        str(orders),
        "--basket-col",
        "order_id",
        "--item-col",
        "product",
        "-o",
        str(tmp_path / "m"),
    ]
    assert (
        main([*args, "--backend", "torch", "--device", "cpu", "--cache-dir", str(tmp_path / "c"), "--json"])
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    emb = load(str(tmp_path / "m"))
    assert emb.meta["backend"] == "torch" and emb.meta["world_size"] == 1 and summary["mode"] == "basket"
    assert own_department(emb) == 9
