"""Vectors to where apps read them: LanceDB, Qdrant, FAISS, Parquet, and a pgvector load file.

:class:`StoreExports` is a mixin of :class:`~likewise.space.embeddings.Embeddings` (``emb.to_lancedb``,
``to_qdrant``, ``to_faiss``, ``to_parquet``, ``to_pgvector``); ``likewise export MODEL --format ...``
calls the same functions. Every export writes one new folder, built in a temporary folder beside it and
renamed into place (:func:`likewise._fileio.atomic_folder`), so a failed export leaves nothing.

What each holds, one row (point, record) per item:

* the item's ``key`` (the text the user wrote), its ``id`` in the space, its ``count``, its ``type`` in a
  typed space, and every attribute column of the space's item table (``train --item-attrs``; a column
  named like one of those is prefixed ``attr_``); the rows of hidden types (attribute tokens) are left
  out, as :meth:`~likewise.space.embeddings.Embeddings.similar` leaves them out of its answers;
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
               point id = the item's id (``QdrantClient(path=...)``)
``faiss``      ``items.faiss`` (``faiss.read_index``; row i is item ``id`` i of ``items.parquet``),
               ``items.parquet`` (the columns without the vector); the same for customers
``parquet``    ``items.parquet`` and ``customers.parquet``: every column and the vector
``pgvector``   ``likewise.sql``: ``CREATE TABLE`` and ``COPY ... FROM STDIN`` for ``psql -f``, an HNSW
               index on cosine distance (pgvector >= 0.5; the load was not tested against a live
               pgvector server, which is not packaged for the machines likewise is tested on)
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
from ..errors import InputError, MissingDependencyError
from .itemtypes import TYPE_SEP

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["EXPORT_FORMATS", "StoreExports", "export", "export_tables"]

#: The formats of :func:`export`.
EXPORT_FORMATS = ("lancedb", "qdrant", "faiss", "parquet", "pgvector")
_RESERVED = ("key", "id", "count", "type", "vector", "n_products")
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
    for name, values in columns.items():
        if name == item_col:
            continue
        picked = [None if i is None else values[i] for i in at]
        try:
            array = pa.array(picked)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed kinds of value: kept as their JSON text
            array = pa.array([None if v is None else json.dumps(v) for v in picked], pa.string())
        out[f"attr_{name}" if name in _RESERVED else name] = array
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
    qdrant_client = _require("qdrant_client", "qdrant", "export --format qdrant")
    from qdrant_client import models

    client = qdrant_client.QdrantClient(path=str(tmp))
    try:
        for name, table in tables.items():
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
    finally:
        client.close()


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


def _copy_text(v: Any) -> str:
    """One value as COPY's text format writes it: ``\\N`` for NULL, backslash escapes for the rest."""
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, list | dict):
        v = json.dumps(v, ensure_ascii=False)
    text = str(v)
    for a, b in (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r")):
        text = text.replace(a, b)
    return text


def _pgvector(tables: dict[str, pa.Table], tmp: Path) -> None:
    with open(tmp / "likewise.sql", "w", encoding="utf-8", newline="\n") as f:
        f.write(
            '-- likewise vectors for PostgreSQL with pgvector >= 0.5: psql "$DATABASE_URL" -f likewise.sql\n'
        )
        f.write("CREATE EXTENSION IF NOT EXISTS vector;\n")
        for name, table in tables.items():
            cols = [c for c in table.column_names if c != "vector"]
            dim = table.schema.field("vector").type.list_size
            defs = [f'"{c}" {_sql_type(table.schema.field(c).type)}' for c in cols]
            defs[cols.index("id")] += " PRIMARY KEY"
            f.write(f"\nCREATE TABLE likewise_{name} (\n    ")
            f.write(",\n    ".join([*defs, f"embedding vector({dim}) NOT NULL"]) + "\n);\n")
            listed = ", ".join(f'"{c}"' for c in cols)
            f.write(f"COPY likewise_{name} ({listed}, embedding) FROM STDIN;\n")
            values = table.drop_columns(["vector"]).to_pylist()
            vectors = np.asarray(table.column("vector").combine_chunks().flatten(), dtype=np.float32)
            vectors = vectors.reshape(table.num_rows, -1)
            for row, vec in zip(values, vectors, strict=True):
                cells = [_copy_text(row[c]) for c in cols]
                f.write("\t".join([*cells, "[" + ",".join(map(str, vec)) + "]"]) + "\n")  # shortest float32
            f.write("\\.\n")
            f.write(f"CREATE INDEX ON likewise_{name} USING hnsw (embedding vector_cosine_ops);\n")


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
