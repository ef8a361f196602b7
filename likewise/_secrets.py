"""The one redaction of secrets in a source string (a database URI, an object-store URL) or a message.

A source may carry its credentials in the text the user gave: ``postgresql://user:PASSWORD@host/db``,
``?sslpassword=...``, ``s3://KEY_ID:SECRET@bucket/orders/?endpoint_override=...``, a signed URL's
``X-Amz-Signature=...``. :func:`redact` replaces each with ``***`` in any text; every message, progress
line, corpus manifest and saved record that holds a source string goes through it (the CLI's and the
service's error printers too, for text that reached them another way). :func:`scrub` also removes the
secrets of a known source from a driver's message, which may echo one in a form :func:`redact` cannot
recognise (libpq: ``invalid percent-encoded token: "super%zzsecret"``).

What is a secret:

* a URL's password (``user:***@``); for a scheme other than a database's, the whole user part, which is
  an access key's id for object stores (``s3://***@bucket/``);
* the value of a query or connection parameter a part of whose name (parts cut at ``_``, ``-``, ``.``
  and camelCase) ends with one of :data:`SECRET_WORDS` or is one of :data:`SECRET_NAMES`:
  ``password``, ``sslpassword``, ``secret_key``, ``access_key``, ``session_token``, ``X-Amz-Signature``,
  ``X-Amz-Credential``, ``sig``, ``api_key``, ... (not ``tokenize``, ``sslkey``, ``sslmode``).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["MASK", "SECRET_NAMES", "SECRET_WORDS", "redact", "scrub", "secrets_of"]

MASK = "***"
#: A parameter a part of whose name ends with one of these is a secret (``sslpassword``, ``sastoken``).
SECRET_WORDS = ("password", "passwd", "secret", "token", "signature", "credential", "credentials")
#: A parameter a part of whose name is one of these is a secret (Azure's ``sig``, ``access_key``).
SECRET_NAMES = ("sig", "key", "pwd", "pass", "auth", "apikey", "accesskey", "secretkey", "privatekey")
_PARTS = re.compile(r"[-_.]+|(?<=[a-z])(?=[A-Z])")
#: Schemes whose user part is a user's name, kept (``postgresql://analyst:***@db/shop``).
_NAMED_USERS = ("postgresql", "postgres", "mysql", "mariadb", "sqlite", "duckdb", "http", "https", "ftp")

# scheme://userinfo@ : the userinfo runs to the last "@" before the host's "/", "?" or "#"
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*)://(?P<info>[^/?#\s'\"<>]*)@")
# name=value after "?", "&", ";", a blank or the start; a value quoted as libpq's conninfo quotes it
_PARAM = re.compile(
    r"(?P<lead>^|[?&;\s(,])(?P<name>[A-Za-z][A-Za-z0-9_.\-]*)(?P<eq>\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*'?|\"(?:[^\"\\]|\\.)*\"?|[^&\s'\"#;,)]*)"
)


def _secret_name(name: str) -> bool:
    parts = [p.lower() for p in _PARTS.split(name) if p]
    return any(p in SECRET_NAMES or p.endswith(SECRET_WORDS) for p in parts)


def _userinfo(m: re.Match[str]) -> str:
    scheme, info = m.group("scheme"), m.group("info")
    if info in ("", MASK) or info.endswith(":" + MASK):
        return m.group(0)
    if scheme.lower() in _NAMED_USERS:
        if ":" not in info:
            return m.group(0)  # a user's name alone is no secret
        return f"{scheme}://{info.split(':', 1)[0]}:{MASK}@"
    return f"{scheme}://{MASK}@"


def _param(m: re.Match[str]) -> str:
    if not _secret_name(m.group("name")) or m.group("value") in ("", MASK):
        return m.group(0)
    return f"{m.group('lead')}{m.group('name')}{m.group('eq')}{MASK}"


def redact(text: str) -> str:
    """``text`` with every secret of a URL or parameter in it replaced by ``***`` (see the module).

    Parameters
    ----------
    text : str
        A URI, a path, a message: any text. Idempotent; text without secrets comes back unchanged.

    Returns
    -------
    str

    Examples
    --------
    >>> redact("postgresql://shop:hunter2@db/orders?sslpassword=k&sslmode=require")
    'postgresql://shop:***@db/orders?sslpassword=***&sslmode=require'
    >>> redact("s3://AKIAEXAMPLE:wJalr@bucket/orders/?endpoint_override=localhost:9000")
    's3://***@bucket/orders/?endpoint_override=localhost:9000'
    """
    if not isinstance(text, str):
        return text
    return _PARAM.sub(_param, _USERINFO.sub(_userinfo, text))


def secrets_of(source: str | None) -> list[str]:
    """The secret strings of a source string (a URI, a URL), as written and percent-decoded."""
    if not source:
        return []
    found: list[str] = []
    for m in _USERINFO.finditer(source):
        info = m.group("info")
        user, sep, password = info.partition(":")
        found += [password] if sep else []
        if m.group("scheme").lower() not in _NAMED_USERS:
            found += [info, user]
    for m in _PARAM.finditer(source):
        if _secret_name(m.group("name")):
            found.append(m.group("value").strip("'\""))
    out: list[str] = []
    for s in found:
        for form in (s, unquote(s)):
            if len(form) >= 3 and form != MASK and form not in out:  # a shorter one would blank the text
                out.append(form)
    return sorted(out, key=len, reverse=True)  # the longest first: a secret inside another goes whole


def scrub(message: str, *sources: str | None) -> str:
    """``message`` redacted, and with every secret of ``sources`` in it replaced by ``***``: for a
    driver's message, which may echo a secret in a form of its own."""
    out = redact(message)
    for source in sources:
        for secret in secrets_of(source):
            out = out.replace(secret, MASK)
    return out
