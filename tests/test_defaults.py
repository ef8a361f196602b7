"""Defaults that fit the data (issue 12): the mode follows the input, nothing is dropped silently."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import likewise
from likewise.cli import main
from likewise.errors import UnknownItemError
from likewise.readers import InputSpec
from likewise.train import infer_mode, plan_epochs, validation_completion

DEPARTMENTS = {
    "outdoor": ["tent", "sleeping bag", "rain jacket", "trail shoes", "headlamp"],
    "kitchen": ["kettle", "coffee mug", "cutting board", "tea towels", "chef knife"],
    "office": ["planner", "desk lamp", "laptop sleeve", "notebook", "stapler"],
}
DEPT = {p: d for d, ps in DEPARTMENTS.items() for p in ps}


def seed_shop(seed: int) -> list[tuple[int, str]]:
    """The seed supermarket: 400 baskets of 3 products of one department, one in five with a random extra."""
    rng = random.Random(seed)
    rows = []
    every = sorted(DEPT)
    for order in range(400):
        items = rng.sample(DEPARTMENTS[rng.choice(sorted(DEPARTMENTS))], 3)
        if rng.random() < 0.2:
            items.append(rng.choice(every))
        rows += [(order, it) for it in items]
    return rows


def write_orders(rows: list[tuple[int, str]], path: Path) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["order_id", "product"])
        w.writerows(rows)
    return path


def own_department(emb) -> int:
    return sum(DEPT[k] == DEPT[q] for q in ("tent", "kettle", "planner") for k in emb.similar(q, k=3).keys)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_default_command_on_the_seed_shop_gets_every_neighbour_right(tmp_path, capsys, seed):
    orders = write_orders(seed_shop(seed), tmp_path / "orders.csv")
    cache = str(tmp_path / "cache")
    args = ["train", str(orders), "--basket-col", "order_id", "--item-col", "product", "-o"]
    assert main([*args, str(tmp_path / "m"), "--cache-dir", cache, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mode"] == "basket" and "no ordering column" in summary["mode_reason"]
    assert summary["tokens_kept"] == 1.0
    assert own_department(likewise.load(str(tmp_path / "m"))) == 9


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_same_through_a_pyarrow_table(seed):
    rows = seed_shop(seed)
    table = pa.table({"order_id": [o for o, _ in rows], "product": [p for _, p in rows]})
    emb = likewise.train(table, basket_col="order_id", item_col="product")
    assert emb.config["mode"] == "basket"
    assert own_department(emb) == 9


def test_in_memory_lists_are_not_wiped_out_by_subsampling():
    baskets: dict[int, list[str]] = {}
    for o, p in seed_shop(1):
        baskets.setdefault(o, []).append(p)
    emb = likewise.train(list(baskets.values()), seed=1)
    assert emb.config["mode"] == "sequence" and "keep their order" in emb.meta["mode_reason"]
    assert emb.config["sample"] == pytest.approx(1 / 15)
    assert emb.meta["kept_share"] > 0.95
    assert own_department(emb) == 9
    sets = likewise.train([set(b) for b in baskets.values()], seed=1)
    assert sets.config["mode"] == "basket"


def test_mode_is_inferred_from_what_the_input_says(tmp_path):
    assert infer_mode(InputSpec(paths=("x.csv",), basket_col="o", item_col="p"))[0] == "basket"
    assert (
        infer_mode(InputSpec(paths=("x.csv",), basket_col="o", item_col="p", order_col="t"))[0] == "sequence"
    )
    assert infer_mode("corpus.txt")[0] == "sequence"
    assert likewise.train([["a", "b"]] * 20, mode="basket", min_count=1).config["mode"] == "basket"


def test_rare_product_is_reported_and_explained(tmp_path, capsys):
    rows = seed_shop(1) + [(o, "camping stove") for o in (1, 2, 3)]
    orders = write_orders(rows, tmp_path / "orders.csv")
    out = str(tmp_path / "m")
    args = ["train", str(orders), "--basket-col", "order_id", "--item-col", "product", "-o", out]
    assert main([*args, "--cache-dir", str(tmp_path / "cache")]) == 0
    text = capsys.readouterr().out
    assert "1 item dropped" in text and "'camping stove' (3)" in text and "min_count=5" in text
    assert main(["similar", out, "camping stove"]) == 1
    err = capsys.readouterr().err
    assert "seen 3 times, below min_count=5" in err and "--min-count 3" in err
    emb = likewise.load(out)  # the record survives saving and loading
    with pytest.raises(UnknownItemError, match="seen 3 times") as info:
        emb.similar("camping stove")
    assert info.value.note is not None
    with pytest.raises(UnknownItemError, match="did you mean 'tent'"):
        emb.similar("tnet")
    assert "camping stove" not in emb
    # Kept when asked.
    assert main([*args[:-1], str(tmp_path / "m3"), "--min-count", "3", "--quiet"]) == 0
    assert "camping stove" in likewise.load(str(tmp_path / "m3"))


def test_max_items_drops_are_explained():
    seqs = [["a", "b", "c"]] * 5 + [["a", "b"]] * 5
    emb = likewise.train(seqs, min_count=1, max_items=2, mode="basket")
    assert emb.meta["dropped"]["past_max_items"] == 1
    with pytest.raises(UnknownItemError, match="max_items=2"):
        emb.vector("c")


def test_train_help_shows_every_default(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    for shown in ("(default: 5)", "(default: 100)", "(default: auto)", "(default: 0.025)", "(default: 0.0)"):
        assert shown in text


def test_epochs_auto_plans_from_size_and_stops_on_held_out_completion():
    assert plan_epochs(13_000_000) == 5  # a large text corpus keeps word2vec's 5
    assert plan_epochs(1_000_000) == 12
    assert plan_epochs(1_000) == 50
    rows = seed_shop(2)
    table = pa.table({"order_id": [o for o, _ in rows], "product": [p for _, p in rows]})
    emb = likewise.train(table, basket_col="order_id", item_col="product", deterministic=True)
    assert isinstance(emb.config["epochs"], int) and 5 <= emb.config["epochs"] <= 50
    assert "stopped on MRR@10" in emb.meta["epochs_reason"]
    # The probe ran at least as many passes as the final run, which trains them all on everything.
    assert len(emb.meta["validation_mrr"]) >= emb.config["epochs"] == len(emb.meta["history"])
    assert "then" in emb.meta["epochs_reason"] and "passes on all the data" in emb.meta["epochs_reason"]
    fixed = likewise.train(table, basket_col="order_id", item_col="product", epochs=7)
    assert fixed.config["epochs"] == 7 and len(fixed.meta["history"]) == 7
    assert fixed.meta["epochs_reason"] == "set by the caller"


def test_validation_completion_ranks_as_recommend_does():
    emb = likewise.train([set(b) for b in _baskets(seed_shop(3))], epochs=5, seed=3, deterministic=True)
    rng = np.random.default_rng(0)
    queries, hidden, hits = [], [], 0
    for b in _baskets(seed_shop(4))[:60]:
        ids = np.unique([emb.vocab.id(k) for k in b])
        if len(ids) < 2:
            continue
        h = int(rng.choice(ids))
        q = ids[ids != h]
        queries.append(q)
        hidden.append(h)
        hits += h in emb.recommend([int(i) for i in q], k=10).ids.tolist()
    bias = emb.affinity_bias
    _, hr = validation_completion(emb.vectors, emb.context, bias, queries, np.asarray(hidden))
    assert hr == pytest.approx(hits / len(hidden))


def _baskets(rows: list[tuple[int, str]]) -> list[list[str]]:
    out: dict[int, list[str]] = {}
    for o, p in rows:
        out.setdefault(o, []).append(p)
    return list(out.values())


def test_quantity_col_without_user_col_is_a_clear_error(tmp_path, capsys):
    orders = write_orders(seed_shop(1), tmp_path / "orders.csv")
    args = ["train", str(orders), "--basket-col", "order_id", "--item-col", "product"]
    assert main([*args, "-o", str(tmp_path / "m"), "--quantity-col", "qty"]) == 1
    assert "--quantity-col qty needs --user-col" in capsys.readouterr().err
