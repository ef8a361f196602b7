"""Logs that are not local files: a SQL query, or an Arrow dataset (hive partitions, object storage).

Four kinds of source, each read as Arrow record batches:

* **PostgreSQL** and **SQLite** through ADBC (``adbc-driver-postgresql``, ``adbc-driver-sqlite``):
  ``InputSpec(sql="SELECT ...", uri="postgresql://user@host/db")``, ``uri="sqlite:///orders.db"``
  (SQLAlchemy's form: three slashes and a relative path, four for an absolute one; or the file's path);
* **DuckDB**: a ``.duckdb`` file (``uri="shop.duckdb"`` or ``"duckdb:///path"``), or ``uri="duckdb:"``
  for DuckDB's SQL over Parquet/CSV files (``SELECT * FROM 'orders/*.parquet'``), through its Arrow
  record-batch reader;
* an **Arrow dataset**: a folder of hive partitions (``year=2024/month=01/part-0.parquet``) or an
  object-store URL (``s3://bucket/orders/``, ``gs://...``; ``pyarrow.fs``, else ``fsspec``), a file or a
  prefix, Parquet, CSV or JSON Lines, partition columns read like the others.

How they reach training: :func:`stage` streams the source's batches once, only the columns the log
reader needs, into one Parquet file in the corpus's temporary build folder, and that file is read by the
one log reader (:mod:`likewise.readers.log`): the same checks, messages and two passes as any file, and
memory bounded by one batch. The query runs once: the reader's two passes read the copy, so a table
that changes meanwhile cannot give the passes different rows. Messages that name the copy name the
source instead (:func:`named_as`); a failed read (a dropped connection, a bad column) leaves no corpus,
since the build folder is published only whole.

What keys the corpus cache (:func:`identity`): a query by its text and its database's URI (its secrets
redacted); a SQLite or DuckDB file also by its bytes' sha256. A server's table that changed under the
same query is not noticed: compile afresh with another ``cache_dir`` (``--cache-dir``). A dataset is
keyed by each of its files' path, size and modification time (a local file's sha256, as files are).
No credential is part of a key, and none is trusted on the strength of one: a PostgreSQL source is
connected to (and so authenticated) before its cached corpus is used, and a dataset's files are listed
with the credentials given, so a wrong password is refused as the server refuses it, cache or not.

Only reading is allowed: the query must be one statement that reads. DuckDB's own parser says so
(one statement of type SELECT); for PostgreSQL and SQLite :func:`likewise._sql.one_statement` checks the
text, and the query runs in a read-only transaction (PostgreSQL) or on a read-only connection with
``query_only`` set (SQLite), so a ``COPY ... TO``, an ``ATTACH``, a second statement or a
``WITH x AS (DELETE ...)`` is refused before anything is written. A DuckDB file is opened read-only.

No secret is printed or stored (:mod:`likewise._secrets`): every message, progress line and corpus
manifest names a source by its redacted text, and a driver's message is scrubbed of the source's secrets
before it is raised again.

Each driver is an optional extra; a missing one is a one-line :class:`~likewise.errors.MissingDependencyError`
naming the ``pip install``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from .._secrets import redact, scrub
from .._sql import one_statement
from ..errors import InputError, MissingDependencyError
from ._batches import read_columns, refuse_twice
from ._files import InputSpec, detect_format, first_line, is_url, log_progress

__all__ = [
    "DRIVERS",
    "check_query",
    "describe_source",
    "identity",
    "kind_of",
    "label_of",
    "named_as",
    "redact",
    "stage",
]

#: The driver module of each kind of query source, and the extra that installs it.
DRIVERS = {
    "postgresql": ("adbc_driver_postgresql.dbapi", "adbc-driver-postgresql", "postgres"),
    "sqlite": ("adbc_driver_sqlite.dbapi", "adbc-driver-sqlite", "sqlite"),
    "duckdb": ("duckdb", "duckdb", "duckdb"),
}
_BATCH_ROWS = 1 << 20  # rows a dataset scanner or DuckDB hands over at a time
_SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
_DATASET_FORMATS = {"parquet": "parquet", "csv": "csv", "jsonl": "json"}


def _driver(kind: str) -> Any:
    """The driver module of ``kind``, or a one-line error naming the ``pip install``."""
    import importlib

    module, package, extra = DRIVERS[kind]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(package, extra, f"reading {kind}") from None


def kind_of(uri: str) -> str:
    """Which driver a query's ``uri`` names: ``"postgresql"``, ``"sqlite"`` or ``"duckdb"``."""
    scheme = uri.partition(":")[0].lower() if ":" in uri and not Path(uri).exists() else ""
    if scheme in ("postgresql", "postgres"):
        return "postgresql"
    if scheme == "sqlite" or uri.lower().endswith(_SQLITE_SUFFIXES):
        return "sqlite"
    if scheme == "duckdb" or uri.lower().endswith(".duckdb"):
        return "duckdb"
    raise InputError(
        f"uri == {redact(uri)!r} names no database likewise reads: give postgresql://user@host/db, "
        "sqlite:///path.db (or a .sqlite/.db file), a .duckdb file, or duckdb: for DuckDB's SQL over files"
    )


