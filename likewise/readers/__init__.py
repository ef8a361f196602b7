"""Read baskets, sessions and sentences from text files, transaction logs and in-memory tables, streamed.

Five kinds of input, a module each:

* **text** (:mod:`~likewise.readers.text`) -- one sentence / basket / session per line, items
  separated by whitespace (or a ``delimiter``); plain, ``.gz``, ``.bz2`` or ``.zst``; read in bounded
  chunks, a line of more than :data:`MAX_SEQUENCE_LENGTH` items cut into sequences of that many.
* **transaction logs** (:mod:`~likewise.readers.log`) -- CSV/TSV (optionally compressed), Parquet or
  JSON Lines with one row per (basket, item) pair, read in two streamed passes (count, then group).
* **tables** (:mod:`~likewise.readers.table`) -- a pyarrow / pandas / polars table in memory, written
  to Parquet and then read as a log.
* **queries and datasets** (:mod:`~likewise.readers.sources`) -- a SQL query (PostgreSQL, SQLite
  through ADBC; DuckDB), a folder of hive partitions or an ``s3://`` / ``gs://`` URL, streamed once as
  Arrow record batches into a Parquet file that the log reader reads.
* **one resolver** (:mod:`~likewise.readers.resolve`) -- :func:`resolve_input` decides what a training
  input is (paths, a spec, a table, a matrix, a corpus, sequences) and gives it one of the shapes the
  corpus compiler reads, with the reading options checked once (:class:`ReadOptions`).
* **sparse matrices** (:mod:`~likewise.readers.matrix`) -- a scipy.sparse user × item matrix, each row
  a basket of the columns it holds a value > 0 in (already packed ids: no Python object per row).

Tables keyed by item or customer -- item attributes, new products, labels, seed customers -- are read by
one function, :func:`read_table_file` (:mod:`~likewise.readers.keyed`), and their keys checked by
:func:`key_column` as a log's keys are: one set of rules for formats, headers, types, encodings, nulls
and key lengths.

What they share (:class:`InputSpec`, the files it names, their format and compression) is in the
private ``_files`` module; everything public is re-exported here, so ``likewise.readers.X`` is the name
to use. Each module imports only :mod:`likewise.errors` of the rest of likewise; the matrix reader also
uses the sparse-matrix validators of ``likewise._check``, which :meth:`Embeddings.recommend` shares, and
the sources module ``likewise._fileio.file_sha256`` for a database file's cache key.

Empty files: a file named explicitly that has no data (0 bytes, a header-only CSV, a 0-row Parquet
file, a text file with no non-blank line) is an error; a file found by expanding a folder may be
empty (Spark writes such parts for empty partitions) and is skipped, as long as the whole input has
some data.

Module constants such as :data:`GROUP_MEMORY_BUDGET` are copied here: to change one, set it on the
module that reads it (``likewise.readers.log.GROUP_MEMORY_BUDGET``), or pass ``budget=`` to
:func:`iter_log_groups`.
"""

from .._lazy import lazy_names
from ._files import (
    BASKET_SCOPES,
    COMPRESSION_SUFFIXES,
    FORMATS,
    LOG_FORMATS,
    ON_BAD_ROWS,
    InputSpec,
    compression,
    detect_format,
    first_line,
    input_format,
    is_dataset,
    log_progress,
    named_files,
    resolve_files,
)
from .matrix import SparseBaskets, is_sparse, sparse_baskets
from .table import is_table
from .text import MAX_ITEM_CHARS, MAX_SEQUENCE_LENGTH, iter_text_chunks, iter_text_sequences, simple_tokens

# The log and table readers need pyarrow (~30 MiB resident once imported): they load on first use, so
# training on text never imports it.
_LAZY = {
    "iter_log_batches": "_batches",
    "GROUP_MEMORY_BUDGET": "log",
    "MAX_PARTITIONS": "log",
    "LogScan": "log",
    "CheckedBatch": "log",
    "check_log_batch": "log",
    "column_seconds": "_checks",
    "hash_keys": "log",
    "iter_log_groups": "log",
    "n_partitions": "log",
    "scan_log": "log",
    "HeaderRule": "keyed",
    "key_column": "keyed",
    "read_table_file": "keyed",
    "text_column": "keyed",
    "as_arrow_table": "table",
    "write_table": "table",
    "identity": "sources",
    "label_of": "sources",
    "describe_source": "sources",
    "named_as": "sources",
    "stage": "sources",
    "ReadOptions": "resolve",
    "Resolved": "resolve",
    "parse_duration": "resolve",
    "resolve_input": "resolve",
}


__getattr__ = lazy_names(__name__, _LAZY, keep=globals())  # kept once imported


__all__ = [
    "BASKET_SCOPES",
    "COMPRESSION_SUFFIXES",
    "FORMATS",
    "GROUP_MEMORY_BUDGET",
    "LOG_FORMATS",
    "ON_BAD_ROWS",
    "MAX_ITEM_CHARS",
    "MAX_PARTITIONS",
    "MAX_SEQUENCE_LENGTH",
    "HeaderRule",
    "InputSpec",
    "CheckedBatch",
    "LogScan",
    "ReadOptions",
    "Resolved",
    "SparseBaskets",
    "as_arrow_table",
    "check_log_batch",
    "column_seconds",
    "compression",
    "describe_source",
    "detect_format",
    "first_line",
    "hash_keys",
    "identity",
    "input_format",
    "is_dataset",
    "is_sparse",
    "is_table",
    "iter_log_batches",
    "iter_log_groups",
    "iter_text_chunks",
    "iter_text_sequences",
    "key_column",
    "label_of",
    "log_progress",
    "n_partitions",
    "parse_duration",
    "named_as",
    "named_files",
    "read_table_file",
    "resolve_files",
    "resolve_input",
    "scan_log",
    "simple_tokens",
    "sparse_baskets",
    "stage",
    "text_column",
    "write_table",
]
