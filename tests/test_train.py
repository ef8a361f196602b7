"""The trainer end to end: planted structure is recovered, determinism, config validation."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from likewise.data.datasets import planted_baskets
from likewise.errors import InputError
from likewise.evaluate import label_purity
from likewise.kernels import sequence_blocks as _blocks
from likewise.training.train import EpochStats, TrainConfig, kept_share, resolve_sample, train


@pytest.fixture(scope="module")
def planted():
    return planted_baskets(n_groups=50, group_size=20, n_baskets=20_000, noise=0.1, seed=3)


def test_planted_groups_are_recovered(planted):
    baskets, labels = planted
    stats: list[EpochStats] = []
    emb = train(
        baskets, mode="basket", dim=32, epochs=5, min_count=1, sample=0.0, seed=7, callback=stats.append
    )
    assert len(emb) == 1000 and emb.dim == 32
    purity = label_purity(emb, labels)
    assert purity >= 0.9, purity
    assert [s.epoch for s in stats] == [1, 2, 3, 4, 5]
    assert stats[-1].loss < stats[0].loss
    assert all(s.pairs > 0 and s.items == sum(map(len, baskets)) for s in stats)
    assert emb.meta["history"][0]["epoch"] == 1


def test_random_baskets_have_no_structure(planted):
    """The control: shuffled items across baskets carry no group signal, so purity stays near chance."""
    baskets, labels = planted
    rng = np.random.default_rng(0)
    flat = [x for b in baskets for x in b]
    rng.shuffle(flat)
    cut = np.cumsum([len(b) for b in baskets])[:-1]
    shuffled = [list(dict.fromkeys(p)) for p in np.split(np.array(flat, dtype=object), cut)]
    emb = train(shuffled, mode="basket", dim=32, epochs=2, min_count=1, sample=0.0, seed=7)
    assert label_purity(emb, labels) < 0.2


def test_deterministic_runs_are_bit_identical(planted):
    baskets, _ = planted
    small = baskets[:2000]
    a = train(small, mode="basket", dim=8, epochs=2, min_count=1, deterministic=True, seed=5)
    b = train(small, mode="basket", dim=8, epochs=2, min_count=1, deterministic=True, seed=5)
    c = train(small, mode="basket", dim=8, epochs=2, min_count=1, deterministic=True, seed=6)
    assert np.array_equal(a.vectors, b.vectors)
    assert a.fingerprint == b.fingerprint
    assert not np.array_equal(a.vectors, c.vectors)
    assert a.meta["history"][-1]["loss"] == b.meta["history"][-1]["loss"]


def test_sequence_mode_from_text_file(tmp_path):
    rng = np.random.default_rng(0)
    # Two "languages" that never mix within a line: words must cluster by language.
    lines = []
    for _ in range(3000):
        lang = rng.integers(2)
        words = [f"{'ab'[lang]}{rng.integers(20)}" for _ in range(rng.integers(5, 12))]
        lines.append(" ".join(words))
    path = tmp_path / "text.txt"
    path.write_text("\n".join(lines) + "\n")
    emb = train(
        str(path),
        mode="sequence",
        dim=16,
        window=3,
        epochs=3,
        min_count=1,
        sample=0.0,
        seed=1,
        cache_dir=tmp_path / "cache",
    )
    assert len(emb) == 40
    res = emb.similar("a3", k=5)
    assert all(k.startswith("a") for k in res.keys)
    assert emb.report.mode.value == "sequence" and emb.config.window == 3


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("dim", 0, "dim == 0, must be an integer >= 1"),
        ("mode", "bag", "mode == 'bag'"),
        ("window", -1, "window == -1"),
        ("negative", -2, "negative == -2"),
        ("lr", 0.0, "lr == 0.0"),
        ("sample", -1e-3, "sample == -0.001"),
        ("epochs", 0, "epochs == 0"),
        ("threads", 0, "threads == 0"),
        ("backend", "tpu", "backend == 'tpu'"),
        ("threads", 1.5, "threads == 1.5, must be an integer >= 1"),
        ("negative", True, "negative == True, must be an integer >= 0"),
        ("lr", "0.1", "lr == '0.1', must be a number"),
        ("min_lr", float("nan"), "min_lr == nan, must be a finite number"),
        ("max_items", 0, "max_items == 0, must be an integer >= 1 or None"),
        ("deterministic", "yes", "deterministic == 'yes'"),
    ],
)
def test_bad_config_names_the_value(field, value, needle):
    with pytest.raises(InputError, match=needle.replace("(", r"\(").replace(".", r"\.")):
        TrainConfig(**{field: value}).validate()


def test_unknown_parameter_is_named():
    with pytest.raises(InputError, match=r"unknown training parameter 'dims' \(did you mean dim=\?\)"):
        train([["a", "b"]], dims=8)


def test_a_ready_corpus_records_its_own_trimming(tmp_path):
    from likewise.data.corpus import corpus_from_sequences

    corpus = corpus_from_sequences(
        [["a", "b"], ["a", "rare"]] * 3 + [["once", "a"]], tmp_path / "c", min_count=1
    )
    emb = train(corpus, dim=4, epochs=1)  # TrainConfig's default min_count (5) did not trim this corpus
    assert "once" in emb and emb.report.min_count == 1


def test_torch_backend_without_torch_says_how_to_install_it(monkeypatch):
    import likewise.training.config
    from likewise.errors import MissingDependencyError

    monkeypatch.setattr(likewise.training.config, "_torch_installed", lambda: False)
    with pytest.raises(MissingDependencyError, match=r"pip install '\.\[torch\]' in the likewise clone"):
        train([["a", "b"]], backend="torch", min_count=1)
    assert likewise.training.config.select_backend("auto") == "cpu"


def test_empty_vocabulary_is_an_error():
    with pytest.raises(InputError, match="min_count=5"):
        train([["a", "b"], ["c"]], min_count=5)


def test_config_round_trip():
    cfg = TrainConfig(mode="basket", dim=12, seed=9, sample=1e-4)
    assert TrainConfig.from_dict({**cfg.to_dict(), "from_the_future": 1}) == cfg


def test_sample_default_depends_on_mode_and_data():
    """word2vec's 1e-3 for a long-tailed text vocabulary; none for baskets; never below the mean frequency."""
    zipf = (1e6 / np.arange(1, 50_001)).astype(np.int64) + 1
    assert resolve_sample(zipf, None, "sequence")[0] == 1e-3
    assert resolve_sample(zipf, None, "basket")[0] == 0.0
    assert resolve_sample(zipf, 1e-4, "basket") == (1e-4, "set by the caller")
    flat = np.full(15, 100)
    t, why = resolve_sample(flat, None, "sequence")
    assert t == pytest.approx(1 / 15) and "1/15" in why
    assert kept_share(flat, t) == 1.0  # a uniform catalogue keeps everything
    assert kept_share(flat, 1e-3) < 0.2  # what the text default would have done
    # One item far more frequent than all the rest together: raised until half the tokens stay.
    skewed = np.array([1_000_000] + [1] * 2000)
    assert kept_share(skewed, 1e-3) < 0.1
    t, why = resolve_sample(skewed, None, "sequence")
    assert kept_share(skewed, t) >= 0.5 and "half" in why
    d = TrainConfig(mode="basket", dim=12, sample=0.0).to_dict()
    assert TrainConfig.from_dict(d).to_dict() == d


