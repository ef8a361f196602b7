"""Logs from where retailers keep them: PostgreSQL and SQLite (ADBC), DuckDB, hive folders, globs, S3.

Each source is read through the one log reader, so its corpus must equal, array for array, the corpus of
the same rows read from a Parquet file. The servers are real and on loopback (tests/_servers.py):
PostgreSQL started with pg_ctl, S3 from moto's server; nothing here mocks a driver.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from _servers import postgres_server, s3_server

from likewise import retail
from likewise.data.corpus import build_corpus
from likewise.errors import InputError, MissingDependencyError
from likewise.readers import InputSpec
from likewise.readers.sources import redact
from likewise.retail.update import update

COLS = {
    "basket_col": "order_id",
    "item_col": "product_id",
    "user_col": "customer_id",
    "time_col": "ordered_at",
}
QUERY = "SELECT order_id, customer_id, product_id, ordered_at FROM orders ORDER BY line"


def _orders(n_orders: int = 400, seed: int = 0) -> pa.Table:
    """Orders of 1-6 lines from 60 customers over 40 products, one row per line, in line order."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, n_orders)
    order = np.repeat(np.arange(n_orders, dtype=np.int64) * 7 + 3, sizes)
    customer = np.repeat(rng.integers(0, 60, n_orders), sizes)
    product = (rng.zipf(1.6, len(order)) % 40).astype(np.int64)
    seconds = np.repeat(1_700_000_000 + np.arange(n_orders) * 3600, sizes)
    return pa.table(
        {
            "line": np.arange(len(order), dtype=np.int64),
            "order_id": order,
            "customer_id": [f"c{c:03d}" for c in customer],
            "product_id": [f"p{p:02d}" for p in product],
            "ordered_at": pa.array(seconds * 1_000_000, pa.timestamp("us")),
            "year": 2024 + (np.arange(len(order)) * 3 // len(order)),
        }
    )


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    root = tmp_path_factory.mktemp("sources")
    table = _orders()
    pq.write_table(table, root / "orders.parquet")
    return table, root


def _corpus(spec: InputSpec, cache: Path):
    return build_corpus(spec, cache_dir=cache)


def _same(a, b) -> None:
    assert a.vocab.keys == b.vocab.keys
    np.testing.assert_array_equal(a.ids, b.ids)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    assert a.user_keys == b.user_keys
    for name in ("user", "time"):
        np.testing.assert_array_equal(a.side[name], b.side[name])


@pytest.fixture(scope="module")
def from_parquet(log):
    _, root = log
    return _corpus(InputSpec(paths=(str(root / "orders.parquet"),), **COLS), root / "cache-parquet")


# --------------------------------------------------------------------------------------------- PostgreSQL


@pytest.fixture(scope="module")
def pg(log):
    import adbc_driver_postgresql.dbapi as pgdb

    table, _ = log
    with postgres_server() as uri:
        with pgdb.connect(uri) as con, con.cursor() as cur:
            cur.adbc_ingest("orders", table, mode="create")
            bad = pa.table({"order_id": [1, 1, 2], "product_id": ["a", None, "b"], "ratio": [0.5, 1.5, 2.5]})
            cur.adbc_ingest("bad", bad, mode="create")
            con.commit()
        yield uri


def test_postgres_query_compiles_the_corpus_of_the_same_rows_in_parquet(pg, log, from_parquet, tmp_path):
    spec = InputSpec(sql=QUERY, uri=pg, **COLS)
    corpus = _corpus(spec, tmp_path)
    _same(corpus, from_parquet)
    source = corpus.manifest["input"]["source"]
    assert source == {"kind": "postgresql", "uri": pg, "query": QUERY}
    assert not list(corpus.path.glob("*.parquet"))  # the copy the reader read is gone


def test_postgres_corpus_is_cached_on_the_query_and_the_uri(pg, tmp_path, capsys):
    spec = InputSpec(sql=QUERY, uri=pg, **COLS)
    first = build_corpus(spec, cache_dir=tmp_path)
    again = build_corpus(spec, cache_dir=tmp_path, progress=True)
    assert again.path == first.path
    assert "using cached corpus" in capsys.readouterr().err
    other = build_corpus(InputSpec(sql=QUERY + " LIMIT 500", uri=pg, **COLS), cache_dir=tmp_path)
    assert other.path != first.path and other.n_tokens == 500


def test_postgres_train_cli_gives_products_and_customers(pg, tmp_path):
    out = tmp_path / "model"
    cmd = [sys.executable, "-m", "likewise", "train", pg, "--query", QUERY, "-o", str(out), "--json"]
    cmd += ["--basket-col", "order_id", "--item-col", "product_id", "--user-col", "customer_id"]
    cmd += ["--time-col", "ordered_at", "--epochs", "2", "--dim", "8", "--cache-dir", str(tmp_path / "c")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["products"] == 40 or summary["products"] > 30
    assert summary["customers"] == 60


def test_postgres_null_key_names_the_column_and_the_source_and_leaves_no_corpus(pg, tmp_path):
    spec = InputSpec(
        sql="SELECT order_id, product_id FROM bad", uri=pg, basket_col="order_id", item_col="product_id"
    )
    with pytest.raises(InputError) as e:
        build_corpus(spec, cache_dir=tmp_path)
    msg = str(e.value)
    assert "null 'product_id' value in the query on 'postgresql://" in msg and "data row 2" in msg
    assert "\n" not in msg and ".parquet" not in msg
    assert list(tmp_path.iterdir()) == []  # nothing half-written, not even a temporary


def test_postgres_wrong_column_type_names_the_column(pg, tmp_path):
    spec = InputSpec(
        sql="SELECT ratio, product_id FROM bad WHERE product_id IS NOT NULL",
        uri=pg,
        basket_col="ratio",
        item_col="product_id",
    )
    with pytest.raises(InputError, match=r"'ratio'.*the query on 'postgresql://") as e:
        build_corpus(spec, cache_dir=tmp_path)
    assert "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_postgres_array_column_as_key_names_the_column(pg, tmp_path):
    sql = "SELECT order_id, ARRAY[line, 1] AS product_id FROM orders"
    spec = InputSpec(sql=sql, uri=pg, basket_col="order_id", item_col="product_id")
    with pytest.raises(
        InputError, match=r"^column 'product_id' in the query on 'postgresql://.*cannot be keys"
    ) as e:
        build_corpus(spec, cache_dir=tmp_path)
    assert "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_postgres_missing_column_and_bad_query_are_one_line(pg, tmp_path):
    spec = InputSpec(sql="SELECT order_id FROM orders", uri=pg, basket_col="order_id", item_col="product_id")
    with pytest.raises(
        InputError, match=r"column 'product_id' not found in the query on 'postgresql://.*'order_id'"
    ):
        build_corpus(spec, cache_dir=tmp_path)
    spec = InputSpec(sql="SELECT * FROM no_such_table", uri=pg, basket_col="order_id", item_col="product_id")
    with pytest.raises(InputError, match=r"^cannot read the query on 'postgresql://.*no_such_table") as e:
        build_corpus(spec, cache_dir=tmp_path)
    assert "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_postgres_dropped_connection_is_one_line_and_leaves_no_corpus(pg, tmp_path):
    # the server ends this very connection while it streams the rows: a real dropped connection
    sql = (
        "SELECT order_id, product_id FROM orders, generate_series(1, 200) AS g "
        "WHERE CASE WHEN g = 150 AND line = 0 THEN pg_terminate_backend(pg_backend_pid()) ELSE true END"
    )
    spec = InputSpec(sql=sql, uri=pg, basket_col="order_id", item_col="product_id")
    with pytest.raises(InputError, match=r"^cannot read the query on 'postgresql://") as e:
        build_corpus(spec, cache_dir=tmp_path)
    assert "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_postgres_unreachable_server_is_one_line(tmp_path):
    from _servers import free_port

    uri = f"postgresql://likewise:secret@127.0.0.1:{free_port()}/postgres"
    spec = InputSpec(sql=QUERY, uri=uri, **COLS)
    with pytest.raises(InputError, match=r"^cannot read the query on 'postgresql://likewise:\*\*\*@") as e:
        build_corpus(spec, cache_dir=tmp_path)
    assert "secret" not in str(e.value) and "\n" not in str(e.value)


def test_update_reads_new_orders_by_a_query(pg, log, tmp_path):
    table, root = log
    old = table.filter(pa.compute.less(table["line"], 900))
    pq.write_table(old, tmp_path / "old.parquet")
    emb = retail.train_from_log(
        tmp_path / "old.parquet", epochs=2, dim=8, min_count=1, cache_dir=tmp_path / "c"
    )
    emb.save(tmp_path / "m0")
    sql = "SELECT order_id, customer_id, product_id FROM orders WHERE line >= 900 ORDER BY line"
    # an order cut by the split at line 900 is in both parts: skipped, and counted
    new = update(tmp_path / "m0", pg, tmp_path / "m1", sql=sql, cache_dir=tmp_path / "c", on_repeat="skip")
    old_orders = set(old.column("order_id").to_pylist())
    later = table.filter(pa.compute.greater_equal(table["line"], 900)).column("order_id").to_pylist()
    repeated = [o for o in later if o in old_orders]
    assert new.meta["update"]["skipped_orders"] == len(set(repeated))
    assert new.meta["update"]["lines"] == table.num_rows - 900 - len(repeated)


# --------------------------------------------------------------------------------------------- SQLite, DuckDB


def test_sqlite_and_duckdb_files_and_duckdb_over_parquet(log, from_parquet, tmp_path):
    import adbc_driver_sqlite.dbapi as sqlite
    import duckdb

    table, root = log
    with sqlite.connect(str(tmp_path / "shop.db")) as con, con.cursor() as cur:
        cur.adbc_ingest("orders", table.drop_columns(["ordered_at"]), mode="create")
        con.commit()
    with duckdb.connect(str(tmp_path / "shop.duckdb")) as con:
        con.execute(f"CREATE TABLE orders AS SELECT * FROM '{root / 'orders.parquet'}'")
    cols = {k: v for k, v in COLS.items() if k != "time_col"}
    plain = _corpus(InputSpec(paths=(str(root / "orders.parquet"),), **cols), tmp_path / "c0")
    q = "SELECT order_id, customer_id, product_id FROM {} ORDER BY line"
    for uri, source in [
        (f"sqlite:///{tmp_path / 'shop.db'}", "orders"),
        (str(tmp_path / "shop.duckdb"), "orders"),
        ("duckdb:", f"'{root / 'orders.parquet'}'"),
    ]:
        corpus = _corpus(InputSpec(sql=q.format(source), uri=uri, **cols), tmp_path / "c1")
        assert corpus.vocab.keys == plain.vocab.keys, uri
        np.testing.assert_array_equal(corpus.ids, plain.ids)
        np.testing.assert_array_equal(corpus.offsets, plain.offsets)


def test_a_missing_database_file_is_refused_not_created(tmp_path):
    spec = InputSpec(sql="SELECT 1", uri=f"sqlite:///{tmp_path / 'nope.db'}", basket_col="a", item_col="b")
    with pytest.raises(InputError, match="does not exist"):
        build_corpus(spec, cache_dir=tmp_path / "c")
    assert not (tmp_path / "nope.db").exists()


def test_a_missing_driver_names_the_pip_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "duckdb", None)  # as if it were not installed
    spec = InputSpec(sql="SELECT 1 AS a, 2 AS b", uri="duckdb:", basket_col="a", item_col="b")
    with pytest.raises(MissingDependencyError, match=r"pip install '\.\[duckdb\]'") as e:
        build_corpus(spec, cache_dir=tmp_path)
    assert "\n" not in str(e.value)


def test_importing_likewise_imports_no_driver():
    code = "import likewise, sys; print(sorted(m for m in sys.modules if m.split('.')[0] in {0!r}))"
    names = {"adbc_driver_manager", "adbc_driver_postgresql", "duckdb", "lancedb", "qdrant_client", "faiss"}
    run = subprocess.run(
        [sys.executable, "-c", code.format(names)], capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == "[]"


def test_query_spec_rules_and_redaction():
    with pytest.raises(InputError, match="not both"):
        InputSpec(paths=("a.csv",), sql="SELECT 1", uri="duckdb:")
    with pytest.raises(InputError, match="uri"):
        InputSpec(sql="SELECT 1")
    with pytest.raises(InputError, match="read as an order log: give basket_col and item_col"):
        build_corpus(InputSpec(sql="SELECT 1 AS a", uri="duckdb:"))
    with pytest.raises(InputError, match="names no database"):
        build_corpus(InputSpec(sql="SELECT 1", uri="mysql://h/db", basket_col="a", item_col="b"))
    assert redact("postgresql://u:s3cret@h:5/db?password=x&sslmode=require") == (
        "postgresql://u:***@h:5/db?password=***&sslmode=require"
    )
    assert redact("sqlite:///tmp/a.db") == "sqlite:///tmp/a.db"


# --------------------------------------------------------------------------------------------- datasets


def test_hive_folder_and_glob_read_as_the_parquet_file(log, from_parquet, tmp_path):
    table, _ = log
    ds.write_dataset(
        table, tmp_path / "hive", format="parquet", partitioning=["year"], partitioning_flavor="hive"
    )
    hive = _corpus(InputSpec(paths=(str(tmp_path / "hive"),), **COLS), tmp_path / "c")
    assert hive.manifest["input"]["source"]["kind"] == "dataset"
    assert hive.n_tokens == from_parquet.n_tokens and hive.vocab.keys == from_parquet.vocab.keys
    by_year = _corpus(
        InputSpec(
            paths=(str(tmp_path / "hive"),),
            basket_col="order_id",
            item_col="product_id",
            user_col="year",
            basket_scope="customer",  # an order at midnight on new year's eve is in two years
        ),
        tmp_path / "c",
    )
    assert by_year.user_keys == ["2024", "2025", "2026"]  # the partition column is a column
    pq.write_table(table.slice(0, 1000), tmp_path / "a.parquet")
    pq.write_table(table.slice(1000), tmp_path / "b.parquet")
    globbed = _corpus(InputSpec(paths=(str(tmp_path / "*.parquet"),), **COLS), tmp_path / "c")
    _same(globbed, from_parquet)


@pytest.fixture(scope="module")
def s3(log):
    import boto3

    table, root = log
    with pytest.MonkeyPatch.context() as mp, s3_server(mp) as endpoint:
        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket="shop")
        for i, part in enumerate([table.slice(0, 1000), table.slice(1000)]):
            sink = pa.BufferOutputStream()
            pq.write_table(part, sink)
            client.put_object(
                Bucket="shop", Key=f"orders/part-{i}.parquet", Body=sink.getvalue().to_pybytes()
            )
        client.put_object(Bucket="shop", Key="orders/_SUCCESS", Body=b"")
        yield client


def test_s3_prefix_compiles_the_corpus_of_the_same_rows(s3, from_parquet, tmp_path):
    corpus = _corpus(InputSpec(paths=("s3://shop/orders/",), **COLS), tmp_path)
    _same(corpus, from_parquet)
    again = build_corpus(InputSpec(paths=("s3://shop/orders/",), **COLS), cache_dir=tmp_path)
    assert again.path == corpus.path  # the same objects: the same key


def test_s3_errors_name_the_url(s3, tmp_path):
    with pytest.raises(InputError, match=r"'s3://shop/nothing/' does not exist"):
        build_corpus(InputSpec(paths=("s3://shop/nothing/",), **COLS), cache_dir=tmp_path)
    with pytest.raises(InputError, match=r"column 'sku' not found in 's3://shop/orders/'"):
        build_corpus(
            InputSpec(paths=("s3://shop/orders/",), basket_col="order_id", item_col="sku"), cache_dir=tmp_path
        )
    assert list(tmp_path.iterdir()) == []


def test_update_reads_new_orders_from_s3(s3, log, tmp_path):
    table, _ = log
    pq.write_table(table.slice(0, 1000), tmp_path / "old.parquet")
    emb = retail.train_from_log(
        tmp_path / "old.parquet", epochs=2, dim=8, min_count=1, cache_dir=tmp_path / "c"
    )
    emb.save(tmp_path / "m0")
    new = update(
        tmp_path / "m0",
        "s3://shop/orders/part-1.parquet",
        tmp_path / "m1",
        cache_dir=tmp_path / "c",
        on_repeat="skip",  # the order cut by the split at line 1000 is in both parts
    )
    old_orders = set(table.slice(0, 1000).column("order_id").to_pylist())
    repeated = [o for o in table.slice(1000).column("order_id").to_pylist() if o in old_orders]
    assert new.meta["update"]["skipped_orders"] == len(set(repeated)) == 1
    assert new.meta["update"]["lines"] == table.num_rows - 1000 - len(repeated)


def test_the_facade_trains_from_an_input_spec_query_with_and_without_customers(log, tmp_path):
    import duckdb

    import likewise

    table, root = log
    with duckdb.connect(str(tmp_path / "shop.duckdb")) as con:
        con.execute(f"CREATE TABLE orders AS SELECT * FROM '{root / 'orders.parquet'}'")
    spec = likewise.InputSpec(
        sql=QUERY, uri=str(tmp_path / "shop.duckdb"), basket_col="order_id", item_col="product_id"
    )
    items = likewise.train(spec, epochs=1, dim=8, min_count=1, cache_dir=tmp_path / "c")
    assert items.customers is None and len(items) == len(set(table.column("product_id").to_pylist()))
    shop = likewise.train(
        spec,
        basket_col="order_id",
        item_col="product_id",
        user_col="customer_id",
        epochs=1,
        dim=8,
        min_count=1,
        cache_dir=tmp_path / "c",
    )
    assert len(shop.customers) == len(set(table.column("customer_id").to_pylist()))
