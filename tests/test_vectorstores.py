"""Vectors to where apps read them: LanceDB, Qdrant (embedded), FAISS, Parquet, a pgvector load file.

A query through each store's own client must return our ``similar`` answer (recall >= 0.99 over many
queries); each export carries keys, ids, counts, the item table's attribute columns and the customers.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pyarrow.parquet as pq
import pytest

from likewise import retail
from likewise.cli import main
from likewise.data.datasets import retail_orders, write_retail
from likewise.errors import InputError
from likewise.space.embeddings import Embeddings

K = 10


@pytest.fixture(scope="module")
def space(tmp_path_factory) -> tuple[Embeddings, object]:
    """A retail space with customers and item attributes (a typed space: its attribute tokens hidden)."""
    root = tmp_path_factory.mktemp("stores")
    write_retail(retail_orders(1500, 300, seed=3), root / "shop", formats=("parquet",))
    emb = retail.train_from_log(
        root / "shop" / "orders.parquet",
        item_attrs=root / "shop" / "products.csv",
        dim=16,
        epochs=3,
        min_count=1,
        deterministic=True,
        cache_dir=root / "cache",
    )
    emb.save(root / "model")
    return emb, root


def _queries(emb: Embeddings) -> list[str]:
    visible = emb.typed_restrict(None, None)
    keys = [emb.keys[i] for i in (range(len(emb)) if visible is None else visible)]
    return keys[:: max(1, len(keys) // 60)]


def _recall(emb: Embeddings, answer) -> float:
    """Mean share of our ``similar`` top K that the store's top K (query itself dropped) holds."""
    hits = []
    for key in _queries(emb):
        ours = set(emb.similar(key, K, evidence=False).keys)  # a store searches plain cosine
        theirs = [k for k in answer(key, np.asarray(emb[key], dtype=np.float32)) if k != key][:K]
        hits.append(len(ours & set(theirs)) / K)
    return float(np.mean(hits))


def test_export_tables_hold_keys_ids_counts_attributes_and_customers(space):
    from likewise.space.vectorstores import export_tables

    emb, _ = space
    tables = export_tables(emb)
    items = tables["items"]
    assert items.column_names[:4] == ["key", "id", "count", "type"]
    assert {"name", "department", "aisle"} <= set(items.column_names)
    assert items.column_names[-1] == "vector"
    assert not any(k.startswith("attr:") for k in items.column("key").to_pylist())  # hidden rows left out
    ids = items.column("id").to_numpy()
    assert items.column("key").to_pylist() == [emb.keys[i] for i in ids]
    np.testing.assert_array_equal(items.column("count").to_numpy(), np.asarray(emb.counts)[ids])
    customers = tables["customers"]
    assert customers.column("key").to_pylist() == list(emb.customers.keys)
    assert customers.num_rows == len(emb.customers)


def test_lancedb_search_returns_our_similar(space, tmp_path):
    import lancedb

    emb, _ = space
    out = emb.to_lancedb(tmp_path / "store")
    db = lancedb.connect(str(out))
    table = db.open_table("items")

    def answer(key, v):
        hits = table.search(v).distance_type("cosine").limit(K + 1).to_arrow()
        return hits.column("key").to_pylist()

    assert _recall(emb, answer) >= 0.99
    assert db.open_table("customers").count_rows() == len(emb.customers)


def test_qdrant_embedded_query_returns_our_similar(space, tmp_path):
    from qdrant_client import QdrantClient

    emb, _ = space
    out = emb.to_qdrant(tmp_path / "store")
    client = QdrantClient(path=str(out))
    try:

        def answer(key, v):
            points = client.query_points("items", query=v.tolist(), limit=K + 1).points
            return [p.payload["key"] for p in points]

        assert _recall(emb, answer) >= 0.99
        first = int(emb.typed_restrict(None, None)[0])  # the first row a query may return
        point = client.retrieve("items", [first])[0]
        assert point.payload["key"] == emb.keys[first] and point.payload["count"] == int(emb.counts[first])
        assert client.count("customers").count == len(emb.customers)
    finally:
        client.close()


def test_faiss_index_reads_back_and_answers_our_similar(space, tmp_path):
    import faiss

    emb, _ = space
    out = emb.to_faiss(tmp_path / "store")
    index = faiss.read_index(str(out / "items.faiss"))
    rows = pq.read_table(out / "items.parquet")
    keys = rows.column("key").to_pylist()
    assert index.ntotal == rows.num_rows and index.d == emb.dim and "vector" not in rows.column_names

    def answer(key, v):
        _, found = index.search((v / np.linalg.norm(v))[None, :], K + 1)
        return [keys[i] for i in found[0]]

    assert _recall(emb, answer) >= 0.99
    assert faiss.read_index(str(out / "customers.faiss")).ntotal == len(emb.customers)


