"""The checks every log reader makes of a batch's columns, one home for each (and its message).

A bad value raises :class:`~likewise.errors.InputError` naming the file, the column and the data row
(rows count from 1, the header not counted), so the streaming reader and the typed reader say the same.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError, shown
from ._files import first_line
from .text import MAX_ITEM_CHARS

__all__ = [
    "as_strings",
    "check_empty",
    "check_float_keys",
    "check_length",
    "check_line_breaks",
    "check_nulls",
    "check_quantity",
    "check_utf8",
    "column_seconds",
]


#: The end of a null or empty key's message in a log.
LOG_NEED = "every row needs a basket, an item and each column named for it"


def _first(mask: pa.Array) -> int:
    return int(np.flatnonzero(mask.to_numpy(zero_copy_only=False))[0])


def _bad_row(kind: str, path: Path | str, first_row: int, name: str, mask: pa.Array, need: str) -> InputError:
    return InputError(
        f"{kind} {name!r} value in {path} at data row {first_row + _first(mask) + 1} (rows count from 1, "
        f"header not counted); {need}"
    )


def check_nulls(path: Path | str, first_row: int, name: str, col: pa.Array, *, need: str = LOG_NEED) -> None:
    """Reject nulls (an empty CSV field, a JSON ``null``, a Parquet null); ``need`` ends the message."""
    if col.null_count:
        raise _bad_row("null", path, first_row, name, col.is_null(), need)


def check_empty(path: Path | str, first_row: int, name: str, keys: pa.Array, *, need: str = LOG_NEED) -> None:
    """Reject empty keys (a quoted ``""`` in CSV, ``""`` in JSON or Parquet) like nulls."""
    empty = pc.equal(pc.binary_length(keys), 0)
    if pc.any(empty).as_py():
        raise _bad_row("empty", path, first_row, name, empty, need)


def check_line_breaks(path: Path | str, first_row: int, name: str, keys: pa.Array) -> None:
    """Reject item keys holding a line break: one-per-line exports (text, TSV, word2vec) would split them."""
    broken = pc.match_substring_regex(keys, r"[\r\n]")
    if pc.any(broken).as_py():
        at = _first(broken)
        raise InputError(
            f"{name!r} value {shown(keys[at].as_py())} contains a line break, in {path} at data row "
            f"{first_row + at + 1} (rows count from 1, header not counted)"
        )


def check_length(path: Path | str, first_row: int, name: str, keys: pa.Array) -> None:
    """Reject keys of more than :data:`~likewise.readers.MAX_ITEM_CHARS` characters, as the text reader does.

    ``keys`` must be valid UTF-8 (:func:`check_utf8` first).
    """
    lengths = pc.utf8_length(keys)
    longest = pc.max(lengths).as_py()
    if longest is not None and longest > MAX_ITEM_CHARS:
        at = _first(pc.greater(lengths, MAX_ITEM_CHARS))
        raise InputError(
            f"{name!r} value {shown(keys[at].as_py())} is longer than {MAX_ITEM_CHARS} characters, in {path} "
            f"at data row {first_row + at + 1} (rows count from 1, header not counted); a key may have at "
            f"most {MAX_ITEM_CHARS}"
        )


def check_utf8(path: Path | str, first_row: int, name: str, keys: pa.Array) -> None:
    """Reject keys that are not UTF-8: Parquet does not check its string columns (CSV and JSON do)."""
    try:
        keys.validate(full=True)
    except pa.ArrowInvalid:
        raise InputError(
            f"{name!r} values in {path} at data rows {first_row + 1} to {first_row + len(keys)} are not "
            "all UTF-8 text"
        ) from None


#: Float keys are taken as the integer they hold up to here: every integer of this size is exact in a
#: float64 (2**53), so ``12.0`` is the key ``"12"``; past it, or with a fraction, the text is not the id.
_EXACT_FLOAT_INT = 2**53


def check_float_keys(path: Path | str, first_row: int, name: str, col: pa.Array) -> None:
    """Reject float keys that are not ids: NaN (a null written as a float) and values that are not an
    exact integer (a fraction, or past 2**53 where ``123456789012345678.0`` has lost its digits).

    A whole float is kept and written as its integer (``12.0`` -> ``"12"``, as Arrow casts it).
    """
    if not pa.types.is_floating(col.type):
        return
    v = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    nan = np.isnan(v)
    if nan.any():
        raise _bad_row("null (NaN)", path, first_row, name, pa.array(nan), LOG_NEED)
    bad = ~((np.abs(v) <= _EXACT_FLOAT_INT) & (np.floor(v) == v))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{name!r} value {float(v[i])!r} in {path} at data row {first_row + i + 1} (rows count from 1, "
            "header not counted) is a float that is not an exact whole number up to 2**53, so it cannot be "
            "written back as the id it was: store ids as text or integers"
        )


def check_quantity(path: Path, first_row: int, name: str, col: pa.Array) -> np.ndarray:
    """Units bought as float64: they must be numbers >= 0 (a null or NaN is neither)."""
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type)):
        raise InputError(f"quantity column {name!r} in {path} holds {col.type}, expected numbers")
    q = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    bad = ~((q >= 0) & (q < np.inf))  # NaN and a null fail both
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = col[i].as_py()
        shown_value = "an empty value (null)" if value is None else repr(value)
        raise InputError(
            f"quantity column {name!r} in {path} at data row {first_row + i + 1} (rows count from 1, header "
            f"not counted) holds {shown_value}; a quantity must be a finite number >= 0"
        )
    return q


#: Seconds since 1970 a time may be: from the year 1 to the year 2500. A number past the end read as
#: seconds is far more likely milliseconds (or micro-, nanoseconds) than a time five centuries away,
#: and it is refused naming the unit it looks like, never guessed (a file holding both would be read
#: two ways).
FIRST_SECOND = -62_135_596_800  # 0001-01-01T00:00:00Z
LAST_SECOND = 16_725_225_600  # 2500-01-01T00:00:00Z
_UNITS = (("milliseconds", 10**3), ("microseconds", 10**6), ("nanoseconds", 10**9))
_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_ZONED = r"(Z|z|[+-][0-9]{2}(:?[0-9]{2})?)$"  # ISO 8601's UTC offset at the end of a time


def _where(path: Path | str, name: str, row: int) -> str:
    return f"time column {name!r} in {path} at data row {row} (rows count from 1, header not counted)"


def _number_seconds(path: Path | str, name: str, col: pa.Array, first_row: int) -> np.ndarray:
    """Numbers as seconds since 1970: finite, and within :data:`FIRST_SECOND` .. :data:`LAST_SECOND`."""
    values = col.to_numpy(zero_copy_only=False)
    as_float = np.asarray(values, dtype=np.float64)
    bad = ~((as_float >= FIRST_SECOND) & (as_float < LAST_SECOND))  # NaN fails both
    if not bad.any():
        return np.asarray(values).astype(np.int64)
    i = int(np.flatnonzero(bad)[0])
    v = col[i].as_py()
    where = _where(path, name, first_row + i + 1)
    if not np.isfinite(as_float[i]):
        raise InputError(f"{where} holds {v!r}: a time must be a finite number of seconds since 1970")
    for unit, per in _UNITS:
        if FIRST_SECOND <= as_float[i] / per < LAST_SECOND and as_float[i] > 0:
            raise InputError(
                f"{where} holds {v!r}, past the year 2500 as seconds since 1970: it looks like {unit}; "
                f"give seconds (divide by {per:,}) or ISO 8601 text such as '2026-03-01T12:30:00Z'"
            )
    raise InputError(
        f"{where} holds {v!r}, out of range: seconds since 1970 must be between {FIRST_SECOND:,} "
        f"(the year 1) and {LAST_SECOND:,} (the year 2500)"
    )


def _text_micros(path: Path | str, name: str, strings: pa.Array, first_row: int) -> np.ndarray:
    """ISO 8601 text as int64 microseconds since 1970, UTC: a time with an offset is converted to UTC,
    one without is taken as it is (local times are the user's)."""
    zoned = pc.fill_null(pc.match_substring_regex(strings, _ZONED), False).to_numpy(zero_copy_only=False)
    out = np.empty(len(strings), dtype=np.int64)
    for mask, unit in ((~zoned, pa.timestamp("us")), (zoned, pa.timestamp("us", tz="UTC"))):
        if not mask.any():
            continue
        part = strings.filter(pa.array(mask))
        try:
            out[mask] = pc.cast(pc.cast(part, unit), pa.int64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            for i in np.flatnonzero(mask).tolist():  # find the first value that does not parse
                v = strings[i].as_py()
                try:
                    pa.scalar(v, pa.string()).cast(unit)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    raise InputError(
                        f"{_where(path, name, first_row + i + 1)} holds {v!r}, which is not a time "
                        "(expected ISO 8601 such as '2026-03-01 12:30:00' or '2026-03-01T12:30:00+05:00', "
                        "or seconds since 1970)"
                    ) from None
            raise InputError(f"time column {name!r} in {path} cannot be read as times") from None
    return out


def column_seconds(path: Path, name: str, col: pa.Array, first_row: int = 0) -> np.ndarray:
    """A time column as int64 seconds since 1970: timestamps, dates, numbers or ISO 8601 text.

    Timestamps of any unit are floored to whole seconds (a timezone-aware one is UTC already); numbers
    are seconds, finite and between the years 1 and 2500 (a number past 2500 is refused naming the unit it
    looks like: milliseconds, microseconds or nanoseconds); text is ISO 8601, with fractions of a second
    and with a UTC offset (``Z``, ``+05:00``, converted to UTC) or without one (taken as written).

    Parameters
    ----------
    path : Path
        The file the column is from (named in errors).
    name : str
        The column's name (named in errors).
    col : pyarrow.Array
        The values.
    first_row : int
        The 0-based data row of ``col[0]`` in its file, so an error names the file's row.

    Returns
    -------
    ndarray of int64

    Raises
    ------
    InputError
        A value that is not a time, not finite or out of range, naming its data row in the file (rows
        count from 1) and what is expected.
    """
    t = col.type
    if pa.types.is_timestamp(t):
        ticks = pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False)
        return np.floor_divide(ticks, _PER_SECOND[t.unit])
    if pa.types.is_date(t):
        return pc.cast(pc.cast(col, pa.timestamp("s")), pa.int64()).to_numpy(zero_copy_only=False)
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return _number_seconds(path, name, col, first_row)
    return np.floor_divide(_text_micros(path, name, pc.cast(col, pa.string()), first_row), 10**6)


def as_strings(col: pa.Array, path: Path | str | None = None, name: str | None = None) -> pa.Array:
    """Item / basket keys as a plain string array (ints without '.0': Arrow writes 12.0 as '12').

    A type that has no text (a list, a struct) is an :class:`InputError`, naming the column ``name``
    of ``path`` when they are given."""
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if col.type == pa.string():
        return col
    try:
        return pc.cast(col, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        where = f"column {name!r} in {path} holds " if name is not None else ""
        raise InputError(f"{where}values of type {col.type}, which cannot be keys: {first_line(e)}") from None
