"""The command line end to end: train -> similar / recommend / analogy / info, JSON, and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from likewise.cli import main
from likewise.data.datasets import demo_baskets


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    data = d / "baskets.txt"
    data.write_text("\n".join(",".join(b) for b in demo_baskets(400, seed=1)) + "\n")
    out = d / "model"
    rc = main(
        [
            "train",
            str(data),
            "-o",
            str(out),
            "--mode",
            "basket",
            "--delimiter",
            ",",
            "--dim",
            "8",
            "--negative",
            "2",
            "--epochs",
            "15",
            "--min-count",
            "1",
            "--sample",
            "0",
            "--deterministic",
            "--quiet",
            "--cache-dir",
            str(d / "cache"),
        ]
    )
    assert rc == 0
    return out


def run_json(capsys, *argv):
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_similar_table_and_json(model, capsys):
    assert main(["similar", str(model), "tent", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "similar to tent:" in out and "score" in out and "baskets" in out  # cosine weighed by evidence
    got = run_json(capsys, "similar", str(model), "tent", "kettle", "tent", "-k", "3")["answers"]
    assert [g["query"] for g in got] == ["tent", "kettle", "tent"]
    outdoor = {"sleeping bag", "headlamp", "trail shoes", "rain jacket"}
    assert {r["item"] for r in got[0]["results"]} <= outdoor
    assert len(got[1]["results"]) == 3 and got[2] == got[0]
    assert set(got[0]["results"][0]) == {"item", "id", "score", "name", "count"}
    scores = [r["score"] for r in got[0]["results"]]
    assert scores == sorted(scores, reverse=True)


def test_recommend_analogy_info(model, capsys):
    rec = run_json(capsys, "recommend", str(model), "tent", "headlamp", "-k", "3")["answers"]
    assert rec[0]["query"] == ["tent", "headlamp"]
    rec = rec[0]["results"]
    assert len(rec) == 3 and not {"tent", "headlamp"} & {r["item"] for r in rec}
    ana = run_json(capsys, "analogy", str(model), "tent", "headlamp", "kettle", "-k", "2")
    assert ana["method"] == "add" and ana["answers"][0]["query"] == ["tent", "headlamp", "kettle"]
    assert len(ana["answers"][0]["results"]) == 2
    info = run_json(capsys, "info", str(model))
    assert info["items"] == 15 and info["dim"] == 8 and info["table_bytes"] == 15 * 8 * 4
    assert info["resolved"]["mode"] == "basket" and info["config"]["dim"] == 8
    assert main(["info", str(model)]) == 0
    assert "fingerprint" in capsys.readouterr().out


def test_item_by_id(model, capsys):
    got = run_json(capsys, "similar", str(model), "#0", "-k", "2")["answers"]
    assert got[0]["query"] == "#0" and len(got[0]["results"]) == 2


def test_unknown_item_is_one_clear_line(model, capsys):
    capsys.readouterr()
    assert main(["similar", str(model), "tnet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "likewise: error: unknown item 'tnet' \u2014 did you mean 'tent'?"


def test_id_past_the_end_is_one_clear_line(model, capsys):
    capsys.readouterr()
    assert main(["similar", str(model), "#15"]) == 1
    err = capsys.readouterr().err
    assert "15 is out of range for a table of 15 rows" in err and "Traceback" not in err


def test_missing_input_and_model(tmp_path, capsys):
    capsys.readouterr()
    assert main(["train", str(tmp_path / "nope.txt"), "-o", str(tmp_path / "m"), "--quiet"]) == 1
    assert "nope.txt" in capsys.readouterr().err
    assert main(["info", str(tmp_path / "nomodel")]) == 1
    assert "nomodel" in capsys.readouterr().err


def test_existing_output_is_refused_before_training(model, tmp_path, capsys, monkeypatch):
    import importlib

    def boom(*a, **k):
        raise AssertionError("training must not start")

    # `likewise.train` is the function (re-exported); patch the module's attribute.
    monkeypatch.setattr(importlib.import_module("likewise.training.train"), "train", boom)
    data = tmp_path / "b.txt"
    data.write_text("a b\nb c\n")
    capsys.readouterr()
    assert main(["train", str(data), "-o", str(model), "--quiet"]) == 1
    assert "already exists; pass overwrite=True (--overwrite)" in capsys.readouterr().err
    other = tmp_path / "not-a-space"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    assert main(["train", str(data), "-o", str(other), "--overwrite", "--quiet"]) == 1
    assert "not a saved likewise space" in capsys.readouterr().err
    assert (other / "precious.txt").read_text() == "keep me"


def test_debug_shows_the_exception(model):
    from likewise.errors import UnknownItemError

    with pytest.raises(UnknownItemError):
        main(["similar", str(model), "tnet", "--debug"])


def test_bad_argument_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", "x", "-o", "y", "--dim", "0"])
    assert e.value.code == 2
    assert "0 must be >= 1" in capsys.readouterr().err


def test_installed_command_runs(model):
    """The console script itself, in a fresh process (nothing imported by the test leaks in)."""
    exe = Path(sys.executable).with_name("likewise")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "likewise.cli"]
    r = subprocess.run(
        [*cmd, "similar", str(model), "planner", "-k", "3", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert r.returncode == 0, r.stderr
    office = {"notebook", "desk lamp", "pen set", "laptop sleeve"}
    assert {x["item"] for x in json.loads(r.stdout)["answers"][0]["results"]} <= office
    r = subprocess.run([*cmd, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "train" in r.stdout and "demo" in r.stdout


def test_import_likewise_stays_light():
    code = (
        "import sys, likewise; heavy = [m for m in ('numba', 'torch', 'matplotlib', 'fastapi', "
        "'pyarrow') if m in sys.modules]; print(','.join(heavy))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == ""


def test_query_commands_do_not_load_the_trainer(model):
    """`similar` and `info` answer from the saved files alone: no numba, no pyarrow, no matplotlib."""
    code = (
        "import sys; from likewise.cli import main; "
        f"main(['similar', {str(model)!r}, 'tent', '--json']); main(['info', {str(model)!r}]); "
        "print('LOADED=' + ','.join(m for m in ('numba', 'pyarrow', 'matplotlib') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip().splitlines()[-1] == "LOADED="


def test_an_option_of_another_tool_gets_ours_suggested(capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", "x.csv", "-o", "m", "--basket-col", "o", "--item-col", "p", "--customer-col", "c"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --customer-col c" in err and "did you mean --user-col?" in err


@pytest.mark.parametrize(
    "command,option,default",
    [
        (["similar"], "-k K", "default: 10"),
        (["lookalike"], "-k K", "default: 100"),
        (["serve"], "--port PORT", "default: 8000"),
        (["train"], "--cache-dir CACHE_DIR", "default: $LIKEWISE_CACHE"),
        (["train"], "--half-life-days HALF_LIFE_DAYS", "default: none"),
    ],
)
def test_help_shows_the_defaults(capsys, command, option, default):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    after = text.split(f" {option} ", 1)[1]
    assert default in after[:200], after[:200]


def test_serve_on_a_busy_port_says_so_in_one_line(model, capsys):
    import socket

    pytest.importorskip("uvicorn")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["serve", str(model), "--port", str(port)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"likewise: error: cannot listen on 127.0.0.1:{port}") and "--port" in err
    assert err.count("\n") == 1


def test_split_of_a_log_with_spaces_in_names_writes_a_split_train_reads(tmp_path, capsys):
    log = tmp_path / "orders.csv"
    rows = [
        (o, p)
        for o in range(40)
        for p in (("red tent", "sleeping bag") if o % 2 else ("kettle", "coffee mug"))
    ]
    log.write_text("order_id,product\n" + "".join(f"{o},{p}\n" for o, p in rows))
    out = tmp_path / "split"
    argv = [
        "split",
        str(log),
        "--basket-col",
        "order_id",
        "--item-col",
        "product",
        "-o",
        str(out),
        "--seed",
        "0",
    ]
    assert main(argv) == 0
    hint = capsys.readouterr().out.strip().splitlines()[-1]
    assert hint.endswith("--delimiter ','")
    assert {"red tent,sleeping bag", "kettle,coffee mug"} >= set(
        out.joinpath("train.txt").read_text().split("\n")[:-1]
    )
    assert (
        main(
            [
                "train",
                str(out / "train.txt"),
                "--mode",
                "basket",
                "--delimiter",
                ",",
                "--min-count",
                "1",
                "--quiet",
                "-o",
                str(tmp_path / "m"),
                "--cache-dir",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "m"), "--holdout", str(out), "--baselines", ""]) == 0


def test_recommend_and_complete_say_what_they_are(model, capsys):
    """The same ranking, each titled by its basket; each --help names the other."""
    assert main(["recommend", str(model), "tent", "headlamp", "-k", "3"]) == 0
    rec = capsys.readouterr().out
    assert main(["complete", str(model), "tent", "headlamp", "-k", "3"]) == 0
    com = capsys.readouterr().out
    assert rec.splitlines()[0] == com.splitlines()[0] == "to add to tent, headlamp:"
    assert [ln.split()[1] for ln in rec.splitlines()[3:]] == [ln.split()[1] for ln in com.splitlines()[3:]]
    for cmd, other in (("recommend", "complete"), ("complete", "recommend")):
        with pytest.raises(SystemExit):
            main(["--help"])
        assert f"`{other}`" in capsys.readouterr().out.split(f"\n    {cmd} ")[1].split("\n    ")[0]


# ---- under torchrun: commands other than train run on rank 0 alone (issue 32 item 5) ----------------


def test_under_torchrun_a_query_prints_on_rank_0_only(model, capsys, monkeypatch):
    """Every rank of ``torchrun --nproc_per_node 2 -m likewise similar ...`` used to answer; now rank 1
    exits at once with nothing printed, and rank 0 answers once and says the command runs there alone."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    capsys.readouterr()
    assert main(["similar", str(model), "tent", "-k", "3"]) == 0
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("RANK", "0")
    assert main(["similar", str(model), "tent", "-k", "3", "--json"]) == 0
    out, err = capsys.readouterr()
    assert [q["query"] for q in json.loads(out)["answers"]] == ["tent"]
    assert "'similar' runs in one process: rank 0 of this torchrun of 2 answers" in err
    assert os.environ["WORLD_SIZE"] == "2" and os.environ["RANK"] == "0"  # given back as they were