def test_parquet_round_trip(space, tmp_path):
    emb, _ = space
    out = emb.to_parquet(tmp_path / "store")
    items = pq.read_table(out / "items.parquet")
    ids = items.column("id").to_numpy()
    vectors = np.asarray(items.column("vector").combine_chunks().flatten()).reshape(len(ids), -1)
    np.testing.assert_array_equal(vectors, np.asarray(emb.vectors, dtype=np.float32)[ids])
    customers = pq.read_table(out / "customers.parquet")
    cv = np.asarray(customers.column("vector").combine_chunks().flatten()).reshape(customers.num_rows, -1)
    np.testing.assert_array_equal(cv, np.asarray(emb.customers.vectors, dtype=np.float32))


def test_pgvector_file_loads_into_postgres_with_the_vector_as_text(space, tmp_path):
    """pgvector is not packaged here: the file is loaded into a real PostgreSQL with ``vector(D)`` read
    as text, which checks the CREATE TABLE and every COPY row (escapes, NULLs, types), not the
    extension itself."""
    from _servers import postgres_server

    emb, _ = space
    out = emb.to_pgvector(tmp_path / "store")
    sql = (out / "likewise.sql").read_text(encoding="utf-8")
    assert sql.count("COPY likewise_") == 2 and f"vector({emb.dim})" in sql
    psql = shutil.which("psql")
    if psql is None:
        pytest.skip("psql is not installed")
    plain = "\n".join(
        line.replace(f"vector({emb.dim})", "text")
        for line in sql.splitlines()
        if not line.startswith(("CREATE EXTENSION", "CREATE INDEX"))
    )
    (tmp_path / "plain.sql").write_text(plain + "\n", encoding="utf-8")
    with postgres_server() as uri:
        run = [psql, uri, "-v", "ON_ERROR_STOP=1", "-q", "-f", str(tmp_path / "plain.sql")]
        subprocess.run(run, check=True, capture_output=True, text=True)
        query = "SELECT key, embedding FROM likewise_items ORDER BY id LIMIT 3"
        got = subprocess.run(
            [psql, uri, "-At", "-F", "\t", "-c", query], check=True, capture_output=True, text=True
        )
    key, text = got.stdout.splitlines()[0].split("\t")
    np.testing.assert_array_equal(
        np.asarray(json.loads(text), np.float32), emb.vectors[emb.ids_of([key])[0][0]]
    )


def test_export_cli_writes_each_format_and_refuses_an_existing_folder(space, tmp_path, capsys):
    _, root = space
    for fmt in ("parquet", "faiss"):
        assert (
            main(["export", str(root / "model"), "--format", fmt, "-o", str(tmp_path / fmt), "--json"]) == 0
        )
        assert json.loads(capsys.readouterr().out)["format"] == fmt
    assert (tmp_path / "faiss" / "items.faiss").is_file()
    assert main(["export", str(root / "model"), "--format", "parquet", "-o", str(tmp_path / "parquet")]) == 1
    assert "already exists" in capsys.readouterr().err


def test_missing_library_names_the_pip_install(space, tmp_path, monkeypatch):
    import sys

    from likewise.errors import MissingDependencyError

    emb, _ = space
    monkeypatch.setitem(sys.modules, "lancedb", None)
    with pytest.raises(MissingDependencyError, match=r"pip install '\.\[lancedb\]'"):
        emb.to_lancedb(tmp_path / "store")
    assert not (tmp_path / "store").exists()
    with pytest.raises(InputError, match="must be one of"):
        from likewise.space.vectorstores import export

        export(emb, "annoy", tmp_path / "x")


def test_a_space_without_customers_or_attributes_exports_items_alone(tmp_path):
    import likewise

    baskets = [["tent", "mat", "stove"], ["tent", "mat"], ["pan", "stove"], ["pan", "kettle"]] * 25
    emb = likewise.train(baskets, dim=4, epochs=1, min_count=1, seed=1)
    out = emb.to_parquet(tmp_path / "store")
    assert sorted(p.name for p in out.iterdir()) == ["items.parquet"]
    items = pq.read_table(out / "items.parquet")
    assert items.column_names == ["key", "id", "count", "vector"]
    assert items.column("key").to_pylist() == emb.keys
