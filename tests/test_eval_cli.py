"""The evaluation commands end to end: split -> train -> eval, export/import, sweep-dim, plot, errors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from likewise.baselines.counts import BASELINES
from likewise.baselines.peers import HAS_IMPLICIT
from likewise.cli import main
from likewise.data.datasets import demo_baskets, planted_baskets


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """Planted baskets as text, a split of them, and a model trained on the split's train part."""
    d = tmp_path_factory.mktemp("evalcli")
    baskets, labels = planted_baskets(n_groups=8, group_size=10, n_baskets=1500, zipf=1.0, seed=0)
    (d / "baskets.txt").write_text("\n".join(" ".join(b) for b in baskets) + "\n")
    (d / "labels.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in labels.items()))
    cache = str(d / "cache")
    assert (
        main(["split", str(d / "baskets.txt"), "-o", str(d / "split"), "--seed", "1", "--cache-dir", cache])
        == 0
    )
    argv = ["train", str(d / "split" / "train.txt"), "-o", str(d / "model"), "--mode", "basket", "--dim", "8"]
    argv += [
        "--min-count",
        "1",
        "--sample",
        "0",
        "--epochs",
        "8",
        "--deterministic",
        "--quiet",
        "--cache-dir",
        cache,
    ]
    assert main(argv) == 0
    return d


def run_json(capsys, *argv):
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_split_is_reproducible(work, capsys):
    info = run_json(
        capsys,
        "split",
        str(work / "baskets.txt"),
        "-o",
        str(work / "split2"),
        "--seed",
        "1",
        "--cache-dir",
        str(work / "cache"),
    )
    assert info["test_cases"] == 300 and info["train_sequences"] == 1200
    for name in ("train.txt", "test.tsv"):
        assert (work / "split" / name).read_bytes() == (work / "split2" / name).read_bytes()


def test_eval_holdout_table_markdown_json(work, capsys):
    capsys.readouterr()
    assert main(["eval", str(work / "model"), "--holdout", str(work / "split")]) == 0
    text = capsys.readouterr().out
    for word in ("HR@10", "NDCG@10", "MRR@10", "coverage", "popular", "cocount", "ppmi-svd", "winner"):
        assert word in text
    assert "ease" in text  # the closed-form item-item peer is a default row
    assert main(["eval", str(work / "model"), "--holdout", str(work / "split"), "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "| model |" in md and "|---|---:|" in md
    r = run_json(capsys, "eval", str(work / "model"), "--holdout", str(work / "split"), "-k", "5")
    h = r["holdout"]
    assert h["k"] == 5 and h["n"] == 300
    # the default baselines: the counts, EASE, and implicit's ALS where it is installed
    assert set(h["rows"]) == {"model", "model-cosine", *BASELINES}
    assert "ease" in h["rows"] and ("als" in h["rows"]) == HAS_IMPLICIT
    assert h["rows"]["model"]["hr"] > h["rows"]["popular"]["hr"]
    best = max(row["hr"] for row in h["rows"].values())
    assert h["rows"][h["winners"]["hr"].split(" = ")[0]]["hr"] == best


def test_eval_labels_and_baseline_choice(work, capsys):
    r = run_json(
        capsys,
        "eval",
        str(work / "model"),
        "--labels",
        str(work / "labels.tsv"),
        "--holdout",
        str(work / "split"),
        "--baselines",
        "popular",
    )
    assert set(r["holdout"]["rows"]) == {"model", "model-cosine", "popular"}
    assert r["labels"]["n"] == 80 and r["labels"]["accuracy"] > 0.9
    assert set(r["labels"]["per_label"]) == {f"g{i}" for i in range(8)}


def test_eval_word_tests_match_the_library(tmp_path, capsys):
    from likewise import Embeddings, Vocab
    from likewise.evaluate import evaluate_analogies, evaluate_pairs

    rng = np.random.default_rng(0)
    keys = ["king", "queen", "man", "woman", "Paris", "France", "Rome", "Italy"]
    emb = Embeddings(rng.standard_normal((8, 4)), Vocab(keys, np.arange(8, 0, -1)))
    emb.save(tmp_path / "m")
    q = tmp_path / "q.txt"
    q.write_text(": a\nking queen man woman\nman woman king queen\n: b\nparis france rome italy\nx y z w\n")
    p = tmp_path / "p.tsv"
    p.write_text("# w1\tw2\tscore\nking\tqueen\t8\nman\twoman\t7\nparis\trome\t3\nx\ty\t1\n")
    r = run_json(
        capsys, "eval", str(tmp_path / "m"), "--analogies", str(q), "--pairs", str(p), "--method", "both"
    )
    assert r["analogies"]["add"] == evaluate_analogies(emb, q)
    assert r["analogies"]["mul"] == evaluate_analogies(emb, q, method="mul")
    assert r["analogies"]["add"]["questions"] == 4 and r["analogies"]["add"]["oov"] == 1
    assert r["pairs"][str(p)] == pytest.approx(evaluate_pairs(emb, p))
    assert r["pairs"][str(p)]["oov"] == 1
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "m"), "--analogies", str(q), "--case-sensitive"]) == 0
    assert "2 of 4 questions skipped" in capsys.readouterr().out  # "paris" is not "Paris" any more