def test_blocks_cover_every_sequence_once():
    offsets = np.cumsum([0] + [3, 0, 5, 1, 7, 2, 2, 9], dtype=np.int64)
    for size in (1, 4, 10, 100):
        blocks = _blocks(offsets, size)
        flat = [i for a, b in blocks for i in range(a, b)]
        assert flat == list(range(len(offsets) - 1))
    assert _blocks(np.zeros(1, dtype=np.int64), 10) == []


def test_progress_bar_reports_rate_and_loss(capsys):
    """Forced on (as on a terminal): a tqdm bar per epoch with items/s, the mean loss per pair and lr."""
    pytest.importorskip("tqdm")
    train([["a", "b", "c"], ["b", "c", "d"]] * 50, mode="basket", dim=4, epochs=2, min_count=1, progress=True)
    err = capsys.readouterr().err
    finals = [line.split("\r")[-1] for line in err.split("\n") if "100%" in line]
    assert len(finals) == 2, err
    assert finals[0].startswith("epoch 1/2: 100%") and "items/s" in finals[0] and "loss=" in finals[0]
    assert finals[1].startswith("epoch 2/2: 100%") and "lr=" in finals[1]


def test_progress_without_tqdm_is_one_line_per_epoch(capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *a, **k):
        if name.startswith("tqdm"):
            raise ImportError("no tqdm")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    train([["a", "b", "c"], ["b", "c", "d"]] * 50, mode="basket", dim=4, epochs=2, min_count=1, progress=True)
    lines = capsys.readouterr().err.strip().split("\n")
    # then one line saying the item-item completion is fitted (basket mode)
    assert lines[-1].startswith("fitting the item-item completion (EASE) on 4 items")
    lines = lines[:-1]
    assert [line.split(":")[0] for line in lines] == ["epoch 1/2", "epoch 2/2"]
    assert "300/300 items loss=" in lines[0]


