"""Vectors to where apps read them: LanceDB, Qdrant, FAISS, Parquet, and a pgvector load file.

:class:`StoreExports` is a mixin of :class:`~likewise.space.embeddings.Embeddings` (``emb.to_lancedb``,
``to_qdrant``, ``to_faiss``, ``to_parquet``, ``to_pgvector``); ``likewise export MODEL --format ...``
calls the same functions. Every export writes one new folder, built in a temporary folder beside it and
renamed into place (:func:`likewise._fileio.atomic_folder`), so a failed export leaves nothing.

What each holds, one row (point, record) per item:

* the item's ``key`` (the text the user wrote), its ``id`` in the space, its ``count``, its ``type`` in a
  typed space, and every attribute column of the space's item table (``train --item-attrs``); a column
  named like one of ``key``, ``id``, ``count``, ``type``, ``vector``, ``n_products`` or ``embedding``
  (pgvector's vector column) is renamed ``attr_NAME``, or ``attr_NAME_2``, ``_3``, ... when that name is
  taken too (:func:`likewise._sql.fit_names`), the same in every format, so no column is lost; the rows
  of hidden types (attribute tokens) are left out, as
  :meth:`~likewise.space.embeddings.Embeddings.similar` leaves them out of its answers;
* the vector, float32: raw in LanceDB, Qdrant, Parquet and pgvector, whose search is told to use
  cosine distance (the space's measure); unit-length in FAISS, whose ``IndexFlatIP`` then ranks by
  cosine;
* when the space has customers (``emb.customers``), a second table or collection ``customers``: key,
  id, the number of products bought, vector.

=============  ===============================================================================
format         the folder holds
=============  ===============================================================================
``lancedb``    a LanceDB database: tables ``items`` and ``customers`` (``lancedb.connect(path)``)
``qdrant``     Qdrant's local storage: collections ``items`` and ``customers``, cosine distance,
               point id = the item's id (``QdrantClient(path=...)``). qdrant-client's local mode
               searches a collection of more than 20,000 points slowly and says so when it opens one:
               serve a large export from a Qdrant server. The export itself does not repeat that
               advice as a warning while it writes
``faiss``      ``items.faiss`` (``faiss.read_index``; row i is item ``id`` i of ``items.parquet``),
               ``items.parquet`` (the columns without the vector); the same for customers
``parquet``    ``items.parquet`` and ``customers.parquet``: every column and the vector
``pgvector``   ``likewise.sql``: ``CREATE TABLE`` and ``COPY ... FROM STDIN`` for ``psql -f``, in one
               transaction, an HNSW index on cosine distance (pgvector >= 0.5; the load was not tested
               against a live pgvector server, which is not packaged for the machines likewise is
               tested on). Every name is quoted and every value escaped (:mod:`likewise._sql`); a
               column name over PostgreSQL's 63 bytes is shortened with a hash of it, the full name
               kept as the column's comment; a key or value holding NUL, which PostgreSQL text cannot
               hold, is refused naming it
=============  ===============================================================================

Each library is an optional extra (``lancedb``, ``qdrant``, ``faiss``); a missing one is a
:class:`~likewise.errors.MissingDependencyError` naming its ``pip install``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._fileio import atomic_folder
from .._sql import MAX_NAME_BYTES, copy_text, fit_names, quote_ident, quote_literal
from ..errors import InputError, MissingDependencyError, shown
from .itemtypes import TYPE_SEP

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["EXPORT_FORMATS", "StoreExports", "export", "export_tables"]

#: The formats of :func:`export`.
EXPORT_FORMATS = ("lancedb", "qdrant", "faiss", "parquet", "pgvector")
# names of our own columns (``embedding``: pgvector's vector column), never taken by an attribute
_RESERVED = ("key", "id", "count", "type", "vector", "n_products", "embedding")
_BATCH = 1024  # points sent to Qdrant at a time


def _require(module: str, extra: str, purpose: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(module.split(".")[0], extra, purpose) from None


def _attribute_columns(emb: Any, keys: list[str]) -> dict[str, pa.Array]:
    """The item table's columns (``train --item-attrs``), one value per key (None where it has no row)."""
    import pyarrow as pa

    table = getattr(emb, "item_table", None)
    if not table:
        return {}
    item_col, columns = table["item_col"], table["columns"]
    row = {k: i for i, k in enumerate(columns[item_col])}
    at = [row.get(k, row.get(k.partition(TYPE_SEP)[2])) for k in keys]  # product:tent takes tent's row
    out = {}
    names = [name for name in columns if name != item_col]
    for name, column in zip(names, fit_names(names, _RESERVED), strict=True):
        values = columns[name]
        picked = [None if i is None else values[i] for i in at]
        try:
            array = pa.array(picked)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed kinds of value: kept as their JSON text
            array = pa.array([None if v is None else json.dumps(v) for v in picked], pa.string())
        out[column] = array
    return out