def test_under_torchrun_a_command_that_trains_trains_on_rank_0_as_one_process(tmp_path, capsys, monkeypatch):
    """``demo`` trains: on rank 0 it sees one process (WORLD_SIZE=1), so it neither picks the torch
    backend for a multi-process run nor waits for ranks that have exited."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.delenv("MASTER_ADDR", raising=False)  # joining a process group would fail at once
    assert main(["demo", "-o", str(tmp_path / "demo"), "--json"]) == 0
    import likewise

    emb = likewise.load(tmp_path / "demo" / "model")
    assert emb.meta["backend"] == "cpu" and emb.meta.get("world_size", 1) == 1


def test_train_flags_are_the_option_dataclasses_fields():
    """Every field of TrainConfig, ReadOptions, RunOptions and CustomerOptions is a flag of ``likewise
    train`` of its name, or is listed as deliberately none (likewise.cli.train.NOT_FLAGS), and its
    options are built from the fields (no hand-kept list)."""
    import argparse
    import dataclasses

    from likewise import CustomerOptions, ReadOptions, RunOptions, TrainConfig
    from likewise.cli import build_parser
    from likewise.cli.train import FLAG_DEST, NOT_FLAGS, options_of

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["train"]
    dests = {a.dest for a in sub._actions}
    for cls in (TrainConfig, ReadOptions, RunOptions, CustomerOptions):
        for f in dataclasses.fields(cls):
            key = f"{cls.__name__}.{f.name}"
            assert key in NOT_FLAGS or FLAG_DEST.get(key, f.name) in dests, f"{key} has no flag"
    args = sub.parse_args(["in.txt", "-o", "m", "--dim", "12", "--basket-col", "b", "--query", "SELECT 1"])
    assert TrainConfig(**options_of(TrainConfig, args)) == TrainConfig(dim=12)
    read = options_of(ReadOptions, args)
    assert read["basket_col"] == "b" and read["sql"] == "SELECT 1" and "item_keys" not in read
