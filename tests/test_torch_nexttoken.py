"""The next-token model (makemore MLP): data layout, learning a known grammar, save/load, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from likewise.cli import main  # noqa: E402
from likewise.errors import CorruptModelError, InputError, UnknownItemError  # noqa: E402
from likewise.space.embeddings import Embeddings  # noqa: E402
from likewise.torch import (  # noqa: E402
    NextTokenConfig,
    build_examples,
    load_model,
    next_token_vocab,
    predict_next,
    sample,
    save_model,
    sweep_dims,
    train_next,
)

torch.set_num_threads(1)

# A grammar with a known answer: x is always followed by y, y by z, p by q; sequences end after z and q.
GRAMMAR = [["x", "y", "z"]] * 40 + [["p", "q"]] * 40
FAST = dict(dim=4, hidden=32, steps=300, batch_size=64, lr=0.02)


@pytest.fixture(scope="module")
def grammar_model():
    return train_next(GRAMMAR, NextTokenConfig(**FAST))


def test_vocab_puts_the_boundary_first_and_counts_sequence_ends():
    v = next_token_vocab(["ab", "b"])
    assert v.keys == [".", "b", "a"] and v.counts.tolist() == [2, 2, 1]
    assert len(next_token_vocab(list("abcdefghijklmnopqrstuvwxyz"))) == 27
    with pytest.raises(InputError, match="'.' occurs in the data but is the boundary"):
        next_token_vocab(["a.b"])


def test_examples_are_makemore_windows():
    v = next_token_vocab(["emma"])  # ids: . 0, m 1, a 2, e 3  (m twice; a, e once, ties by key)
    x, y = build_examples(["emma"], v, context=3)
    ids = {k: i for i, k in enumerate(v.keys)}
    expect = [("...", "e"), ("..e", "m"), (".em", "m"), ("emm", "a"), ("mma", ".")]
    assert x.tolist() == [[ids[c] for c in ctx] for ctx, _ in expect]
    assert y.tolist() == [ids[n] for _, n in expect]
    assert x.dtype == np.int64 and y.dtype == np.int64


def test_learns_the_grammar(grammar_model):
    m = grammar_model
    assert predict_next(m, ["x"], k=1)[0][0] == "y"
    assert predict_next(m, ["x", "y"], k=1)[0][0] == "z"
    assert predict_next(m, ["p"], k=1)[0][0] == "q"
    assert predict_next(m, ["x", "y", "z"], k=1, include_boundary=True)[0][0] == "."
    # the first item is x or p with probability 1/2 each, the rest is determined: the best possible
    # loss is ln 2 per sequence = ln2 / 3.5 nats per example; uniform guessing costs ln 6 = 1.79
    best = math.log(2) * 80 / (40 * 4 + 40 * 3)
    assert m.train_loss < best + 0.1 and m.val_loss < best + 0.1
    for s in sample(m, 20, seed=1):
        assert s in (["x", "y", "z"], ["p", "q"])


def test_same_seed_same_model_and_the_global_rng_is_untouched():
    torch.manual_seed(123)
    state = torch.get_rng_state()
    a = train_next(GRAMMAR, NextTokenConfig(**{**FAST, "steps": 30}))
    assert torch.equal(torch.get_rng_state(), state)
    b = train_next(GRAMMAR, NextTokenConfig(**{**FAST, "steps": 30}))
    c = train_next(GRAMMAR, NextTokenConfig(**{**FAST, "steps": 30, "seed": 1}))
    for (k, p), q in zip(a.model.state_dict().items(), b.model.state_dict().values(), strict=True):
        assert torch.equal(p, q), k
    assert not torch.equal(a.model.table.weight, c.model.table.weight)


def test_tied_model_shares_the_table():
    m = train_next(GRAMMAR, NextTokenConfig(**{**FAST, "tied": True}))
    names = dict(m.model.named_parameters())
    assert "out.weight" not in names and "proj.weight" in names
    assert predict_next(m, ["x"], k=1)[0][0] == "y"


def test_save_load_round_trip_is_plain_files(tmp_path, grammar_model):
    path = save_model(grammar_model, tmp_path / "m")
    files = sorted(p.name for p in path.iterdir())
    assert files == [
        "hidden.bias.npy",
        "hidden.weight.npy",
        "manifest.json",
        "out.bias.npy",
        "out.weight.npy",
        "space",
    ]
    back = load_model(path)
    x = torch.tensor([[0, 0, 1], [1, 2, 3]])
    torch.testing.assert_close(back.model(x), grammar_model.model(x), rtol=0, atol=0)
    assert back.vocab == grammar_model.vocab and back.config == grammar_model.config
    assert back.train_loss == grammar_model.train_loss
    # the input table is an ordinary likewise space
    space = Embeddings.load(path / "space")
    np.testing.assert_array_equal(space.vectors, grammar_model.model.table.weight.detach().numpy())
    with pytest.raises(InputError, match="already exists"):
        save_model(grammar_model, path)
    save_model(grammar_model, path, overwrite=True)


def test_corrupt_model_is_reported(tmp_path, grammar_model):
    path = save_model(grammar_model, tmp_path / "m")
    w = np.load(path / "hidden.weight.npy")
    np.save(path / "hidden.weight.npy", w + 1)
    with pytest.raises(CorruptModelError, match="fails its sha256"):
        load_model(path)
    (path / "manifest.json").write_text(json.dumps({"format": "something.else"}))
    with pytest.raises(CorruptModelError, match="expected 'likewise.nexttoken'"):
        load_model(path)
    with pytest.raises(CorruptModelError, match="no manifest.json"):
        load_model(tmp_path)


def test_bad_arguments_are_named(grammar_model):
    with pytest.raises(InputError, match="dim == 0"):
        NextTokenConfig(dim=0)
    with pytest.raises(InputError, match="val_fraction == 1"):
        NextTokenConfig(val_fraction=1)
    with pytest.raises(UnknownItemError, match="unknown item 'w'"):
        predict_next(grammar_model, ["w"])
    with pytest.raises(InputError, match="sequences is empty"):
        train_next([], NextTokenConfig(**FAST))


def test_sweep_dims_reports_each_dim():
    rows = sweep_dims(GRAMMAR, [1, 3], context=2, hidden=8, steps=20, batch_size=16)
    assert [r["dim"] for r in rows] == [1, 3]
    assert all(set(r) == {"dim", "train_loss", "val_loss", "weights"} for r in rows)
    # weights: table V*d + hidden (2d+1)*8 + output (8+1)*V, V = 6
    assert [r["weights"] for r in rows] == [6 * d + (2 * d + 1) * 8 + 9 * 6 for d in (1, 3)]


def test_cli_train_sample_predict(tmp_path, capsys):
    names = tmp_path / "names.txt"
    names.write_text("\n".join(["anna", "emma", "ava", "ella", "hannah"] * 10) + "\n")
    model = tmp_path / "m"
    argv = ["train-next", str(names), "-o", str(model), "--steps", "200", "--dim", "2", "--hidden", "16"]
    assert main([*argv, "--json", "--device", "cpu"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["read_as"] == "chars" and out["items"] == 8 and out["sequences"] == 50
    assert out["train_loss"] < math.log(8)  # below uniform guessing over . a e h l m n v
    assert main(["sample", str(model), "-n", "5", "--json"]) == 0
    samples = json.loads(capsys.readouterr().out)
    assert len(samples) == 5 and all(set(s) <= set("anemvlh") for s in samples)
    assert main(["predict-next", str(model), "han", "--json"]) == 0
    pred = json.loads(capsys.readouterr().out)
    assert [p["item"] for p in pred][0] == "n" and abs(sum(p["probability"] for p in pred) - 1) < 0.2
    assert main(["similar", str(model / "space"), "a", "-k", "2"]) == 0
    capsys.readouterr()
    # a bad device is a one-line error, not a traceback
    assert main(["sample", str(model), "--device", "tpu"]) == 1
    assert "must be 'cpu', 'cuda'" in capsys.readouterr().err


def test_cli_sweep_dims(tmp_path, capsys):
    seqs = tmp_path / "s.txt"
    seqs.write_text("x y z\np q\n" * 20)
    assert main(["train-next", str(seqs), "--sweep-dims", "1,2", "--steps", "20", "--hidden", "8"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["dim", "train_loss", "val_loss", "weights"]
    assert len(out.splitlines()) == 4
    assert main(["train-next", str(seqs), "--steps", "5"]) == 1
    assert "-o/--output MODEL is required" in capsys.readouterr().err


def test_tiny_real_names_run_beats_uniform_guessing():
    pytest.importorskip("pyarrow")
    from likewise.data.names import load_names

    names = load_names(300)
    m = train_next(names, NextTokenConfig(dim=2, hidden=50, steps=300, batch_size=64))
    assert len(m.vocab) == 27
    assert m.val_loss < math.log(27) - 0.3  # uniform guessing over 27 tokens costs ln 27 = 3.30 nats


def test_train_next_shows_progress_when_asked(capsys):
    from likewise.torch import train_next

    train_next(["anna", "bob", "cleo"] * 20, steps=50, batch_size=8, dim=2, progress=True)
    err = capsys.readouterr().err
    assert "train-next dim 2" in err and "50" in err  # the bar (tqdm or its one-line fallback)
    train_next(["anna", "bob", "cleo"] * 20, steps=50, batch_size=8, dim=2, progress=False)
    assert capsys.readouterr().err == ""
