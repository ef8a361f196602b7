"""No string from the data reaches SQL unquoted; every export keeps every column under its own name.

The pgvector export is loaded into a real PostgreSQL on loopback (tests/_servers.py) with psql, as a
user loads it. pgvector itself is not packaged here, so the three statements that need it (the
extension, the ``vector(D)`` type, the HNSW index) are read as text (``_without_pgvector``): every name,
every COPY row and every other statement of the file is PostgreSQL's to parse.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from _servers import postgres_server
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from likewise._sql import MAX_NAME_BYTES, fit_names, one_statement, quote_ident
from likewise.cli import main
from likewise.data.vocab import Vocab
from likewise.errors import InputError
from likewise.space.embeddings import Embeddings

EXAMPLES = int(os.environ.get("LIKEWISE_FUZZ_EXAMPLES", "15"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="LIKEWISE_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
INJECTION = 'colour" text); DROP TABLE important; --'


def _without_pgvector(sql: str) -> str:
    """The export's file with pgvector's three statements read as text (outside the COPY data only)."""
    out, in_copy = [], False
    for line in sql.split("\n"):
        if in_copy:
            in_copy = line != "\\."
        elif line.startswith("COPY "):
            in_copy = True
        elif line == "CREATE EXTENSION IF NOT EXISTS vector;" or re.fullmatch(
            r"CREATE INDEX ON likewise_\w+ USING hnsw \(embedding vector_cosine_ops\);", line
        ):
            continue
        else:
            line = re.sub(r"^    embedding vector\(\d+\) NOT NULL$", "    embedding text NOT NULL", line)
        out.append(line)
    return "\n".join(out)


@pytest.fixture(scope="module")
def pg():
    import adbc_driver_postgresql.dbapi as pgdb

    if shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    with postgres_server() as uri:
        with pgdb.connect(uri) as con, con.cursor() as cur:
            cur.execute("CREATE TABLE important (x integer)")
            cur.execute("INSERT INTO important VALUES (42)")
            con.commit()
        yield uri


def _load(uri: str, folder: Path, tmp: Path) -> None:
    """``psql -f`` the export (its tables dropped first), stopping at the first error."""
    plain = tmp / "plain.sql"
    text = _without_pgvector((folder / "likewise.sql").read_text(encoding="utf-8"))
    plain.write_text("DROP TABLE IF EXISTS likewise_items, likewise_customers;\n" + text, encoding="utf-8")
    run = [shutil.which("psql") or "psql", uri, "-v", "ON_ERROR_STOP=1", "-q", "-f", str(plain)]
    done = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _query(uri: str, sql: str):
    import adbc_driver_postgresql.dbapi as pgdb

    with pgdb.connect(uri) as con, con.cursor() as cur:
        cur.execute(sql)
        return cur.fetch_arrow_table()


def _important_survives(uri: str) -> None:
    assert _query(uri, "SELECT x FROM important").column("x").to_pylist() == [42]


def _space(keys: list[str], columns: dict[str, list] | None = None) -> Embeddings:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(keys), 4)).astype(np.float32)
    emb = Embeddings(vectors, Vocab(keys, np.arange(len(keys), 0, -1, dtype=np.int64)))
    if columns is not None:
        emb.item_table = {"item_col": "\x01item", "columns": {"\x01item": list(keys), **columns}}
    return emb


def _orders(root: Path) -> Path:
    """A small order log: 240 orders of 2-4 products out of 30, 40 customers."""
    rng = np.random.default_rng(5)
    lines = ["order_id,customer_id,product_id,ts"]
    for o in range(240):
        for p in rng.choice(30, size=int(rng.integers(2, 5)), replace=False):
            lines.append(f"o{o},c{o % 40},p{p:02d},{1_700_000_000 + o * 3600}")
    (root / "orders.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "orders.csv"


# ------------------------------------------------------------------------------------------ the repro


def test_a_drop_table_in_an_attribute_header_arrives_as_a_column_name_and_drops_nothing(pg, tmp_path):
    orders = _orders(tmp_path)
    header = "product_id," + '"' + INJECTION.replace('"', '""') + '"' + ",size"
    attrs = [header] + [f"p{p:02d},red{p % 3},{p % 4}" for p in range(30)]
    (tmp_path / "attrs.csv").write_text("\n".join(attrs) + "\n", encoding="utf-8")
    model, out = tmp_path / "m_attr", tmp_path / "pg_inj"
    train = ["train", str(orders), "--basket-col", "order_id", "--item-col", "product_id"]
    train += ["--user-col", "customer_id", "--time-col", "ts", "--item-attrs", str(tmp_path / "attrs.csv")]
    train += ["--dim", "8", "--epochs", "1", "-o", str(model), "--cache-dir", str(tmp_path / "cache")]
    assert main(train) == 0
    assert main(["export", str(model), "--format", "pgvector", "-o", str(out)]) == 0
    _load(pg, out, tmp_path)
    _important_survives(pg)
    names = _query(
        pg,
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'likewise_items' "
        "ORDER BY ordinal_position",
    )
    assert INJECTION in names.column("column_name").to_pylist()
    items = _query(pg, "SELECT * FROM likewise_items ORDER BY id")
    colours = dict(zip(items.column("key").to_pylist(), items.column(INJECTION).to_pylist(), strict=True))
    assert colours["p07"] == "red1" and len(colours) == 30


# ------------------------------------------------------------------------------------------ names


_ODD = st.sampled_from(['"', "'", ";", "\\", "\n", "\t", "-", " ", "$", ":", "é", "中", "\U0001f600", "."])
_OURS = ["key", "id", "count", "type", "vector", "embedding", "attr_key", "attr_key_2", INJECTION]
_NAME = st.one_of(
    st.sampled_from(_OURS),
    st.text(st.one_of(_ODD, st.characters(codec="utf-8", exclude_characters="\x00")), min_size=1, max_size=9),
    st.text(_ODD, min_size=1, max_size=4).map(lambda s: "ü" * 40 + s),  # over 63 bytes, one start
)


@FUZZ
@given(names=st.lists(_NAME, min_size=1, max_size=6, unique=True))
def test_attribute_names_of_any_text_arrive_as_their_own_columns_in_postgres(pg, tmp_path_factory, names):
    tmp = tmp_path_factory.mktemp("names")
    keys = ["p1", "p2", "p3"]
    columns = {n: [f"{j}:{k}" for k in keys] for j, n in enumerate(names)}
    emb = _space(keys, columns)
    out = emb.to_pgvector(tmp / "out")
    _load(pg, out, tmp)
    _important_survives(pg)
    items = _query(pg, "SELECT * FROM likewise_items ORDER BY id")
    comments = _query(
        pg,
        "SELECT column_name, col_description('likewise_items'::regclass, ordinal_position) AS note "
        "FROM information_schema.columns WHERE table_name = 'likewise_items'",
    )
    # each attribute is one column: its own name, or shortened with the name it had as its comment
    seen = set()
    for j, name in enumerate(names):
        want = [f"{j}:{k}" for k in keys]
        found = [c for c in items.column_names if items.column(c).to_pylist() == want]
        assert len(found) == 1, (name, items.column_names)
        column = found[0]
        assert len(column.encode("utf-8")) <= MAX_NAME_BYTES
        notes = dict(zip(*comments.to_pydict().values(), strict=True))
        fits = len(name.encode("utf-8")) <= MAX_NAME_BYTES
        reserved = name in ("key", "id", "count", "type", "vector", "embedding", "n_products")
        if fits and not reserved:
            assert column == name  # a free name is the column's name, whatever its characters
        if not fits:  # shortened: the column's comment is the name it had
            assert notes[column] is not None and notes[column].endswith(name)
        seen.add(column)
    assert len(seen) == len(names)
    assert items.column("key").to_pylist() == keys and items.num_rows == 3


def test_a_nul_in_a_column_name_or_a_value_is_refused_naming_it(tmp_path):
    with pytest.raises(InputError, match=r"column name 'size\\x00x' holds a NUL"):
        _space(["p1"], {"size\x00x": ["1"]}).to_pgvector(tmp_path / "a")
    with pytest.raises(InputError, match=r"column 'size' of item 'p1': value 'bi\\x00g' holds a NUL"):
        _space(["p1"], {"size": ["bi\x00g"]}).to_pgvector(tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert list(tmp_path.iterdir()) == []  # not even a temporary


@given(
    names=st.lists(st.text(min_size=1, max_size=70), max_size=8),
    taken=st.lists(st.sampled_from(["key", "id", "attr_key", "embedding", "a"]), max_size=3),
)
@settings(max_examples=200, deadline=None, derandomize=True)
def test_fit_names_are_unique_apart_from_the_taken_ones_short_and_deterministic(names, taken):
    out = fit_names(names, taken, max_bytes=MAX_NAME_BYTES)
    assert len(out) == len(names) and len(set(out)) == len(out) and not set(out) & set(taken)
    assert all(len(n.encode("utf-8")) <= MAX_NAME_BYTES for n in out)
    assert out == fit_names(names, taken, max_bytes=MAX_NAME_BYTES)
    for raw, got in zip(names, out, strict=True):
        if raw not in taken and names.count(raw) == 1 and len(raw.encode("utf-8")) <= MAX_NAME_BYTES:
            assert got == raw  # a free name keeps itself


def test_quote_ident_doubles_quotes_and_refuses_what_postgres_would_cut():
    assert quote_ident('a"b') == '"a""b"'
    assert quote_ident("a\rb\\") == 'U&"a\\000Db\\005C"'  # psql keeps no carriage return: escaped
    with pytest.raises(InputError, match="64 bytes; PostgreSQL keeps 63"):
        quote_ident("x" * 64)
    with pytest.raises(InputError, match="empty"):
        quote_ident("")


# ------------------------------------------------------------------------------------------ keys


_AWKWARD = ["'", '"', "\\", "\t", "\n", "\r", "\x00", ".", "N", "é", "中"]
_KEY = st.text(
    st.one_of(st.sampled_from(_AWKWARD), st.characters(codec="utf-8")),  # a space holds only Unicode text
    min_size=1,
    max_size=10,
)


@FUZZ
@given(keys=st.lists(_KEY, min_size=1, max_size=8, unique=True))
def test_keys_of_any_text_load_row_for_row_or_a_nul_is_refused_naming_the_key(pg, tmp_path_factory, keys):
    tmp = tmp_path_factory.mktemp("keys")
    emb = _space(keys, {"note": [f"n{i}" for i in range(len(keys))]})
    bad = [k for k in keys if "\x00" in k]
    if bad:
        with pytest.raises(InputError, match=r"key .* holds a NUL") as e:
            emb.to_pgvector(tmp / "out")
        assert repr(bad[0])[:60] in str(e.value) and "\n" not in str(e.value)
        assert not (tmp / "out").exists()
        return
    out = emb.to_pgvector(tmp / "out")
    _load(pg, out, tmp)
    items = _query(pg, "SELECT key, id, note FROM likewise_items ORDER BY id")
    assert items.column("key").to_pylist() == keys  # every row, each its own key: none lost or shifted
    assert items.column("note").to_pylist() == [f"n{i}" for i in range(len(keys))]


def test_a_nul_key_from_a_trained_log_is_refused_at_export_not_a_lost_row(tmp_path):
    orders = _orders(tmp_path)
    text = orders.read_text(encoding="utf-8").replace(",p01,", ",p\x00001,")
    orders.write_text(text, encoding="utf-8")
    model = tmp_path / "m"
    train = ["train", str(orders), "--basket-col", "order_id", "--item-col", "product_id"]
    train += ["--dim", "8", "--epochs", "1", "-o", str(model), "--cache-dir", str(tmp_path / "cache")]
    assert main(train) == 0
    with pytest.raises(InputError, match=r"item key 'p\\x00001' holds a NUL"):
        Embeddings.load(model).to_pgvector(tmp_path / "pg")
    assert not (tmp_path / "pg").exists()


# ------------------------------------------------------------------------------------------ every format


def test_attributes_named_like_our_columns_keep_their_values_in_every_format(pg, tmp_path):
    import faiss  # noqa: F401  (each format's library: a missing one is a skip, not a failure)
    import lancedb
    from qdrant_client import QdrantClient

    keys = ["p1", "p2"]
    columns = {"key": ["k1", "k2"], "attr_key": ["a1", "a2"], "embedding": ["e1", "e2"], "id": ["i1", "i2"]}
    emb = _space(keys, columns)
    want = {"key": keys, "attr_key_2": ["k1", "k2"], "attr_key": ["a1", "a2"]}
    want |= {"attr_embedding": ["e1", "e2"], "attr_id": ["i1", "i2"]}

    def check(rows: dict[str, list]) -> None:
        for name, values in want.items():
            assert rows[name] == values, name

    check(pq.read_table(emb.to_parquet(tmp_path / "parquet") / "items.parquet").to_pydict())
    check(pq.read_table(emb.to_faiss(tmp_path / "faiss") / "items.parquet").to_pydict())
    check(lancedb.connect(str(emb.to_lancedb(tmp_path / "lance"))).open_table("items").to_arrow().to_pydict())
    client = QdrantClient(path=str(emb.to_qdrant(tmp_path / "qdrant")))
    try:
        points = sorted(client.retrieve("items", [0, 1]), key=lambda p: p.id)
        check({name: [p.payload[name] for p in points] for name in want})
    finally:
        client.close()
    _load(pg, emb.to_pgvector(tmp_path / "pg"), tmp_path)
    check(_query(pg, "SELECT * FROM likewise_items ORDER BY id").to_pydict())


# ------------------------------------------------------------------------------------------ queries


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "  -- a note; with a semicolon\n  select a FROM t;  ",
        "WITH x AS (SELECT ';' AS s) SELECT * FROM x",
        "/* a; /* nested; */ */ SELECT $$;$$, $tag$ ; $tag$, E'\\';', \"a;b\" FROM t;;",
        "(SELECT 1) UNION (SELECT 2)",
        "FROM 'orders/*.parquet'",
        "VALUES (1, 2)",
    ],
)
def test_one_read_statement_is_accepted_whatever_its_quotes_and_comments(sql):
    assert one_statement(sql, "db") == sql


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("SELECT 1; DELETE FROM orders", "2 statements"),
        ("ATTACH 'x.db' AS v; DELETE FROM v.orders", "2 statements"),
        ("COPY (SELECT 42) TO 'x.csv'", "starts with 'COPY'"),
        ("DELETE FROM orders", "starts with 'DELETE'"),
        ("/* SELECT */ DROP TABLE orders", "starts with 'DROP'"),
        ("SELECT ';'; COMMIT; SET default_transaction_read_only = off", "3 statements"),
        ("  ", "is empty"),
    ],
)
def test_more_than_one_statement_or_one_that_writes_is_refused(sql, says):
    with pytest.raises(InputError, match=re.escape(says)):
        one_statement(sql, "'db'")


def test_the_qdrant_export_writes_past_local_modes_threshold_without_a_warning(tmp_path, monkeypatch):
    """qdrant-client warns past 20,000 points in local mode; its threshold is lowered to 5 here, so a
    12-item space takes the same path in a moment."""
    import warnings

    from qdrant_client.common import client_warnings
    from qdrant_client.local.local_collection import LocalCollection

    monkeypatch.setattr(LocalCollection, "LARGE_DATA_THRESHOLD", 5)
    monkeypatch.setattr(client_warnings, "SEEN_MESSAGES", set())  # shown once a process: as if fresh
    emb = _space([f"p{i}" for i in range(12)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = emb.to_qdrant(tmp_path / "q")
    assert [str(w.message) for w in caught] == []
    assert (out / "collection").is_dir()


_TEXT = st.text(st.one_of(st.sampled_from(list(";'\"$-/*\\\n")), st.characters(codec="utf-8")), max_size=20)


@given(text=_TEXT, then=st.sampled_from(["DELETE FROM orders", "COMMIT", "SELECT 2", "ATTACH 'x' AS v"]))
@settings(max_examples=300, deadline=None, derandomize=True)
def test_a_semicolon_inside_quotes_or_comments_is_no_second_statement_and_one_outside_is(text, then):
    """Whatever a string, a quoted name, a dollar quote or a comment holds, the query stays one statement;
    a statement after a top-level semicolon is always found."""
    quoted = [
        "'" + text.replace("'", "''") + "'",
        '"' + text.replace('"', '""') + '"' if text else "1",
        "$q$" + text.replace("$", "") + "$q$",
        "1 /* " + text.replace("*", "") + " */",
        "1 -- " + text.replace("\n", " ") + "\n",
    ]
    for piece in quoted:
        sql = f"SELECT {piece}"
        assert one_statement(sql, "db") == sql
        with pytest.raises(InputError, match="2 statements"):
            one_statement(f"{sql}; {then}", "db")
