"""No secret of a source is printed or stored; a query only reads; a credential is checked, cache or not.

Real servers on loopback (tests/_servers.py): PostgreSQL (one that trusts, one that checks a password)
and moto's S3. Each source string carries its secrets as a user writes them (a URL's password, an S3
key in its user part, ``sslpassword=``), and every place that could keep or show one is searched: the
command's output, the corpus cache, the saved model, each error message.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _servers import postgres_server, s3_server
from hypothesis import given, settings
from hypothesis import strategies as st

from likewise._secrets import redact, scrub
from likewise.cli import main
from likewise.data.corpus import build_corpus
from likewise.errors import InputError
from likewise.readers import InputSpec

COLS = ["--basket-col", "order_id", "--item-col", "product_id", "--user-col", "customer_id"]
QUERY = "SELECT order_id, customer_id, product_id FROM orders"


def _orders(n: int = 300) -> pa.Table:
    rng = np.random.default_rng(1)
    order = np.repeat(np.arange(n), 3)
    return pa.table(
        {
            "order_id": [f"o{o}" for o in order],
            "customer_id": [f"c{o % 50}" for o in order],
            "product_id": [f"p{p}" for p in rng.integers(0, 25, len(order))],
        }
    )


def _everything_written(*roots: Path) -> str:
    """Every byte under ``roots``, as text: what a secret must not be found in."""
    out = []
    for root in roots:
        for f in sorted(Path(root).rglob("*")):
            if f.is_file():
                out.append(f.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(out)


def _train(capsys, source: str, tmp: Path, *more: str) -> tuple[int, str]:
    args = ["train", source, *COLS, "--dim", "8", "--epochs", "1", "-o", str(tmp / "model")]
    code = main([*args, "--cache-dir", str(tmp / "cache"), "--overwrite", *more])
    seen = capsys.readouterr()
    return code, seen.out + seen.err


# ------------------------------------------------------------------------------------------ redaction


_SECRET = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=6, max_size=20)


@given(_SECRET, st.sampled_from(["shop", "AKIAEXAMPLE"]), st.sampled_from(["postgresql", "s3"]))
@settings(max_examples=100, deadline=None, derandomize=True)
def test_no_secret_survives_redaction_in_any_place_of_a_uri(secret, user, scheme):
    for text in [
        f"{scheme}://{user}:{secret}@host/db",
        f"{scheme}://host/db?sslpassword={secret}&sslmode=require",
        f"{scheme}://host/db?sslmode=require&password={secret}",
        f"{scheme}://host/b?secret_key={secret}&access_key={secret}&session_token={secret}",
        f"https://acct.blob/c/x?sv=2022&sig={secret}",
        f"https://b.s3/x?X-Amz-Credential={secret}&X-Amz-Signature={secret}",
        f"host=h password='{secret}' dbname=shop",
    ]:
        shown = redact(text)
        assert secret not in shown and redact(shown) == shown, text
        assert "host" in shown or "blob" in shown or "s3" in shown  # the rest is kept
    # a driver's own wording of the password goes too, when we know the source
    assert secret not in scrub(f'invalid token: "{secret}%zz"', f"postgresql://u:{secret}%zz@h/db")


def test_what_is_no_secret_is_kept():
    for text in [
        "postgresql://analyst@db.local:5432/shop?sslmode=require&application_name=likewise",
        "s3://shop/orders/?endpoint_override=127.0.0.1:9000&scheme=http",
        "sqlite:///tmp/orders.db",
        "column 'product_id' not found in 'orders.csv'",
        "mail analyst@shop.example",
        "tokenize='simple' splits text into words itself",  # an option of ours, not a token
        "postgresql://db/shop?sslkey=/home/analyst/.pg/key.pem&sslmode=verify-full",  # a path, not a key
    ]:
        assert redact(text) == text


# ------------------------------------------------------------------------------------------ S3


@pytest.fixture(scope="module")
def s3():
    import boto3

    with pytest.MonkeyPatch.context() as mp, s3_server(mp) as endpoint:
        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket="shop")
        sink = pa.BufferOutputStream()
        pq.write_table(_orders(), sink)
        client.put_object(Bucket="shop", Key="orders/part-0.parquet", Body=sink.getvalue().to_pybytes())
        yield endpoint.removeprefix("http://")


def test_s3_credentials_in_the_url_are_never_printed_cached_or_saved(s3, tmp_path, capsys):
    url = f"s3://AKIAEXAMPLEKEY:Secret123xyz@shop/orders/?endpoint_override={s3}&scheme=http"
    code, said = _train(capsys, url, tmp_path)
    assert code == 0, said
    written = _everything_written(tmp_path / "cache", tmp_path / "model")
    assert "shop/orders/" in written  # the manifest names the source ...
    for secret in ("Secret123xyz", "AKIAEXAMPLEKEY"):
        assert secret not in said and secret not in written  # ... without its credentials
    bad = [
        (url.replace("/orders/", "/nothing/"), r"input path 's3://\*\*\*@shop/nothing/.*' does not exist"),
        (url, r"column 'NOPE' not found in 's3://\*\*\*@shop/orders/"),
    ]
    for source, says in bad:
        more = ("--time-col", "NOPE") if "orders" in source else ()
        code, said = _train(capsys, source, tmp_path / "bad", *more)
        assert code == 1 and re.search(says, said), said
        assert "Secret123xyz" not in said and "AKIAEXAMPLEKEY" not in said
    with pytest.raises(InputError) as e:
        build_corpus(InputSpec(paths=(url.replace("/orders/", "/nothing/"),), basket_col="a", item_col="b"))
    assert "Secret123xyz" not in str(e.value) and "Secret123xyz" not in repr(e.value)
    assert "Secret123xyz" not in repr(InputSpec(paths=(url,), basket_col="a", item_col="b"))


# ------------------------------------------------------------------------------------------ PostgreSQL


PASSWORD = "Right-Pass-42"


@pytest.fixture(scope="module")
def pg_password():
    import adbc_driver_postgresql.dbapi as pgdb

    with postgres_server(password=PASSWORD) as uri:
        with pgdb.connect(uri) as con, con.cursor() as cur:
            cur.adbc_ingest("orders", _orders(), mode="create")
            con.commit()
        yield uri


def test_a_wrong_password_is_refused_even_when_the_corpus_is_cached(pg_password, tmp_path, capsys):
    code, said = _train(capsys, pg_password, tmp_path, "--query", QUERY)
    assert code == 0, said
    cached = sorted((tmp_path / "cache").iterdir())
    assert cached  # the corpus is cached
    wrong = pg_password.replace(PASSWORD, "WRONG-Pass-7")
    code, said = _train(capsys, wrong, tmp_path, "--query", QUERY)
    assert code == 1 and "password authentication failed" in said, said
    assert "WRONG-Pass-7" not in said
    code, said = _train(capsys, pg_password, tmp_path, "--query", QUERY)
    assert code == 0 and sorted((tmp_path / "cache").iterdir()) == cached  # the right one uses the cache


def test_sslpassword_and_a_malformed_password_are_neither_stored_nor_printed(pg_password, tmp_path, capsys):
    uri = pg_password + "?sslpassword=KEYPASS123&sslmode=disable"
    code, said = _train(capsys, uri, tmp_path, "--query", QUERY)
    assert code == 0, said
    written = _everything_written(tmp_path / "cache", tmp_path / "model")
    assert "sslpassword=***" in written and "KEYPASS123" not in written + said
    code, said = _train(capsys, uri, tmp_path / "bad", "--query", "SELECT nope FROM orders")
    assert code == 1 and "nope" in said and "KEYPASS123" not in said and PASSWORD not in said
    malformed = pg_password.replace(PASSWORD, "super%zzsecret")
    code, said = _train(capsys, malformed, tmp_path / "bad", "--query", QUERY)
    assert code == 1 and "percent-encoded" in said, said
    assert "zzsecret" not in said


# ------------------------------------------------------------------------------------------ read only


def _count(uri: str) -> int:
    import adbc_driver_postgresql.dbapi as pgdb

    with pgdb.connect(uri) as con, con.cursor() as cur:
        cur.execute("SELECT count(*) FROM orders")
        return int(cur.fetchone()[0])


def test_a_postgres_query_runs_read_only(pg_password, tmp_path, capsys):
    before = _count(pg_password)
    for sql, says in [
        ("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", "read-only transaction"),
        ("SELECT * FROM orders; DELETE FROM orders", "holds 2 statements"),
        ("DELETE FROM orders RETURNING *", "starts with 'DELETE'"),
    ]:
        code, said = _train(capsys, pg_password, tmp_path, "--query", sql)
        assert code == 1 and says in said, said
    assert _count(pg_password) == before


def test_duckdb_copy_and_attach_delete_are_refused_and_nothing_is_written_or_deleted(tmp_path, capsys):
    import duckdb

    db = tmp_path / "shop.duckdb"
    orders = _orders()  # noqa: F841  (DuckDB reads the Python variable by its name)
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE orders AS SELECT * FROM orders")
    written = tmp_path / "x.csv"
    code, said = _train(capsys, str(db), tmp_path, "--query", f"COPY (SELECT 42) TO '{written}'")
    assert code == 1 and "is a COPY statement" in said, said
    select = QUERY.replace("orders", "v.orders")
    attach = f"ATTACH '{db}' AS v; DELETE FROM v.orders WHERE order_id <> 'o1'; {select}"
    code, said = _train(capsys, "duckdb:", tmp_path, "--query", attach)
    assert code == 1 and "holds 3 statements" in said, said
    assert not written.exists()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM orders").fetchone()[0] == 900
    code, said = _train(capsys, str(db), tmp_path, "--query", QUERY)  # a query that reads still trains
    assert code == 0, said


def test_sqlite_attach_and_writes_are_refused_and_create_nothing(tmp_path, capsys):
    import adbc_driver_sqlite.dbapi as sqlite

    db = tmp_path / "shop.db"
    with sqlite.connect(str(db)) as con, con.cursor() as cur:
        cur.adbc_ingest("orders", _orders(), mode="create")
        con.commit()
    other = tmp_path / "other.db"
    for sql, says in [
        (f"ATTACH '{other}' AS v", "starts with 'ATTACH'"),
        ("SELECT * FROM orders; DELETE FROM orders", "holds 2 statements"),
        ("DELETE FROM orders", "starts with 'DELETE'"),
    ]:
        code, said = _train(capsys, f"sqlite:///{db}", tmp_path, "--query", sql)
        assert code == 1 and says in said, said
    assert not other.exists()
    with sqlite.connect(str(db)) as con, con.cursor() as cur:
        cur.execute("SELECT count(*) FROM orders")
        assert cur.fetchone()[0] == 900
