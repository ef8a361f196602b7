"""The saved record, typed both ways: TrainReport, TrainConfig and ReadOptions written by ``to_dict`` and
read by one ``from_dict`` each, for the spaces of this version and every committed older one."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import likewise
from likewise import retail
from likewise.data.datasets import retail_orders, write_retail
from likewise.errors import CorruptModelError, InputError
from likewise.readers.resolve import NOT_SAVED, ReadOptions
from likewise.retail.update import UPDATE_READS, parent_read_options, update
from likewise.training.config import TrainConfig
from likewise.training.report import RESOLVED, Choice, Timings, TrainReport

FIXTURES = Path(__file__).parent / "fixtures"
DET = {"deterministic": True, "seed": 3, "backend": "cpu", "progress": False}


def _report(**kw) -> TrainReport:
    fields = {
        "mode": Choice("basket", "in-memory sets: each one a basket"),
        "sample": Choice(0.0, "basket mode"),
        "epochs": Choice(10, "auto: up to 50 passes"),
        "basket_rule": Choice("product", "HR@10 better"),
        "completion": Choice(None, "item-item wins"),
        "similar": Choice(4.0, "shrink 4 on held-out baskets"),
        "kept_share": 1.0,
        "dropped": None,
        "history": ({"epoch": 1, "loss": 0.5}, {"epoch": 2, "loss": 0.4}),
        "timings": Timings(read=1.0, train=2.0, completion=0.5, similar=0.25),
        "backend": "cpu",
        "threads": 1,
        "corpus": {"n_sequences": 3, "n_tokens": 9, "skipped_rows": {}},
        "min_count": 1,
        "max_items": None,
        "neg_group": 4,
    }
    return TrainReport(**{**fields, **kw})


def test_report_round_trip():
    report = _report()
    meta = json.loads(json.dumps(report.to_dict()))  # as the manifest holds it
    assert TrainReport.from_dict(meta) == report
    assert meta["resolved"] == {"mode": "basket", "sample": 0.0, "epochs": 10, "min_count": 1} | {
        "max_items": None,
        "neg_group": 4,
    }
    assert set(meta["resolved"]) == set(RESOLVED)
    torch = _report(backend="torch", device="cuda:0", world_size=2)
    assert TrainReport.from_dict(json.loads(json.dumps(torch.to_dict()))) == torch


def test_report_of_an_older_meta_reads_the_config():
    """Before meta["resolved"], the saved config held the values training used; they are read there."""
    old = {"mode": "basket", "sample": 0.0, "epochs": 7, "min_count": 1, "neg_group": 4, "dim": 8}
    report = TrainReport.from_dict({"mode_reason": "given", "train_seconds": 2}, old)
    assert (report.mode, report.epochs.value, report.min_count) == (Choice("basket", "given"), 7, 1)
    assert report.timings.train == 2.0 and report.history == () and report.basket_rule.value is None
    assert TrainReport.from_dict(None).timings.total == 0.0


@pytest.mark.parametrize(
    ("meta", "match"),
    [({"history": 3}, "meta\\['history'\\] == 3"), ({"train_seconds": "fast"}, "train_seconds")],
)
def test_a_damaged_report_is_refused_in_one_line(meta, match):
    with pytest.raises(CorruptModelError, match=match):
        TrainReport.from_dict(meta)


def test_train_config_round_trip_and_older_keys():
    config = TrainConfig(dim=16, epochs="auto", sample=None, backend="cpu", completion="affinity")
    assert TrainConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    # version 0.1 wrote "model": "sgns"; keys a version does not know are ignored, missing ones default
    assert TrainConfig.from_dict({"model": "sgns", "dim": 8}) == TrainConfig(dim=8)
    with pytest.raises(InputError, match="saved config: dim == -1, must be"):
        TrainConfig.from_dict({"dim": -1})
    with pytest.raises(InputError, match="must be a JSON object, got list"):
        TrainConfig.from_dict([1, 2])


def test_read_options_round_trip():
    read = ReadOptions(
        basket_col="order",
        item_col="product",
        user_col="customer",
        time_col="ts",
        sessions="30m",
        type_col="event",
        type_map="view=product,buy=product",
        basket_scope="customer",
        na_values=("NA", ""),
        on_bad_rows="skip",
        sql="select 1",
        as_order_log=True,
    )
    saved = json.loads(json.dumps(read.to_dict()))
    assert not set(NOT_SAVED) & set(saved) and saved["type_map"] == {"view": "product", "buy": "product"}
    back = ReadOptions.from_dict(saved)
    assert back == dataclasses.replace(read, sql=None, na_values=["NA", ""])
    typed = ReadOptions(basket_col="o", type_cols=(("product", "p"), ("campaign", "c")))
    assert ReadOptions.from_dict(typed.to_dict()).to_dict()["type_cols"] == {"product": "p", "campaign": "c"}
    with pytest.raises(InputError, match="unknown option 'colour'"):
        ReadOptions.from_dict({"colour": "red"})
    with pytest.raises(InputError, match="unknown option 'sql'"):
        ReadOptions.from_dict({"sql": "select 1"})
    with pytest.raises(InputError, match="saved read options: duration 'soon'"):
        ReadOptions.from_dict({"sessions": "soon"})


@pytest.mark.parametrize(
    "folder", sorted(p.name for p in FIXTURES.iterdir() if (p / "manifest.json").exists())
)
def test_every_committed_fixture_loads_with_its_report(folder):
    emb = likewise.load(FIXTURES / folder)
    manifest = json.loads((FIXTURES / folder / "manifest.json").read_text())
    assert isinstance(emb.config, TrainConfig) and emb.config.dim == manifest["config"]["dim"] == emb.dim
    report = emb.report
    assert report.epochs.value == manifest["config"]["epochs"]  # the older config held the passes used
    assert report.basket_rule.value == emb.basket_rule and report.completion.value == emb.completion
    assert report.timings.total == 0.0 and report.history == ()


def test_config_is_what_was_asked_and_the_report_what_was_resolved(tmp_path):
    baskets = [{"a", "b", "c"}, {"b", "c"}, {"a", "c", "d"}] * 30
    emb = likewise.train(baskets, dim=8, epochs=2, **DET)
    assert isinstance(emb.config, TrainConfig)
    assert (emb.config.mode, emb.config.sample, emb.config.min_count) == ("auto", None, None)
    assert emb.report.mode.value == "basket" and emb.report.sample.value == 0.0 and emb.report.min_count == 1
    assert emb.report.backend == "cpu" and emb.config.backend == "cpu"
    trained = emb.report.trained_config(emb.config)
    assert (trained.mode, trained.epochs, trained.neg_group) == ("basket", 2, emb.report.neg_group)
    emb.save(tmp_path / "m")
    back = likewise.load(tmp_path / "m")
    assert back.config == emb.config and back.report == emb.report
    with pytest.raises(dataclasses.FrozenInstanceError):
        back.config.dim = 4  # type: ignore[misc]
    # a space not trained by likewise has no config, and says so in its manifest
    plain = likewise.Embeddings(np.ones((2, 3), np.float32), likewise.Vocab(["x", "y"]))
    plain.save(tmp_path / "plain")
    assert plain.config is None and likewise.load(tmp_path / "plain").config is None


def test_a_damaged_config_or_report_is_refused_at_load(tmp_path):
    emb = likewise.train([["a", "b", "c"]] * 40, dim=8, epochs=1, **DET)
    for key, value, match in (
        ("config", {"dim": 0}, "saved config: dim == 0"),
        ("meta", {"history": 1}, "history"),
    ):
        folder = tmp_path / key
        emb.save(folder)
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest[key] = {**manifest[key], **value}
        (folder / "manifest.json").write_text(json.dumps(manifest))
        with pytest.raises(CorruptModelError, match=match):
            likewise.load(folder)


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A small order log split in time, its first part trained and saved."""
    root = tmp_path_factory.mktemp("report_shop")
    data = retail_orders(300, 120, seed=1)
    t1 = np.quantile(data.timestamp, 0.7)
    write_retail(data.subset(data.timestamp < t1), root / "first", formats=("parquet",))
    write_retail(data.subset(data.timestamp >= t1), root / "later", formats=("parquet",))
    emb = retail.train_from_log(
        root / "first" / "orders.parquet", time_col="timestamp", dim=8, epochs=2, min_count=1, **DET
    )
    emb.save(root / "m0")
    return root


