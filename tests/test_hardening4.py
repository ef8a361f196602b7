"""A hostile user's inputs (issue 43): each finding, fixed at its root, holds here.

Rules: a model that is saved can be loaded; a key is the text the user wrote; a message names the path,
the value and the fix; nothing is half-written.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import likewise
from likewise.cli import main
from likewise.errors import InputError


def strict_json(path: Path) -> dict:
    """A JSON file read as any strict reader would: NaN and Infinity are not JSON."""

    def refuse(token: str) -> None:
        raise AssertionError(f"{path} holds {token}, which is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ item 1: no NaN reaches a manifest


def test_orders_that_repeat_one_product_train_a_model_that_loads(tmp_path, capsys):
    """Every multi-line order repeats one product: no held-out case can be ranked, the MRR of none was
    NaN and the manifest held it (``info`` then failed). The affinity stays, and says why."""
    rng = random.Random(6)
    lines = ["order_id,customer_id,product_id"]
    for o in range(600):
        p = rng.randrange(60)
        lines += [f"{o},c{rng.randrange(20)},p{p}"] * rng.choice([1, 2, 3])
    log = tmp_path / "repeat.csv"
    log.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m"
    argv = ["train", log, "--basket-col", "order_id", "--item-col", "product_id", "--epochs", "1"]
    code, _, err = run([*argv, "--dim", "8", "-o", model], capsys)
    assert code == 0, err
    assert "Mean of empty slice" not in err
    manifest = strict_json(model / "manifest.json")
    assert manifest["meta"]["completion"] == "affinity"
    assert "two different items" in manifest["meta"]["completion_reason"]
    assert run(["info", model], capsys)[0] == 0
    likewise.load(model)


def test_the_manifest_writer_refuses_a_non_finite_number_before_replacing_anything(tmp_path):
    emb = likewise.train([["a", "b", "c"], ["b", "c"], ["a", "c"]] * 20, mode="basket", dim=4, epochs=1)
    target = tmp_path / "m"
    emb.save(target)
    before = (target / "manifest.json").read_bytes()
    emb.meta["itemitem"] = {"validation_mrr": {"1": float("nan")}}
    with pytest.raises(InputError, match=r"nan at /meta/itemitem/validation_mrr/1") as e:
        emb.save(target, overwrite=True)
    assert str(target) in str(e.value)
    assert (target / "manifest.json").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m"]  # no temporary left beside it
    likewise.load(target)
