"""The one way a string from the data enters SQL that likewise writes, and the check of SQL it runs.

Writing (the pgvector export): every identifier goes through :func:`quote_ident`, every text literal
through :func:`quote_literal` and every ``COPY ... FROM STDIN`` value through :func:`copy_text`. Each
quotes what it can and refuses what PostgreSQL cannot hold, naming the value: a NUL character (text and
names cannot hold one; COPY would cut the line there and shift the rows after it), a name longer than
PostgreSQL keeps (63 bytes: a longer one is cut silently, so two long names could become one).
:func:`fit_names` makes a list of names unique and short enough first, deterministically.

Reading (``--query``): :func:`one_statement` refuses a text that holds more than one statement or does
not start as a query (SELECT, WITH, VALUES, TABLE, FROM), for the databases whose own parser likewise
cannot call; each source also runs the query read-only (``likewise.readers.sources``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from .errors import InputError, shown

__all__ = [
    "MAX_NAME_BYTES",
    "copy_text",
    "fit_names",
    "one_statement",
    "quote_ident",
    "quote_literal",
]

#: Bytes of a name PostgreSQL keeps (NAMEDATALEN - 1); a longer name is cut without a word.
MAX_NAME_BYTES = 63

#: What the first word of a query may be: statements that only read.
QUERY_WORDS = ("select", "with", "values", "table", "from")


def _no_nul(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{what} {shown(text)} is not Unicode text (it holds a lone surrogate)") from None
    if "\x00" in text:
        raise InputError(
            f"{what} {shown(text)} holds a NUL character (\\x00), which PostgreSQL text and names "
            "cannot hold: remove it from the data (and train again) to export it for PostgreSQL"
        )


def quote_ident(name: str, what: str = "name") -> str:
    """``name`` as a quoted SQL identifier (``"`` doubled); refuses NUL and names over 63 bytes.

    Parameters
    ----------
    name : str
    what : str
        What the name is, for the message ("column name").

    Raises
    ------
    InputError
        ``name`` is empty, holds NUL, or is longer than :data:`MAX_NAME_BYTES` in UTF-8.
    """
    if not isinstance(name, str) or not name:
        raise InputError(f"{what} {name!r} is empty or not text: SQL names must be non-empty text")
    _no_nul(name, what)
    size = len(name.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise InputError(
            f"{what} {shown(name)} is {size} bytes; PostgreSQL keeps {MAX_NAME_BYTES} (a longer name is cut "
            "silently): shorten it"
        )
    return _quoted(name, '"')


def _quoted(text: str, quote: str) -> str:
    """``text`` between ``quote``s, the quote doubled. A text holding a character that is not printable
    (a line break, a carriage return, which psql does not keep) takes the Unicode-escape form
    (``U&"a\\000Db"``): every such character and the backslash written as an escape, so what arrives
    is the text exactly, whatever reads the file line by line."""
    body = text.replace(quote, quote + quote)
    if all(c.isprintable() for c in text):
        return quote + body + quote
    escaped = "".join(c if c.isprintable() and c != "\\" else _unicode_escape(c) for c in body)
    return "U&" + quote + escaped + quote


def _unicode_escape(c: str) -> str:
    code = ord(c)
    return f"\\{code:04X}" if code <= 0xFFFF else f"\\+{code:06X}"


def quote_literal(text: str, what: str = "value") -> str:
    """``text`` as a standard SQL string literal (``'`` doubled, backslashes as written); refuses NUL.

    The file that holds it must run with ``standard_conforming_strings`` on (PostgreSQL's default
    since 9.1; the pgvector export sets it).
    """
    _no_nul(text, what)
    return _quoted(text, "'")


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_text(value: str, what: str = "value") -> str:
    """One text value as ``COPY ... FROM STDIN`` reads it (text format): backslash, tab, newline and
    carriage return escaped; refuses NUL (the line would end there and the rows after it shift)."""
    _no_nul(value, what)
    return value.translate(_COPY_ESCAPES)


def _cut(name: str, limit: int) -> str:
    """The longest prefix of ``name`` of at most ``limit`` UTF-8 bytes (never half a character)."""
    out = name.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    return out


def fit_names(names: Sequence[str], taken: Iterable[str] = (), *, max_bytes: int | None = None) -> list[str]:
    """Names for ``names``, unique among themselves and apart from ``taken``, in the same order.

    A name that is free stays as it is. A name in ``taken`` (or used by an earlier one) becomes
    ``attr_NAME``, then ``attr_NAME_2``, ``attr_NAME_3``, ...: the first of these not used by any name
    of ``names`` or ``taken``, so a renamed column never takes the name of another. With ``max_bytes``,
    a name longer than that many UTF-8 bytes is cut and given the first 8 hex digits of its sha256
    (``long_prefix_1a2b3c4d``), so two long names that share their start stay apart. Deterministic: the
    same names give the same result.
    """
    reserved = set(taken)
    wanted = [_short(n, max_bytes) for n in names]
    used = set(reserved)
    free = {w for w in wanted if w not in reserved}  # names that keep themselves, claimed first
    out: list[str] = []
    for raw, w in zip(names, wanted, strict=True):
        if w not in used and w in free:
            out.append(w)
            used.add(w)
            continue
        n = 1
        while True:
            base = f"attr_{raw}" if n == 1 else f"attr_{raw}_{n}"
            candidate = _short(base, max_bytes)
            if candidate not in used and candidate not in free:
                break
            n += 1
        out.append(candidate)
        used.add(candidate)
    return out


def _short(name: str, max_bytes: int | None) -> str:
    if max_bytes is None or len(name.encode("utf-8")) <= max_bytes:
        return name
    tag = hashlib.sha256(name.encode("utf-8", errors="surrogatepass")).hexdigest()[:8]
    return f"{_cut(name, max_bytes - 9)}_{tag}"


def _skip_quoted(sql: str, i: int, quote: str, backslashes: bool) -> int:
    """The index after the quoted text that starts at ``sql[i] == quote``; a doubled quote is one."""
    j = i + 1
    while j < len(sql):
        c = sql[j]
        if backslashes and c == "\\":
            j += 2
            continue
        if c == quote:
            if j + 1 < len(sql) and sql[j + 1] == quote:
                j += 2
                continue
            return j + 1
        j += 1
    return j


def _statements(sql: str) -> list[str]:
    """``sql`` cut at its top-level semicolons, skipping quotes, dollar quotes and comments."""
    parts, start, i, n = [], 0, 0, len(sql)
    while i < n:
        c = sql[i]
        end = _comment_end(sql, i)
        if end is not None:
            i = end
        elif c == "'":
            before = sql[i - 2] if i >= 2 else " "
            escaped = i > 0 and sql[i - 1] in "eE" and not (before.isalnum() or before == "_")  # E'...'
            i = _skip_quoted(sql, i, "'", escaped)
        elif c == '"':  # standard quotes only: a quote the database does not have would hide a ";"
            i = _skip_quoted(sql, i, c, False)
        elif c == "$" and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            end = sql.find("$", i + 1)
            tag = sql[i : end + 1] if end > 0 else ""
            if tag and (tag == "$$" or tag[1:-1].replace("_", "a").isalnum()) and not tag[1].isdigit():
                close = sql.find(tag, end + 1)
                i = n if close < 0 else close + len(tag)
            else:
                i += 1
        elif c == ";":
            parts.append(sql[start:i])
            start, i = i + 1, i + 1
        else:
            i += 1
    parts.append(sql[start:])
    return [p for p in parts if _strip_comments(p).strip()]


def _comment_end(sql: str, i: int) -> int | None:
    """The index after the comment that starts at ``sql[i]``, or None when none starts there."""
    if sql.startswith("--", i):
        end = sql.find("\n", i)
        return len(sql) if end < 0 else end + 1
    if not sql.startswith("/*", i):
        return None
    depth, i = 1, i + 2  # block comments nest in PostgreSQL
    while i < len(sql) and depth:
        if sql.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif sql.startswith("*/", i):
            depth, i = depth - 1, i + 2
        else:
            i += 1
    return i


def _strip_comments(part: str) -> str:
    """``part`` without its leading blanks and comments (enough to read its first word)."""
    text = part.lstrip()
    while (end := _comment_end(text, 0)) is not None:
        text = text[end:].lstrip()
    return text


def one_statement(sql: str, source: str) -> str:
    """``sql`` when it is one statement that reads (its first word SELECT, WITH, VALUES, TABLE or FROM,
    or a parenthesis); else an :class:`InputError` naming the source.

    This is the statement check for databases whose parser likewise cannot call (PostgreSQL, SQLite);
    the source also runs the query in a read-only transaction or connection, which is what stops a
    ``WITH x AS (DELETE ...) SELECT``.
    """
    if not isinstance(sql, str) or not sql.strip():
        raise InputError(f"the query on {source} is empty: give one SELECT (or WITH ...) statement")
    parts = _statements(sql)
    if len(parts) != 1:
        raise InputError(
            f"the query on {source} holds {len(parts)} statements; give one SELECT (or WITH ...) statement: "
            "likewise only reads"
        )
    head = _strip_comments(parts[0])
    word = head.split(None, 1)[0].lower().rstrip("(") if head.split() else ""
    if not head.startswith("(") and word not in QUERY_WORDS:
        raise InputError(
            f"the query on {source} starts with {shown(word.upper())}: give one SELECT (or WITH ...) "
            "statement, likewise only reads"
        )
    return sql