def test_update_reads_the_saved_read_options(shop):
    root = shop
    parent = likewise.load(root / "m0")
    saved = parent.meta["read"]
    assert saved["basket_col"] == "order_id" and saved["user_col"] == "customer_id"
    assert saved["time_col"] == "timestamp" and saved["as_order_log"] is True
    assert parent_read_options(parent) == ReadOptions.from_dict(saved)
    new = update(root / "m0", root / "later" / "orders.parquet", root / "m1")
    # the child's record: the config as asked, the passes it trained in its report
    assert new.config == parent.config and new.report.epochs.value == 2 == len(new.meta["history"])
    assert likewise.load(root / "m1").meta["read"] == saved
    # an older model (meta["retail"] alone) is read by its columns, and trains the same
    older = root / "m0-older"
    shutil.copytree(root / "m0", older)
    manifest = json.loads((older / "manifest.json").read_text())
    del manifest["meta"]["read"]
    (older / "manifest.json").write_text(json.dumps(manifest))
    old_parent = likewise.load(older)
    assert {n: getattr(parent_read_options(old_parent), n) for n in UPDATE_READS} == {
        n: getattr(parent_read_options(parent), n) for n in UPDATE_READS
    }
    again = update(older, root / "later" / "orders.parquet")
    assert np.array_equal(again.vectors, new.vectors) and again.keys == new.keys
    # what update reads by is meta["read"]: a column renamed there is the column it looks for
    renamed = root / "m0-renamed"
    shutil.copytree(root / "m0", renamed)
    manifest["meta"]["read"] = {**saved, "time_col": "when_bought"}
    (renamed / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="when_bought"):
        update(renamed, root / "later" / "orders.parquet")
    manifest["meta"]["read"] = {**saved, "colour": "red"}
    (renamed / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="meta\\['read'\\]: saved read options: unknown option 'colour'"):
        update(renamed, root / "later" / "orders.parquet")