def export_tables(emb: Any) -> dict[str, pa.Table]:
    """The tables an export writes: ``items`` and, when the space has customers, ``customers``.

    Parameters
    ----------
    emb : Embeddings

    Returns
    -------
    dict of str to pyarrow.Table
        ``items``: ``key``, ``id``, ``count`` (, ``type``), the item table's columns, ``vector``
        (``fixed_size_list<float32>[D]``, raw), the rows of hidden types left out. ``customers``:
        ``key``, ``id``, ``n_products`` (distinct products bought), ``vector``.
    """
    import pyarrow as pa

    table = emb.to_arrow()
    rows = emb.typed_restrict(None, None)
    if rows is not None:  # a typed space with hidden types: only the rows a query may return
        table = table.take(pa.array(np.asarray(rows, dtype=np.int64)))
    keys = table.column("key").to_pylist()
    vector = table.column("vector")
    table = table.drop_columns(["vector"])
    for name, values in _attribute_columns(emb, keys).items():
        table = table.append_column(name, values)
    out = {"items": table.append_column("vector", vector)}
    customers = getattr(emb, "customers", None)
    if customers is not None and len(customers):
        vectors = np.ascontiguousarray(customers.vectors, dtype=np.float32)
        n, dim = vectors.shape
        flat = pa.array(vectors.reshape(-1), type=pa.float32())
        bought = np.diff(np.asarray(customers.bought_indptr, dtype=np.int64))
        out["customers"] = pa.table(
            {
                "key": pa.array(list(customers.keys), pa.string()),
                "id": pa.array(np.arange(n, dtype=np.int64)),
                "n_products": pa.array(bought),
                "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
            }
        )
    return out


def _unit(table: pa.Table) -> np.ndarray:
    v = np.asarray(table.column("vector").combine_chunks().flatten(), dtype=np.float32)
    v = v.reshape(table.num_rows, -1).copy()
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)


def _lancedb(tables: dict[str, pa.Table], tmp: Path) -> None:
    lancedb = _require("lancedb", "lancedb", "export --format lancedb")
    db = lancedb.connect(str(tmp))
    for name, table in tables.items():
        db.create_table(name, data=table)


def _qdrant(tables: dict[str, pa.Table], tmp: Path) -> None:
    import warnings

    qdrant_client = _require("qdrant_client", "qdrant", "export --format qdrant")
    from qdrant_client import models

    client = qdrant_client.QdrantClient(path=str(tmp))
    try:
        with warnings.catch_warnings():
            # qdrant-client warns on an upsert past 20,000 points that local mode is slow to *search*:
            # advice for who queries the storage (the module's table gives it), not a fault of writing it
            warnings.filterwarnings("ignore", "Local mode is not recommended", UserWarning)
            for name, table in tables.items():
                _qdrant_collection(client, models, name, table)
    finally:
        client.close()


def _qdrant_collection(client: Any, models: Any, name: str, table: pa.Table) -> None:
    vectors = np.asarray(table.column("vector").combine_chunks().flatten(), dtype=np.float32)
    vectors = vectors.reshape(table.num_rows, -1)
    params = models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE)
    client.create_collection(name, vectors_config=params)
    payload = table.drop_columns(["vector"]).to_pylist()
    ids = table.column("id").to_pylist()
    for s in range(0, table.num_rows, _BATCH):
        points = [
            models.PointStruct(id=ids[i], vector=vectors[i].tolist(), payload=payload[i])
            for i in range(s, min(s + _BATCH, table.num_rows))
        ]
        client.upsert(name, points=points, wait=True)


def _faiss(tables: dict[str, pa.Table], tmp: Path) -> None:
    import pyarrow.parquet as pq

    faiss = _require("faiss", "faiss", "export --format faiss")
    for name, table in tables.items():
        unit = _unit(table)
        index = faiss.IndexFlatIP(unit.shape[1])  # inner product of unit vectors: cosine
        index.add(unit)
        faiss.write_index(index, str(tmp / f"{name}.faiss"))
        pq.write_table(table.drop_columns(["vector"]), tmp / f"{name}.parquet")


def _parquet(tables: dict[str, pa.Table], tmp: Path) -> None:
    import pyarrow.parquet as pq

    for name, table in tables.items():
        pq.write_table(table, tmp / f"{name}.parquet")


def _sql_type(t: pa.DataType) -> str:
    import pyarrow as pa

    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        return "bigint"
    if pa.types.is_floating(t):
        return "double precision"
    return "text"


def _copy_value(v: Any, column: str, key: Any, table: str) -> str:
    """One value as COPY's text format writes it: ``\\N`` for NULL, escaped text; NUL refused, naming it."""
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, list | dict):
        v = json.dumps(v, ensure_ascii=False)
    whose = "item" if table == "items" else "customer"
    what = f"{whose} key" if column == "key" else f"column {column!r} of {whose} {shown(key)}: value"
    return copy_text(str(v), what)