def test_progress_bar_is_off_when_not_a_terminal(capsys):
    train([["a", "b", "c"], ["b", "c", "d"]] * 50, mode="basket", dim=4, epochs=1, min_count=1)
    assert capsys.readouterr().err == ""  # pytest's stderr is not a terminal


def _spy_kernels(monkeypatch) -> list[tuple]:
    """Record ``(kernel, params, block arguments)`` of every block kernel call training makes."""
    import likewise.kernels as k

    calls: list[tuple] = []
    real = k.block_kernel

    def block_kernel(group, *, serial, typed=None):
        kernel = real(group, serial=serial, typed=typed)
        return lambda params, *block: calls.append((kernel, params, block)) or kernel(params, *block)

    monkeypatch.setattr(k, "block_kernel", block_kernel)
    return calls


def test_neg_group_one_runs_the_classic_kernel(monkeypatch):
    """neg_group=1 is word2vec's own per-pair algorithm (kernels/sgns.py), larger groups the batched one."""
    from likewise.kernels.batched import BATCHED_SERIAL
    from likewise.kernels.sgns import PER_PAIR_SERIAL

    calls = _spy_kernels(monkeypatch)
    seqs = [["a", "b", "c", "d"], ["b", "c", "e"]] * 20
    train(seqs, min_count=1, dim=4, epochs=1, neg_group=1, deterministic=True, progress=False)
    assert calls and {c[0] for c in calls} == {PER_PAIR_SERIAL}
    calls.clear()
    train(seqs, min_count=1, dim=4, epochs=1, neg_group=4, deterministic=True, progress=False)
    assert calls and {c[0] for c in calls} == {BATCHED_SERIAL}


def test_neg_group_default_follows_the_mode(monkeypatch):
    """Unset, neg_group is 16 for sequences and 4 for baskets (NEG_GROUP), and the saved config says so."""
    from likewise.training.config import NEG_GROUP

    calls = _spy_kernels(monkeypatch)
    seqs = [["a", "b", "c", "d"], ["b", "c", "e"]] * 20
    for mode in ("sequence", "basket"):
        calls.clear()
        emb = train(seqs, mode=mode, min_count=1, dim=4, epochs=1, deterministic=True, progress=False)
        assert {c[1].group for c in calls} == {NEG_GROUP[mode]} and emb.report.neg_group == NEG_GROUP[mode]
    assert NEG_GROUP == {"sequence": 16, "basket": 4}


