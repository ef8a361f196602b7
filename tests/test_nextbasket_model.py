"""The next-basket model as a typed record: saved and read back unchanged, and weights fitted on other
features than the code computes refused in one line naming the retrain command, by the Python API, the
CLI, the service and an update."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from _saved import edit_next_basket

import likewise
from likewise import retail
from likewise.cli import main
from likewise.data.datasets import retail_orders, write_retail
from likewise.errors import CorruptModelError, InputError, ModelMismatchError
from likewise.nextbasket import features
from likewise.nextbasket.features import COLUMNS, FEATURES, FeatureColumns
from likewise.nextbasket.model import RETRAIN, NextBasketModel, retrain_command

COLUMNS_READ = "--basket-col order_id --item-col product_id --user-col customer_id --time-col timestamp"
RETRAIN_HERE = f"likewise train LOG {COLUMNS_READ} -o MODEL"


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> dict[str, Path]:
    """A space trained from the older half of an order log (saved), and the newer half (a new log)."""
    root = tmp_path_factory.mktemp("nbmodel")
    shop = write_retail(retail_orders(200, 120, seed=1), root / "shop", formats=("parquet",))
    log = pq.read_table(Path(shop["path"]) / "orders.parquet")
    log = log.sort_by([("timestamp", "ascending"), ("order_id", "ascending")])
    cut = log.column("timestamp")[log.num_rows // 2]
    pq.write_table(log.filter(pc.less(log.column("timestamp"), cut)), root / "first.parquet")
    pq.write_table(log.filter(pc.greater_equal(log.column("timestamp"), cut)), root / "second.parquet")
    columns = {"basket_col": "order_id", "item_col": "product_id", "user_col": "customer_id"}
    emb = likewise.train(
        str(root / "first.parquet"), **columns, time_col="timestamp", dim=8, epochs=1, seed=1, progress=False
    )
    emb.save(root / "m")
    return {"model": root / "m", "new": root / "second.parquet", "root": root}


def _drop_feature(name: str):
    """An edit that removes feature ``name`` from the record consistently (its weight, mean and scale
    too): what a version that did not compute it would have saved."""

    def change(rec: dict) -> None:
        at = rec["features"].index(name)
        for part in ("features", "mean", "scale", "weights"):
            del rec[part][at]

    return change


@pytest.fixture(scope="module")
def older(shop) -> Path:
    """The space as a version that did not compute ``due_4.0_inf`` saved it."""
    return edit_next_basket(shop["model"], shop["root"] / "older", _drop_feature("due_4.0_inf"))


# ------------------------------------------------------------------ the record, saved and read back


def test_the_saved_record_reads_back_and_writes_the_same_json(shop):
    manifest = json.loads((shop["model"] / "manifest.json").read_text(encoding="utf-8"))
    saved = manifest["customers"]["config"]["next_basket"]
    model = likewise.load(shop["model"]).customers.next_basket
    assert isinstance(model, NextBasketModel) and model.rule == "fitted"
    assert model.features == FEATURES and len(model.weights) == len(FEATURES) + 1
    assert model.to_dict() == saved
    assert json.dumps(model.to_dict()) == json.dumps(saved)  # the same keys in the same order
    assert NextBasketModel.from_dict(model.to_dict()) == model


@pytest.mark.parametrize(
    "record",
    [
        {"rule": "own", "reason": "1 customer(s) with two baskets or more: too few to fit on",
         "neighbours": 100, "validation": None},
        {"features": ["bought", "share"], "mean": [0.5, 0.1, 0.0], "scale": [0.5, 0.2, 1.0],
         "weights": [1.0, -2.0, 0.25], "neighbours": 100,
         "validation": {"customers": 30, "recall_at_10": 0.2, "recall_at_10_own_most_bought": 0.3},
         "rule": "own", "reason": "the customers' own most-bought lists did better on the held-out baskets"},
    ],
)  # fmt: skip
def test_the_own_rule_records_round_trip(record):
    model = NextBasketModel.from_dict(record)
    assert model.rule == "own"
    assert json.dumps(model.to_dict()) == json.dumps(record)


def test_the_customer_table_keeps_the_model_typed_and_its_config_plain(shop):
    table = likewise.load(shop["model"]).customers
    assert "next_basket" not in table.config
    assert table.saved_config["next_basket"] == table.next_basket.to_dict()
    with pytest.raises(InputError, match="given twice"):
        type(table)(
            np.asarray(table.vectors),
            table.vocab,
            table.bought_indptr,
            table.bought_ids,
            fingerprint=table.fingerprint,
            config=table.saved_config,
            next_basket=table.next_basket,
        )


def test_a_bad_record_is_refused_at_read_in_one_line():
    with pytest.raises(InputError, match="'neighbours' is 0, expected a whole number") as e:
        NextBasketModel.from_dict({"rule": "own", "neighbours": 0})
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="'validation' is 'good', expected an object or null"):
        NextBasketModel.from_dict({"rule": "own", "neighbours": 5, "validation": "good"})


# ------------------------------------------------------------------ features by name


def test_features_are_read_by_name_and_computed_for_every_name():
    assert COLUMNS.names == FEATURES and COLUMNS["bought"] == 0
    x = np.arange(2 * len(FEATURES), dtype=np.float64).reshape(2, -1)
    assert np.array_equal(COLUMNS.of(x, "history_neighbours"), x[:, FEATURES.index("history_neighbours")])
    with pytest.raises(InputError, match=r"\['spend'\] not named, \['share'\] lacking"):
        FeatureColumns(["bought", "share"]).stack({"bought": np.zeros(2), "spend": np.zeros(2)})
    with pytest.raises(InputError, match="repeat"):
        FeatureColumns(["bought", "bought"])


# ------------------------------------------------------------------ weights fitted on other features


def test_the_retrain_command_spells_the_spaces_columns():
    assert retrain_command(None) == RETRAIN
    assert retrain_command({"basket_col": "order_id", "item_col": "product_id"}) == RETRAIN  # no customers
    read = {"basket_col": "order_id", "item_col": "product_id", "user_col": "customer_id"}
    assert retrain_command({**read, "time_col": "timestamp", "quantity_col": None}) == RETRAIN_HERE
    typed = {**read, "type_col": "event", "type_map": {"view": "product", "buy": "product"}}
    assert "--type-col event --type-map view=product,buy=product -o MODEL" in retrain_command(typed)
    assert "--sessions 30m" in retrain_command({**read, "sessions": "30m"})
    assert "'my orders'" in retrain_command({**read, "basket_col": "my orders"})  # quoted for a shell


def test_weights_fitted_on_other_features_are_refused_by_the_python_api(older):
    emb = likewise.load(older)  # the record itself is well formed: it loads
    customer = emb.customers.keys[0]
    with pytest.raises(ModelMismatchError) as e:
        retail.next_basket(emb, customer, k=5)
    msg = str(e.value)
    assert isinstance(e.value, CorruptModelError) and "\n" not in msg
    n = len(FEATURES)
    assert f"fitted on {n - 1} features, this version computes {n}: 'due_4.0_inf' is new" in msg
    assert "other features" in msg and RETRAIN_HERE in msg


def test_a_feature_the_code_adds_is_named_when_the_saved_weights_lack_it(shop, monkeypatch):
    emb = likewise.load(shop["model"])
    monkeypatch.setattr(features, "FEATURES", (*FEATURES, "new_feature"))
    with pytest.raises(ModelMismatchError, match=r"this version computes \d+: 'new_feature' is new"):
        retail.next_basket(emb, emb.customers.keys[0])
    monkeypatch.setattr(features, "FEATURES", FEATURES[1:])
    with pytest.raises(ModelMismatchError, match="'bought' is no longer computed"):
        retail.next_basket(emb, emb.customers.keys[0])
    monkeypatch.setattr(features, "FEATURES", (FEATURES[1], FEATURES[0], *FEATURES[2:]))
    with pytest.raises(ModelMismatchError, match="the same names in another order"):
        retail.next_basket(emb, emb.customers.keys[0])


def test_weights_fitted_on_other_features_are_one_line_on_the_cli(older, capsys):
    customer = likewise.load(older).customers.keys[0]
    code = main(["next-basket", str(older), customer])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "'due_4.0_inf' is new" in err and RETRAIN_HERE in err


def test_weights_fitted_on_other_features_are_a_409_over_http(older):
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from test_reliability_service import call, make_app

    customer = likewise.load(older).customers.keys[0]
    r = call(make_app(older), "POST", "/models/shop/next_basket", json={"customer": customer, "k": 5})
    assert r.status_code == 409, r.text
    assert "'due_4.0_inf' is new" in r.json()["error"] and RETRAIN_HERE in r.json()["error"]


def test_an_update_refuses_weights_fitted_on_other_features(shop, older, tmp_path, monkeypatch):
    from likewise.retail import update as update_module
    from likewise.retail.update import update

    def read_nothing(*args, **kwargs):
        raise AssertionError("the new log was read: the refusal must come before any work")

    with monkeypatch.context() as m:
        m.setattr(update_module, "_new_corpus", read_nothing)
        with pytest.raises(ModelMismatchError, match="'due_4.0_inf' is new") as e:
            update(older, str(shop["new"]), tmp_path / "updated")
    assert RETRAIN_HERE in str(e.value)
    assert not (tmp_path / "updated").exists()
    updated = update(shop["model"], str(shop["new"]))  # weights that fit are carried over
    assert updated.customers.next_basket == likewise.load(shop["model"]).customers.next_basket