def _db_file(uri: str, kind: str) -> str | None:
    """The local file a SQLite or DuckDB ``uri`` names (None for DuckDB in memory, or a server)."""
    if kind == "postgresql":
        return None
    for prefix in (f"{kind}:///", f"{kind}://", f"{kind}:"):  # as SQLAlchemy: sqlite:////abs, sqlite:///rel
        if uri.lower().startswith(prefix):
            uri = uri[len(prefix) :]
            break
    if uri in ("", ":memory:"):
        return None
    return os.path.expanduser(uri)


def label_of(spec: InputSpec) -> str:
    """How messages name the source of ``spec``: the query's database, or the dataset."""
    if spec.sql is not None:
        return f"the query on {redact(spec.uri or '')!r}"
    return ", ".join(repr(redact(p)) for p in spec.paths)


def describe_source(spec: InputSpec) -> dict[str, Any]:
    """A query's text and database (redacted), or a dataset's paths: for a corpus's manifest."""
    if spec.sql is not None:
        return {"kind": kind_of(spec.uri or ""), "uri": redact(spec.uri or ""), "query": redact(spec.sql)}
    return {"kind": "dataset", "paths": [redact(p) for p in spec.paths]}


def identity(spec: InputSpec) -> dict[str, Any]:
    """What keys the corpus of a query or dataset in the cache (see the module's notes).

    Parameters
    ----------
    spec : InputSpec
        A query (``sql``, ``uri``) or a dataset (a hive folder, an object-store URL).

    Returns
    -------
    dict
        JSON-ready: the query and its redacted URI (and a database file's size and sha256), or the
        dataset's files with their sizes and modification times.
    """
    from .._fileio import file_sha256

    if spec.sql is not None:
        uri = spec.uri or ""
        kind = kind_of(uri)
        check_query(spec)  # a query that writes is refused before the cache is looked at
        out: dict[str, Any] = {"kind": kind, "uri": redact(uri), "query": spec.sql}
        if kind == "postgresql":  # the credentials are checked by the server, not by the cache's key
            _authenticate(spec)
        path = _db_file(uri, kind)
        if path is not None:
            p = _existing_db(path, uri)
            out["file"] = [str(p.resolve()), p.stat().st_size, file_sha256(p)]
        return out
    files = []
    for raw in spec.paths:
        fs, root = _filesystem(raw)
        for info in _dataset_files(fs, root, raw):
            local = fs.type_name == "local"
            tag = file_sha256(info.path) if local else info.mtime_ns
            files.append([redact(raw) if not local else str(Path(info.path).resolve()), info.size, tag])
    return {"kind": "dataset", "paths": [redact(p) for p in spec.paths], "files": files}


def _existing_db(path: str, uri: str) -> Path:
    p = Path(path)
    if not p.is_file():  # SQLite and DuckDB would create an empty database: a typo gives no rows
        raise InputError(f"database file {redact(path)!r} (of uri {redact(uri)!r}) does not exist")
    return p


# --------------------------------------------------------------------------------------------- datasets


def _filesystem(raw: str) -> tuple[Any, str]:
    """The ``pyarrow.fs`` filesystem of a path or URL and the path on it (``fsspec`` for other schemes)."""
    import pyarrow.fs as pafs

    if not is_url(raw):
        return pafs.LocalFileSystem(), str(Path(raw).expanduser().resolve())
    try:
        return pafs.FileSystem.from_uri(raw)
    except pa.ArrowInvalid:
        pass  # a scheme pyarrow lacks: fsspec may have it
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"cannot open {redact(raw)!r}: {scrub(first_line(e), raw)}") from None
    try:
        import fsspec
    except ImportError:
        raise MissingDependencyError("fsspec", "lake", f"reading {raw!r}") from None
    try:
        fs, path = fsspec.core.url_to_fs(raw)
    except (ImportError, ValueError) as e:  # fsspec's message names the package of that scheme
        raise InputError(f"cannot open {redact(raw)!r}: {scrub(first_line(e), raw)}") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