def test_export_import_round_trip(work, tmp_path, capsys):
    model = str(work / "model")
    for fmt, name in (("word2vec", "m.txt"), ("word2vec-binary", "m.bin")):
        run_json(capsys, "export", model, "--format", fmt, "-o", str(tmp_path / name))
        info = run_json(capsys, "import", str(tmp_path / name), "-o", str(tmp_path / (name + ".model")))
        assert info["format"] == fmt and info["items"] == 80
        run_json(
            capsys,
            "export",
            str(tmp_path / (name + ".model")),
            "--format",
            fmt,
            "-o",
            str(tmp_path / ("again" + name)),
        )
        assert (tmp_path / name).read_bytes() == (tmp_path / ("again" + name)).read_bytes()
    a = run_json(capsys, "similar", model, "g0_i1", "-k", "5")
    b = run_json(capsys, "similar", str(tmp_path / "m.bin.model"), "g0_i1", "-k", "5")
    assert [n["item"] for n in a["answers"][0]["results"]] == [n["item"] for n in b["answers"][0]["results"]]
    run_json(
        capsys,
        "export",
        model,
        "--format",
        "projector",
        "-o",
        str(tmp_path / "proj"),
        "--labels",
        str(work / "labels.tsv"),
    )
    assert (tmp_path / "proj" / "metadata.tsv").read_text().startswith("item\tlabel\tcount\n")


def test_sweep_dim_on_a_split(work, tmp_path, capsys):
    r = run_json(
        capsys,
        "sweep-dim",
        str(work / "split"),
        "--dims",
        "2,8",
        "--epochs",
        "3",
        "--min-count",
        "1",
        "--sample",
        "0",
        "--deterministic",
        "-o",
        str(tmp_path / "sweep"),
    )
    assert [row["dim"] for row in r["rows"]] == [2, 8]
    assert all(0 <= row["heldout_loss"] <= 1 and 0 <= row["hr"] <= 1 for row in r["rows"])
    assert set(r["baselines_hr"]) == {"popular", "cocount", "ease"}  # EASE, the strongest simple peer
    png, svg = (Path(p) for p in r["pictures"])
    assert png.suffix == ".png" and svg.suffix == ".svg"
    assert struct.unpack(">II", png.read_bytes()[16:24]) == (880, 440)


def test_sweep_dim_scores_hr_with_the_vectors_so_it_moves_with_the_dimension(work, capsys):
    """HR@k used to be scored with what recommend answers, the item-item model training kept at every
    size: the column was flat at EASE's value and said nothing about the dimension (docs/evaluate.md)."""
    argv = ["sweep-dim", str(work / "split"), "--dims", "1,8", "--epochs", "3", "--min-count", "1"]
    r = run_json(capsys, *argv, "--sample", "0", "--deterministic", "--baselines", "ease")
    assert r["scoring"] == "affinity"
    one, eight = (row["hr"] for row in r["rows"])
    assert one < eight and eight != r["baselines_hr"]["ease"]
    cos = run_json(
        capsys, *argv, "--sample", "0", "--deterministic", "--baselines", "", "--scoring", "cosine"
    )
    assert cos["scoring"] == "cosine" and [row["hr"] for row in cos["rows"]] != [one, eight]
    with pytest.raises(SystemExit):  # an item-item model does not depend on the dimension: not offered
        main([*argv, "--scoring", "itemitem"])


