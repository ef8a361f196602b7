"""The retail workflow on the command line: datasets retail -> train --user-col -> queries -> update."""

from __future__ import annotations

import csv
import json

import pytest

from likewise.cli import main


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    d = tmp_path_factory.mktemp("retail_cli")
    assert (
        main(
            [
                "datasets",
                "retail",
                "-o",
                str(d / "shop"),
                "--customers",
                "600",
                "--products",
                "200",
                "--seed",
                "4",
                "--json",
            ]
        )
        == 0
    )
    model = d / "model"
    rc = main(
        [
            "train",
            str(d / "shop" / "orders.parquet"),
            "--basket-col",
            "order_id",
            "--item-col",
            "product_id",
            "--user-col",
            "customer_id",
            "--time-col",
            "timestamp",
            "--mode",
            "basket",
            "--dim",
            "16",
            "--epochs",
            "5",
            "--min-count",
            "1",
            "--deterministic",
            "-o",
            str(model),
            "--quiet",
        ]
    )
    assert rc == 0
    return d, model


def _json(capsys, argv):
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_train_summary_and_queries(shop, capsys):
    d, model = shop
    info = _json(capsys, ["info", str(model)])
    product = info["most_frequent"][0]
    got = _json(capsys, ["also-bought", str(model), product, "-k", "3"])
    assert len(got["answers"][0]["results"]) == 3 and product not in [
        r["item"] for r in got["answers"][0]["results"]
    ]
    got = _json(capsys, ["complete", str(model), product, info["most_frequent"][1], "-k", "4"])
    assert len(got["answers"][0]["results"]) == 4
    got = _json(capsys, ["for-customer", str(model), "C000001", "-k", "5"])
    assert len(got["answers"][0]["results"]) == 5
    got = _json(capsys, ["similar-customers", str(model), "C000001", "-k", "2"])
    assert [r["item"] for r in got["answers"][0]["results"]] != ["C000001"] and len(
        got["answers"][0]["results"]
    ) == 2
    main(["also-bought", str(model), product, "-k", "3"])
    text = capsys.readouterr().out
    assert text.startswith(f"bought with {product}:") and "score" in text


def test_lookalike_export(shop, capsys, tmp_path):
    d, model = shop
    seeds = tmp_path / "seeds.csv"
    seeds.write_text("customer_id\nC000001\nC000002\n")
    out = tmp_path / "audience.csv"
    got = _json(
        capsys,
        [
            "lookalike",
            str(model),
            "C000003",
            "--seeds-file",
            str(seeds),
            "-k",
            "25",
            "--method",
            "knn",
            "-o",
            str(out),
        ],
    )
    assert got["seeds"] == 3 and got["customers"] == len(list(csv.reader(out.open()))) - 1 > 0
    rows = list(csv.DictReader(out.open()))
    assert {"C000001", "C000002", "C000003"}.isdisjoint(r["customer_id"] for r in rows)


def test_errors_are_one_line(shop, capsys):
    d, model = shop
    assert main(["for-customer", str(model), "C999999"]) == 1
    assert capsys.readouterr().err.startswith("likewise: error: ")
    assert main(["complete", str(model), "no-such-product"]) == 1
    assert "no-such-product" in capsys.readouterr().err
    assert main(["lookalike", str(model)]) == 1
    assert "no seed customers" in capsys.readouterr().err
    assert (
        main(["train", str(d / "shop" / "orders.csv"), "--user-col", "customer_id", "-o", str(d / "x")]) == 1
    )
    assert "(--basket-col, --item-col;" in capsys.readouterr().err  # the one check, named for the CLI too


def test_sessions_and_update(shop, capsys):
    d, model = shop
    assert (
        main(
            [
                "train",
                str(d / "shop" / "orders.csv"),
                "--basket-col",
                "order_id",
                "--item-col",
                "product_id",
                "--user-col",
                "customer_id",
                "--time-col",
                "timestamp",
                "--sessions",
                "30m",
                "--dim",
                "8",
                "--epochs",
                "1",
                "--min-count",
                "1",
                "-o",
                str(d / "sess"),
                "--quiet",
            ]
        )
        == 0
    )
    # the same orders a year later under new ids: an update adds orders the model does not hold
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    log = csv.read_csv(d / "shop" / "orders.csv")
    later = pc.add(pc.cast(log["timestamp"], pa.timestamp("s")), pa.scalar(365 * 86400, pa.duration("s")))
    log = log.set_column(log.schema.get_field_index("timestamp"), "timestamp", later)
    log = log.set_column(0, "order_id", pc.add(log["order_id"], 10**7))
    csv.write_csv(log, d / "later.csv")
    got = _json(
        capsys, ["update", str(model), str(d / "later.csv"), "-o", str(d / "model2"), "--epochs", "1"]
    )
    assert got["parent"] == str(model) and got["new_products"] == 0 and got["customers"] == 600
    assert got["skipped_orders"] == 0
    assert got["parent_fingerprint"] != got["fingerprint"]


def test_seeds_file_with_header_columns_skip_unknown_and_min_score(shop, capsys, tmp_path):
    d, model = shop
    seeds = tmp_path / "seeds.csv"
    seeds.write_text("name,cust\nann,C000001\nbob,C000002\nzed,NOPE-1\n")
    base = ["lookalike", str(model), "--seeds-file", str(seeds), "-k", "20"]
    assert main(base) == 1  # which column holds the ids?
    assert "--seed-col" in capsys.readouterr().err
    assert main([*base, "--seed-col", "cust"]) == 1  # an unknown seed is an error by default
    assert "NOPE-1" in capsys.readouterr().err
    got = _json(capsys, [*base, "--seed-col", "cust", "--skip-unknown"])
    assert got["unknown_seeds"] == ["NOPE-1"] and len(got["answers"][0]["results"]) == 20
    scores = sorted(r["score"] for r in got["answers"][0]["results"])
    cut = scores[10]
    capsys.readouterr()
    assert main([*base, "--seed-col", "cust", "--skip-unknown", "--min-score", str(cut)]) == 0
    out, err = capsys.readouterr()
    assert "skipped 1 unknown seed customer(s): 'NOPE-1'" in err
    printed = [ln for ln in out.splitlines()[3:] if ln.strip()]
    assert len(printed) == sum(s >= cut for s in scores) and f"score >= {cut:g}" in out
    tsv = tmp_path / "seeds.tsv"
    tsv.write_text("customer_id\tx\nC000001\t1\n")
    got = _json(capsys, ["lookalike", str(model), "--seeds-file", str(tsv), "-k", "5"])
    assert len(got["answers"][0]["results"]) == 5


def test_lookalike_says_why_it_wrote_fewer_than_k(shop, capsys, tmp_path):
    model = shop[1]
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("C000001\nC000002\nC000003\n")
    out = tmp_path / "aud.csv"
    argv = [
        "lookalike",
        str(model),
        "--seeds-file",
        str(seeds),
        "-k",
        "200",
        "--method",
        "knn",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    line = capsys.readouterr().out
    assert "wrote 150 customers" in line and len(out.read_text().splitlines()) == 151
    assert "fewer than -k 200: with --method knn each of the 3 seeds votes for its 50 nearest" in line