def _dataset_files(fs: Any, root: str, raw: str) -> list[Any]:
    """The data files under ``root`` (or ``root`` itself), hidden and ``_`` names skipped, sorted."""
    import pyarrow.fs as pafs

    try:
        info = fs.get_file_info(root)
        if info.type == pafs.FileType.File:
            return [info]
        if info.type == pafs.FileType.NotFound:
            raise InputError(f"input path {redact(raw)!r} does not exist")
        found = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"cannot list {redact(raw)!r}: {scrub(first_line(e), raw)}") from None
    hidden = (".", "_")
    files = [
        f
        for f in found
        if f.type == pafs.FileType.File
        and not any(part.startswith(hidden) for part in f.path[len(root) :].split("/") if part)
    ]
    if not files:
        raise InputError(f"{redact(raw)!r} holds no input files")
    return sorted(files, key=lambda f: f.path)


def _dataset_reader(spec: InputSpec, cols: list[str]) -> Iterator[pa.RecordBatchReader]:
    import pyarrow.csv as pcsv
    import pyarrow.dataset as ds

    parts = []
    for raw in spec.paths:
        fs, root = _filesystem(raw)
        files = _dataset_files(fs, root, raw)
        fmt = detect_format(files[0].path, spec.format)
        if fmt not in _DATASET_FORMATS:
            raise InputError(
                f"{redact(raw)!r} holds {fmt} files; a dataset is read as Parquet, CSV or JSON Lines"
            )
        file_format: Any = _DATASET_FORMATS[fmt]
        if fmt == "csv":  # keys as text, as the CSV reader reads them
            keys = [spec.basket_col, spec.item_col, spec.user_col]
            convert = pcsv.ConvertOptions(column_types={c: pa.string() for c in keys if c})
            delimiter = spec.delimiter or ("\t" if files[0].path.lower().endswith(".tsv") else ",")
            parse = pcsv.ParseOptions(delimiter=delimiter)
            file_format = ds.CsvFileFormat(parse_options=parse, convert_options=convert)
        base = root if len(files) > 1 or files[0].path != root else None
        parts.append(
            ds.dataset(
                [f.path for f in files],
                filesystem=fs,
                format=file_format,
                partitioning="hive",
                partition_base_dir=base,
            )
        )
    dataset = parts[0] if len(parts) == 1 else ds.dataset(parts)
    _check_columns(cols, list(dataset.schema.names), label_of(spec))
    yield dataset.scanner(columns=cols, batch_size=_BATCH_ROWS).to_reader()


# --------------------------------------------------------------------------------------------- queries


def check_query(spec: InputSpec) -> None:
    """Refuse a query that is not one statement that reads (see the module's notes), naming its source.

    Raises
    ------
    InputError
        More than one statement, or one that is not a SELECT (``COPY ... TO``, ``ATTACH``, ``DELETE``).
    MissingDependencyError
        DuckDB, whose parser checks a DuckDB query, is not installed.
    """
    uri, sql = spec.uri or "", spec.sql or ""
    kind, source = kind_of(uri), repr(redact(uri))
    if kind != "duckdb":
        one_statement(sql, source)
        return
    duckdb = _driver(kind)
    con = duckdb.connect(":memory:")
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as e:
        raise InputError(f"cannot read the query on {source}: {scrub(first_line(e), uri)}") from None
    finally:
        con.close()
    if len(statements) != 1:
        raise InputError(
            f"the query on {source} holds {len(statements)} statements; give one SELECT (or WITH ...) "
            "statement: likewise only reads"
        )
    kind_name = statements[0].type.name
    if kind_name != "SELECT":
        raise InputError(
            f"the query on {source} is a {kind_name} statement: give one SELECT (or WITH ...) statement, "
            "likewise only reads"
        )


def _authenticate(spec: InputSpec) -> None:
    """Connect to the query's PostgreSQL server and leave: the server checks the credentials."""
    uri = spec.uri or ""
    try:
        _driver("postgresql").connect(uri).close()
    except _errors(spec) as e:
        raise InputError(f"cannot read {label_of(spec)}: {scrub(first_line(e), uri)}") from None


def _read_only(cur: Any, label: str) -> None:
    """Make the transaction the query runs in read-only (PostgreSQL), and check that it is."""
    cur.execute("SET TRANSACTION READ ONLY")
    cur.execute("SELECT current_setting('transaction_read_only')")
    if cur.fetchone() != ("on",):
        raise InputError(f"cannot run {label} read-only: the server did not make the transaction read-only")