def _pgvector(tables: dict[str, pa.Table], tmp: Path) -> None:
    with open(tmp / "likewise.sql", "w", encoding="utf-8", newline="\n") as f:
        f.write(
            '-- likewise vectors for PostgreSQL with pgvector >= 0.5: psql "$DATABASE_URL" -f likewise.sql\n'
        )
        # the file's text is UTF-8 and its literals standard (backslashes as written), whatever the
        # server's defaults; one transaction: a load that fails leaves nothing
        f.write("SET client_encoding = 'UTF8';\nSET standard_conforming_strings = on;\nBEGIN;\n")
        f.write("CREATE EXTENSION IF NOT EXISTS vector;\n")
        for name, table in tables.items():
            cols = [c for c in table.column_names if c != "vector"]
            sql_names = fit_names(cols, ("embedding",), max_bytes=MAX_NAME_BYTES)  # 63 bytes kept
            quoted = [quote_ident(c, "column name") for c in sql_names]
            dim = table.schema.field("vector").type.list_size
            defs = [f"{q} {_sql_type(table.schema.field(c).type)}" for q, c in zip(quoted, cols, strict=True)]
            defs[cols.index("id")] += " PRIMARY KEY"
            f.write(f"\nCREATE TABLE likewise_{name} (\n    ")
            f.write(",\n    ".join([*defs, f"embedding vector({dim}) NOT NULL"]) + "\n);\n")
            for q, c, s in zip(quoted, cols, sql_names, strict=True):
                if c != s:  # shortened: the column's comment keeps the name it had
                    f.write(f"COMMENT ON COLUMN likewise_{name}.{q} IS {quote_literal(c, 'column name')};\n")
            f.write(f"COPY likewise_{name} ({', '.join(quoted)}, embedding) FROM STDIN;\n")
            values = table.drop_columns(["vector"]).to_pylist()
            vectors = np.asarray(table.column("vector").combine_chunks().flatten(), dtype=np.float32)
            vectors = vectors.reshape(table.num_rows, -1)
            for row, vec in zip(values, vectors, strict=True):
                cells = [_copy_value(row[c], c, row["key"], name) for c in cols]
                f.write("\t".join([*cells, "[" + ",".join(map(str, vec)) + "]"]) + "\n")  # shortest float32
            f.write("\\.\n")
            f.write(f"CREATE INDEX ON likewise_{name} USING hnsw (embedding vector_cosine_ops);\n")
        f.write("COMMIT;\n")


_WRITERS = {
    "lancedb": _lancedb,
    "qdrant": _qdrant,
    "faiss": _faiss,
    "parquet": _parquet,
    "pgvector": _pgvector,
}


def export(emb: Any, format: str, path: str | os.PathLike) -> Path:
    """Write the space's items (and customers) for a vector store, into the new folder ``path``.

    Parameters
    ----------
    emb : Embeddings
    format : {"lancedb", "qdrant", "faiss", "parquet", "pgvector"}
        See the module's table.
    path : path
        A folder that must not exist; written in a temporary folder beside it, then renamed.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        An unknown format, or ``path`` exists.
    MissingDependencyError
        The format's library is not installed.
    """
    if format not in _WRITERS:
        raise InputError(f"format == {format!r}, must be one of {', '.join(map(repr, EXPORT_FORMATS))}")
    final = Path(path).expanduser()
    if final.exists():
        raise InputError(f"{str(final)!r} already exists: choose a new folder for the {format} export")
    tables = export_tables(emb)
    with atomic_folder(final) as tmp:
        _WRITERS[format](tables, tmp)
    return final


class StoreExports:
    """``to_lancedb``, ``to_qdrant``, ``to_faiss``, ``to_parquet``, ``to_pgvector`` (of Embeddings)."""

    def to_lancedb(self, path: str | os.PathLike) -> Path:
        """A LanceDB database at the new folder ``path``: tables ``items`` (and ``customers``); see
        :mod:`likewise.space.vectorstores`. Query with ``.search(v).distance_type("cosine")``."""
        return export(self, "lancedb", path)

    def to_qdrant(self, path: str | os.PathLike) -> Path:
        """Qdrant's local storage at the new folder ``path`` (``QdrantClient(path=path)``): collections
        ``items`` (and ``customers``), cosine distance, point id = item id."""
        return export(self, "qdrant", path)

    def to_faiss(self, path: str | os.PathLike) -> Path:
        """``items.faiss`` (an ``IndexFlatIP`` of unit vectors, for ``faiss.read_index``) and
        ``items.parquet`` (its rows' keys, ids, counts and attributes) in the new folder ``path``."""
        return export(self, "faiss", path)

    def to_parquet(self, path: str | os.PathLike) -> Path:
        """``items.parquet`` (and ``customers.parquet``), every column and the vector, in the new folder
        ``path``."""
        return export(self, "parquet", path)

    def to_pgvector(self, path: str | os.PathLike) -> Path:
        """``likewise.sql`` in the new folder ``path``: CREATE TABLE and COPY for PostgreSQL with pgvector
        (``psql -f``); not tested against a live pgvector server."""
        return export(self, "pgvector", path)
