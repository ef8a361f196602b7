"""``likewise tune`` and :func:`likewise.training.tune.tune`: budgets, the leaderboard, the saved model,
seeds."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest

from likewise import load
from likewise.cli import main
from likewise.data.datasets import planted_baskets
from likewise.errors import InputError
from likewise.training.report import RESOLVED
from likewise.training.tune import SPACE, TuneOptions, parse_budget, sample_params, tune

BASELINES = {"popular", "cocount", "ppmi", "ppmi-svd"}


@pytest.fixture(scope="module")
def baskets() -> list[list[str]]:
    b, _ = planted_baskets(n_groups=6, group_size=10, n_baskets=800, zipf=1.0, seed=0)
    return b


@pytest.fixture(scope="module")
def result(baskets):
    return tune(baskets, mode="basket", budget_s="1h", max_trials=4, seed=3, deterministic=True, min_count=1)


# --- budget ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90.0), ("10m", 600.0), ("1h", 3600.0), ("1h30m", 5400.0), ("2.5m", 150.0), ("45", 45.0)],
)
def test_parse_budget_units(text, seconds):
    assert parse_budget(text) == seconds
    assert parse_budget(" " + text.upper() + " ") == seconds


def test_parse_budget_numbers_and_zero():
    assert parse_budget(30) == 30.0
    assert parse_budget(0.5) == 0.5
    assert parse_budget("0s") == 0.0


@pytest.mark.parametrize("bad", ["", "10x", "-5m", "m", "1d", "ten minutes", "inf", "5m-"])
def test_parse_budget_rejects_bad_values(bad):
    with pytest.raises(InputError, match="budget") as e:
        parse_budget(bad)
    assert repr(bad) in str(e.value)


@pytest.mark.parametrize("bad", [True, None, -1, float("nan")])
def test_parse_budget_rejects_bad_types(bad):
    with pytest.raises(InputError, match="budget"):
        parse_budget(bad)


def test_cli_bad_budget_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["tune", str(tmp_path / "x.txt"), "-o", str(tmp_path / "m"), "--budget", "10x"])
    assert e.value.code == 2
    assert "'10x' is not a duration" in capsys.readouterr().err


# --- the search --------------------------------------------------------------------------------------


def test_sample_params_stay_in_the_space():
    import numpy as np

    rng = np.random.default_rng(0)
    for mode in ("basket", "sequence"):
        for _ in range(200):
            p = sample_params(rng, mode)
            assert ("window" in p) == (mode == "sequence")
            for name, v in p.items():
                lo, hi, _ = SPACE[name]
                assert (name == "sample" and v == 0) or lo <= v <= hi, (name, v)


def test_default_trial_runs_first_and_passes_nothing(result):
    assert result.trials[0].number == 0 and result.trials[0].params == {}
    assert result.default is result.trials[0]
    assert all(t.params for t in result.trials[1:])
    assert len(result.trials) == 4 and result.stopped == "max_trials=4 reached"


def test_best_trial_is_at_least_the_default(result):
    assert result.best.hr >= result.default.hr
    assert result.best.hr == max(t.hr for t in result.trials)
    assert result.embeddings.meta["tune"]["default_hr"] == result.default.hr


def test_leaderboard_has_baselines_and_is_sorted_by_hr(result):
    board = result.leaderboard()
    assert {r["name"] for r in board if r["kind"] == "baseline"} == BASELINES
    assert sum(r["kind"] == "trial" for r in board) == len(result.trials)
    hrs = [r["hr"] for r in board]
    assert hrs == sorted(hrs, reverse=True)
    assert [r["rank"] for r in board] == list(range(1, len(board) + 1))
    json.dumps(result.to_dict())  # JSON-able


def test_zero_budget_still_runs_the_default_trial(baskets):
    r = tune(baskets, mode="basket", budget_s=0, seed=0, deterministic=True, min_count=1, baselines=())
    assert [t.number for t in r.trials] == [0]
    assert r.best is r.default and r.baselines == {} and r.stopped == "budget spent"


def test_sample_is_never_below_one_over_the_catalogue():
    rng = np.random.default_rng(0)
    drawn = [sample_params(rng, "basket", n_items=600)["sample"] for _ in range(400)]
    on = [s for s in drawn if s]
    assert on and min(on) >= 1 / 600 * 0.999  # rounded to 3 significant digits
    assert 0.3 < drawn.count(0.0) / len(drawn) < 0.7  # still off about half the time
    assert all(sample_params(rng, "basket", n_items=50)["sample"] == 0.0 for _ in range(50))  # 1/50 > 1e-2


def test_seed_makes_the_search_reproducible(baskets, result):
    again = tune(baskets, mode="basket", budget_s="1h", max_trials=4, seed=3, deterministic=True, min_count=1)
    assert [t.params for t in again.trials] == [t.params for t in result.trials]
    assert [(t.hr, t.ndcg) for t in again.trials] == [(t.hr, t.ndcg) for t in result.trials]
    assert again.baselines == result.baselines
    other = tune(baskets, mode="basket", max_trials=2, seed=4, deterministic=True, min_count=1, baselines=())
    assert other.trials[1].params != result.trials[1].params


def test_sequence_mode_searches_the_window(baskets):
    r = tune(
        baskets[:400], budget_s="1h", max_trials=2, seed=0, deterministic=True, min_count=1, baselines=()
    )
    assert r.mode == "sequence"  # lists keep their order
    assert "window" in r.trials[1].params and "window" in r.trials[0].settings


def test_bad_arguments_name_the_value(baskets):
    with pytest.raises(InputError, match=r"k == 0"):
        tune(baskets, k=0)
    with pytest.raises(InputError, match=r"mode == 'bogus'"):
        tune(baskets, mode="bogus")
    with pytest.raises(InputError, match=r"max_trials == 0"):
        tune(baskets, max_trials=0)
    with pytest.raises(InputError, match="cannot tune on int"):
        tune(5)


def test_options_as_an_object_or_as_keywords_search_alike(baskets):
    """``tune`` takes its settings as a TuneOptions, as keywords, or both (keywords replace fields)."""
    kw = {"mode": "basket", "seed": 4, "deterministic": True, "min_count": 1, "baselines": ()}
    by_keywords = tune(baskets, max_trials=2, **kw)
    by_object = tune(baskets, TuneOptions(max_trials=5, **kw), max_trials=2)
    assert [t.params for t in by_object.trials] == [t.params for t in by_keywords.trials]
    assert [(t.hr, t.ndcg) for t in by_object.trials] == [(t.hr, t.ndcg) for t in by_keywords.trials]
    with pytest.raises(TypeError, match="unexpected keyword argument 'budget'"):
        tune(baskets, budget="1m")
    with pytest.raises(InputError, match=r"k == 0"):
        TuneOptions(k=0)  # checked when built, before any data is read
    with pytest.raises(InputError, match="options must be a TuneOptions"):
        tune(baskets, {"k": 5})


def test_progress_is_one_line_per_trial_without_tqdm(baskets, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # `from tqdm.auto import tqdm` raises ImportError
    tune(baskets, mode="basket", max_trials=2, seed=0, deterministic=True, min_count=1, progress=True)
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("tune: ")]
    assert len(lines) == 2 and lines[0].startswith("tune: default: HR@10 ")
    tune(baskets, mode="basket", max_trials=2, seed=0, deterministic=True, min_count=1, progress=False)
    assert capsys.readouterr().err == ""


# --- the command -------------------------------------------------------------------------------------


def test_cli_saves_the_best_model_and_it_loads(baskets, tmp_path, capsys):
    txt = tmp_path / "baskets.txt"
    txt.write_text("\n".join(" ".join(b) for b in baskets) + "\n")
    out = tmp_path / "model"
    argv = ["tune", str(txt), "-o", str(out), "--mode", "basket", "--min-count", "1", "--trials", "3"]
    argv += ["--seed", "3", "--deterministic", "--quiet", "--cache-dir", str(tmp_path / "cache")]
    assert main([*argv, "--json"]) == 0
    cap = capsys.readouterr()
    assert cap.err == ""
    payload = json.loads(cap.out)
    board = payload["leaderboard"]
    assert {r["name"] for r in board if r["kind"] == "baseline"} == BASELINES
    assert [r["hr"] for r in board] == sorted((r["hr"] for r in board), reverse=True)
    best = payload["best"]
    assert best["hr"] >= payload["default"]["hr"]
    emb = load(str(out))
    assert emb.meta["tune"]["trial"] == best["number"]
    assert emb.meta["tune"]["hr"] == best["hr"]
    settings = dict(best["settings"])
    assert emb.basket_rule == settings.pop("basket_rule")  # the rule the trial was scored with
    for name, v in settings.items():
        assert getattr(emb.report.trained_config(emb.config), name) == v
    assert emb.context is not None  # recommend scores as the trial was scored
    # the text table, and the refusal to overwrite
    assert main([*argv, "--overwrite"]) == 0
    text = capsys.readouterr().out
    assert "HR@10" in text and "ppmi-svd" in text and "best: " in text
    assert main(argv) == 1  # refuses before searching
    assert "already exists" in capsys.readouterr().err


# --- the budget is kept (issue 34) -------------------------------------------------------------------


@pytest.fixture
def fake_trials(baskets, monkeypatch):
    """A fake clock that only training moves, by 2e-4 s per unit of a trial's work (passes x dim x
    (negatives + 1)), and a fake ``train`` returning one real small space under the trial's settings.
    Yields the list of trials run, as ``(start, seconds)`` on the fake clock."""
    import importlib
    import types

    import likewise.training.tune as tune_module
    from likewise import Embeddings

    train_module = importlib.import_module("likewise.training.train")
    real = train_module.train(
        baskets,
        mode="basket",
        dim=8,
        epochs=2,
        min_count=1,
        seed=0,
        deterministic=True,
        completion="affinity",
    )
    now = [0.0]
    runs: list[tuple[float, float]] = []

    def fake_train(data, **kw):
        settings = {"dim": 100, "epochs": 10, "negative": 5} | {k: kw[k] for k in SPACE if k in kw}
        seconds = 2e-4 * settings["epochs"] * settings["dim"] * (settings["negative"] + 1)
        runs.append((now[0], seconds))
        now[0] += seconds
        # the settings as trained: the config holds them, and the report's resolved values
        meta = dict(real.meta)
        meta["resolved"] = {**meta["resolved"], **{k: v for k, v in settings.items() if k in RESOLVED}}
        emb = Embeddings(
            real.vectors, real.vocab, config=dataclasses.replace(real.config, **settings), meta=meta
        )
        emb.attach_context(real.context)
        return emb

    monkeypatch.setattr(train_module, "train", fake_train)
    monkeypatch.setattr(tune_module, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    return runs


def test_no_trial_starts_that_would_end_past_the_budget(baskets, fake_trials):
    """``tune --budget 30s`` ran 48.5 s: a trial started at 14 s ran 32 s. Now a trial is started only
    when the trials before it say it will end within the budget, and the result says why it stopped."""
    r = tune(baskets, mode="basket", budget_s="30s", seed=0, min_count=1, baselines=())
    assert len(fake_trials) == len(r.trials) >= 3  # the default trial and some random ones ran
    ends = [start + seconds for start, seconds in fake_trials]
    assert max(ends) <= 30.0, ends
    assert r.stopped.startswith("budget: the next trial, expected to take ")
    assert "past the 30 s budget; not started" in r.stopped
    projected = float(r.stopped.split("would end at ")[1].split(" s")[0])
    assert projected > 30.0 and r.elapsed_s <= 30.0


def test_the_command_says_why_the_search_stopped(baskets, fake_trials, tmp_path, capsys):
    txt = tmp_path / "baskets.txt"
    txt.write_text("\n".join(" ".join(b) for b in baskets) + "\n")
    argv = ["tune", str(txt), "-o", str(tmp_path / "m"), "--mode", "basket", "--min-count", "1"]
    argv += ["--budget", "30s", "--baselines", "", "--quiet", "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "of a 30 s budget (budget: the next trial, expected to take" in out
    assert max(start + seconds for start, seconds in fake_trials) <= 30.0


def test_expected_seconds_scales_the_slowest_rate_by_the_work():
    from likewise.training.tune import Trial, expected_seconds

    def trial(number, seconds, **settings):
        return Trial(number, {}, settings, 0.0, 0.0, 0.0, 0.0, seconds)

    default = trial(0, 50.0, dim=100, epochs=10, negative=5)  # holds epochs="auto" trials: not used
    done = [
        default,
        trial(1, 2.0, dim=10, epochs=10, negative=1),
        trial(2, 3.0, dim=10, epochs=10, negative=2),
    ]
    # rates 2/200 and 3/300 per unit: 0.01 s; 20 x 10 x 3 = 600 units -> 6 s
    assert expected_seconds(done, {"dim": 20, "epochs": 10, "negative": 2}, "basket") == pytest.approx(6.0)
    # sequence mode: the window multiplies the work
    assert expected_seconds(done[:1], {"dim": 100, "epochs": 10, "negative": 5, "window": 2}, "sequence") == (
        pytest.approx(100.0)
    )
    assert expected_seconds([default], {"dim": 200, "epochs": 10, "negative": 5}, "basket") == pytest.approx(
        100
    )
    assert expected_seconds([default], {}, "basket") == 50.0  # no work known: the longest trial