def _query_reader(spec: InputSpec) -> Iterator[pa.RecordBatchReader]:
    uri, sql = spec.uri or "", spec.sql or ""
    kind = kind_of(uri)
    check_query(spec)
    driver = _driver(kind)
    path = _db_file(uri, kind)
    with contextlib.ExitStack() as stack:
        if kind == "duckdb":
            if path is None:
                con = driver.connect(":memory:")
            else:
                con = driver.connect(str(_existing_db(path, uri)), read_only=True)
            stack.callback(con.close)
            relation = con.sql(sql)  # a relation streams; a DB-API result would copy the rows first
            if relation is None:
                raise InputError(f"the query on {redact(uri)!r} is not a SELECT: it returns no rows")
            yield relation.to_arrow_reader(_BATCH_ROWS)
            return
        if kind == "sqlite":
            target = quote(str(_existing_db(path or "", uri).resolve()))  # read-only: never creates one
            con = driver.connect(f"file:{target}?mode=ro")
        else:
            con = driver.connect(uri)
        stack.callback(con.close)
        cur = con.cursor()
        stack.callback(cur.close)
        if kind == "sqlite":
            cur.execute("PRAGMA query_only = ON")  # nothing is written, not even by ATTACH
        else:
            _read_only(cur, label_of(spec))
        cur.execute(sql)
        yield cur.fetch_record_batch()


def _errors(spec: InputSpec) -> tuple[type[BaseException], ...]:
    """The exceptions a source's driver raises (caught and named as the source)."""
    out: list[type[BaseException]] = [pa.ArrowException, OSError]
    if spec.sql is not None:
        kind = kind_of(spec.uri or "")
        if kind == "duckdb":
            out.append(_driver(kind).Error)
        else:
            import adbc_driver_manager

            out.append(adbc_driver_manager.Error)
    return tuple(out)


def _check_columns(cols: list[str], names: list[str], label: str) -> None:
    for c in cols:
        if c not in names:
            available = ", ".join(map(repr, names))
            raise InputError(f"column {c!r} not found in {label}; available columns: {available}")
        refuse_twice(label, c, names)


def stage(spec: InputSpec, dest: Path, *, progress: bool = False) -> InputSpec:
    """Stream a query's or a dataset's rows once into the Parquet file ``dest``: the input the reader reads.

    Parameters
    ----------
    spec : InputSpec
        A query or a dataset (:func:`~likewise.readers.is_dataset`).
    dest : Path
        The Parquet file to write: in a temporary folder that is published only whole.
    progress : bool
        Print a line when reading starts and when it ends.

    Returns
    -------
    InputSpec
        ``spec`` reading ``dest`` (format ``"parquet"``, no query); the reader's messages about it name
        ``dest``, which :func:`named_as` turns into the source's name.

    Raises
    ------
    InputError
        A missing driver (with its ``pip install``), a column the rows lack, a database file that does
        not exist, or any error of the driver while reading (a dropped connection, a query that fails),
        in one line naming the source; ``dest`` is removed.
    """
    import pyarrow.parquet as pq

    label = label_of(spec)
    if not spec.basket_col or not (spec.item_col or spec.type_cols):
        raise InputError(
            f"{label} is read as an order log: give basket_col and item_col (--basket-col, --item-col)"
        )
    cols = read_columns(spec)
    t0 = time.perf_counter()
    if progress:
        log_progress(f"reading {label}", progress)
    errors = _errors(spec)
    n_rows = 0
    opened = _query_reader(spec) if spec.sql is not None else _dataset_reader(spec, cols)
    try:
        with contextlib.closing(opened):
            reader = next(opened)
            _check_columns(cols, list(reader.schema.names), label)
            schema = pa.schema([reader.schema.field(c) for c in cols])
            with pq.ParquetWriter(str(dest), schema) as writer:
                for batch in reader:
                    if batch.num_rows:
                        writer.write_batch(batch.select(cols))
                        n_rows += batch.num_rows
    except errors as e:
        dest.unlink(missing_ok=True)
        raise InputError(f"cannot read {label}: {scrub(first_line(e), spec.uri, *spec.paths)}") from None
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    if n_rows == 0:
        dest.unlink(missing_ok=True)
        raise InputError(f"{label} returned no rows")
    if progress:
        log_progress(f"read {n_rows:,} rows from {label} in {time.perf_counter() - t0:.1f}s", progress)
    return dataclasses.replace(spec, paths=(str(dest),), format="parquet", sql=None, uri=None, delimiter=None)


@contextlib.contextmanager
def named_as(path: Path, label: str, rewrite: Callable[[str], str] | None = None) -> Iterator[None]:
    """Errors of the reader that name the staged copy ``path`` name the source ``label`` instead
    (``rewrite``, given, first rewrites the rest of such a message: a row number as the source counts)."""
    try:
        yield
    except InputError as e:
        text = str(e)
        if str(path) not in text:
            raise
        text = rewrite(text) if rewrite is not None else text
        raise type(e)(text.replace(str(path), label)) from None