def test_sweep_dim_splits_raw_input(work, tmp_path, capsys):
    r = run_json(
        capsys,
        "sweep-dim",
        str(work / "baskets.txt"),
        "--dims",
        "4",
        "--epochs",
        "2",
        "--min-count",
        "1",
        "--cache-dir",
        str(work / "cache"),
        "--baselines",
        "",
    )
    assert len(r["rows"]) == 1 and r["rows"][0]["n"] > 250 and r["pictures"] == []


def test_plot_commands(work, tmp_path, capsys):
    r = run_json(
        capsys,
        "plot",
        str(work / "model"),
        "-o",
        str(tmp_path / "map.svg"),
        "--labels",
        str(work / "labels.tsv"),
    )
    assert Path(r["picture"]).read_text().startswith("<?xml")
    r = run_json(capsys, "plot", str(work / "model"), "--kind", "loss", "-o", str(tmp_path / "loss.png"))
    assert struct.unpack(">II", Path(r["picture"]).read_bytes()[16:24]) == (880, 440)


def test_split_with_a_delimiter_keeps_spaced_keys(tmp_path, capsys):
    data = tmp_path / "demo.txt"
    data.write_text("\n".join(",".join(b) for b in demo_baskets(200, seed=0)) + "\n")
    info = run_json(
        capsys,
        "split",
        str(data),
        "-o",
        str(tmp_path / "sp"),
        "--delimiter",
        ",",
        "--cache-dir",
        str(tmp_path / "c"),
    )
    assert info["test_cases"] == 40
    argv = [
        "train",
        str(tmp_path / "sp" / "train.txt"),
        "-o",
        str(tmp_path / "m"),
        "--delimiter",
        ",",
        "--mode",
        "basket",
    ]
    assert (
        main(
            [
                *argv,
                "--min-count",
                "1",
                "--dim",
                "4",
                "--epochs",
                "2",
                "--quiet",
                "--cache-dir",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    r = run_json(
        capsys, "eval", str(tmp_path / "m"), "--holdout", str(tmp_path / "sp"), "--baselines", "popular"
    )
    assert r["holdout"]["n"] == 40  # "sleeping bag" and friends survived the round trip


def test_errors_are_one_line(work, tmp_path, capsys):
    capsys.readouterr()
    assert main(["eval", str(work / "model")]) == 1
    assert "nothing to evaluate" in capsys.readouterr().err
    data = tmp_path / "d.csv"
    data.write_text("basket,item\n1,sleeping bag\n1,tent\n2,tent\n2,mug\n3,a\n3,b\n4,a\n4,c\n5,b\n5,c\n")
    argv = ["split", str(data), "-o", str(tmp_path / "sp"), "--basket-col", "basket", "--item-col", "item"]
    # a name with a space no longer stops a split of a log: it gets a separator train reads (issue 32)
    assert main([*argv, "--cache-dir", str(tmp_path / "c"), "--test-fraction", "0.5"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("--delimiter ','")
    (tmp_path / "bad.txt").write_text("oops\n")
    assert main(["import", str(tmp_path / "bad.txt"), "-o", str(tmp_path / "m")]) == 1
    assert "header" in capsys.readouterr().err
    assert main(["eval", str(work / "model"), "--holdout", str(tmp_path)]) == 1
    assert "not a split folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sweep-dim", str(work / "split"), "--dims", "0,2"])


def test_split_sequence_mode_hides_the_last_item(tmp_path, capsys):
    lines = [f"s{i % 7} a{i % 3} b{i % 5} c{i}" for i in range(50)] + ["lonely"]
    (tmp_path / "seq.txt").write_text("\n".join(lines) + "\n")
    argv = ["split", str(tmp_path / "seq.txt"), "-o", str(tmp_path / "sp"), "--mode", "sequence"]
    info = run_json(capsys, *argv, "--test-fraction", "0.5", "--cache-dir", str(tmp_path / "c"))
    assert (info["test_cases"], info["train_sequences"], info["too_short"]) == (25, 26, 1)
    rows = (tmp_path / "sp" / "test.tsv").read_text().splitlines()[1:]
    for row in rows:
        context, target = row.split("\t")
        assert f"{context} {target}" in lines and target.startswith("c")
