"""In-memory tables (pyarrow, pandas, polars): recognise them and write them to Parquet.

Training reads logs from files, so a table passed in memory is written to a Parquet file first and then
read by :mod:`likewise.readers.log` like any other log (same checks, same error messages).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["as_arrow_table", "is_table", "write_table"]


def is_table(obj: object) -> bool:
    """True for a pyarrow Table or RecordBatch or a pandas / polars DataFrame (without importing either).

    Parameters
    ----------
    obj : object
        Anything; pandas and polars are recognised by the module of its type, so neither is imported.

    Returns
    -------
    bool
        Whether :func:`as_arrow_table` accepts ``obj``.
    """
    pa = sys.modules.get("pyarrow")  # not imported yet: obj cannot be one of its tables
    if pa is not None and isinstance(obj, pa.Table | pa.RecordBatch):
        return True
    module = type(obj).__module__.split(".")[0]
    return module in ("pandas", "polars") and type(obj).__name__ == "DataFrame"


def as_arrow_table(obj: object) -> pa.Table:
    """A pyarrow Table from a pyarrow Table / RecordBatch or a pandas / polars DataFrame.

    Parameters
    ----------
    obj : object
        The table (a pandas index is dropped).

    Returns
    -------
    pyarrow.Table
        ``obj`` itself when it is one already.

    Raises
    ------
    InputError
        ``obj`` is none of those.
    """
    import pyarrow as pa

    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    module = type(obj).__module__.split(".")[0]
    if module == "polars" and hasattr(obj, "to_arrow"):
        return obj.to_arrow()
    if module == "pandas":
        return pa.Table.from_pandas(obj, preserve_index=False)
    raise InputError(
        "expected a pyarrow Table or a pandas / polars DataFrame, "
        f"got {type(obj).__module__}.{type(obj).__name__}"
    )


def write_table(obj: object, path: str | Path, columns: list[str]) -> Path:
    """Write the named ``columns`` of a table (see :func:`as_arrow_table`) to a Parquet file.

    Training reads logs from files, so an in-memory table goes through the same reader, checks and
    error messages as a file would.

    Parameters
    ----------
    obj : object
        A table :func:`is_table` accepts.
    path : str or Path
        The Parquet file to write (replaced if it exists).
    columns : list of str
        The columns to keep, in this order.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        ``obj`` is not a table, a column is not in it (the message names it and the columns there), or
        it has no rows.
    """
    import pyarrow.parquet as pq

    table = as_arrow_table(obj)
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise InputError(
            f"column {missing[0]!r} is not in the table; "
            f"its columns are {', '.join(map(repr, table.column_names))}"
        )
    if table.num_rows == 0:  # said of the table: the temporary file it would be written to is ours
        raise InputError(f"the table is empty: it has no rows (columns {', '.join(map(repr, columns))})")
    path = Path(path)
    pq.write_table(table.select(columns), path)
    return path