def test_kernel_is_compiled_before_the_tables_and_llvm_pages_go_back(monkeypatch):
    """The numba kernel runs once on a one-row table, LLVM's pages are released, then the real tables are
    allocated: compiling does not sit in the peak beside them. The warm-up changes no result."""
    import likewise.training.train_numba as tn

    calls = _spy_kernels(monkeypatch)
    events = []
    real_release = tn.release_compiler_pages
    monkeypatch.setattr(tn, "release_compiler_pages", lambda: events.append(len(calls)) or real_release())
    seqs = [["a", "b", "c", "d"], ["b", "c", "e"]] * 20
    warm = train(seqs, min_count=1, dim=40, epochs=1, deterministic=True, progress=False)
    rows = [c[2][4].shape[0] for c in calls]  # W, the fifth block argument
    assert events == [1] and rows[0] == 1 and set(rows[1:]) == {5}
    monkeypatch.setattr(tn, "_warm", lambda *a: None)
    cold = train(seqs, min_count=1, dim=40, epochs=1, deterministic=True, progress=False)
    np.testing.assert_array_equal(warm.vectors, cold.vectors)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")
def test_release_compiler_pages_keeps_compiled_code_running():
    import numba

    from likewise.training.train_numba import _clean_mappings, release_compiler_pages

    @numba.njit
    def twice(x):
        return 2 * x

    assert twice(3) == 6
    before = sum(r for _, _, r in _clean_mappings("libllvmlite"))
    assert before > 0  # LLVM's code is resident after a compilation
    assert release_compiler_pages() > 0
    after = sum(r for _, _, r in _clean_mappings("libllvmlite"))
    assert after < before / 2
    assert twice(4) == 8  # compiled code does not live in those pages

    @numba.njit
    def thrice(x):  # compiling again reads the pages back from the file
        return 3 * x

    assert thrice(3) == 9


def test_a_config_checks_itself_when_made_and_cannot_be_changed_in_place():
    import dataclasses

    with pytest.raises(InputError, match="dim"):
        TrainConfig(dim=-1)
    with pytest.raises(InputError, match="max_context"):
        TrainConfig(max_context=0)
    cfg = TrainConfig(dim=8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.dim = 16  # type: ignore[misc]
    with pytest.raises(InputError, match="lr"):
        dataclasses.replace(cfg, lr=0.0)  # a changed copy is checked as well
    assert dataclasses.replace(cfg, dim=16).dim == 16 and cfg.dim == 8


def test_every_auto_is_resolved_once(monkeypatch):
    """The plan (likewise.training.auto.TrainPlan) is resolved once per run: the held-out baskets, the
    subsampling threshold and neg_group are each chosen by one call, which the trials, the basket rule,
    the completion model and the evidence of similar() all read."""
    from likewise.training import auto, completion, config, evidence

    calls: dict[str, int] = {}

    def counted(module, name):
        real = getattr(module, name)

        def spy(*a, **kw):
            calls[name] = calls.get(name, 0) + 1
            return real(*a, **kw)

        return spy

    for module, name in ((auto, "resolve_sample"), (config, "neg_group_for")):
        monkeypatch.setattr(module, name, counted(module, name))
    spy = counted(auto, "hold_out")
    for module in (auto, completion, evidence):
        monkeypatch.setattr(module, "hold_out", spy)
    rng = np.random.default_rng(0)
    baskets = [{f"i{j}" for j in rng.choice(30, size=4, replace=False)} for _ in range(400)]
    emb = train(baskets, dim=8, min_count=1, seed=1, deterministic=True, backend="cpu", progress=False)
    assert calls == {"resolve_sample": 1, "neg_group_for": 1, "hold_out": 1}
    assert "held-out" in emb.meta["epochs_reason"] and emb.meta["similar_evidence"]["held_out"] > 0
