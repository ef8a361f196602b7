"""What the HTTP API accepts and answers on error: limits, request bodies, the error body.

The request bodies are built per application from its :class:`Limits`, so the OpenAPI document states
every bound the server enforces (``k`` range, batch sizes, key length, non-empty lists) and pydantic
enforces exactly what the document says. Values are strict: JSON ``true`` is not an id or a ``k``,
``1.5`` is not an id, and a key holding a lone UTF-16 surrogate (not text) is refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, PlainValidator, StrictBool, StrictFloat, StrictInt, WithJsonSchema

from ..errors import SHOWN_CHARS, shown

__all__ = ["Bodies", "ErrorBody", "Limits", "as_sent", "error_responses", "make_bodies", "validation_message"]

_SURROGATE = re.compile("[\ud800-\udfff]")


class Limits(BaseModel):
    """Request limits (each is stated in the OpenAPI document).

    Attributes
    ----------
    max_k : int
        Largest ``k`` (neighbours per query).
    max_batch : int
        Most items, vectors, seeds or excluded items in one request.
    max_body : int
        Largest request body in bytes (413 beyond it).
    max_prefix_results : int
        Largest ``limit`` of a prefix search.
    max_map : int
        Largest map ``sample``.
    max_key : int
        Longest item or customer key, in characters.
    max_results : int
        Most neighbours in one answer (queries × k), so a small request cannot ask for a huge answer.
    """

    max_k: int = 1000
    max_batch: int = 1000
    max_body: int = 1 << 20
    max_prefix_results: int = 100
    max_map: int = 20000
    max_key: int = 1024
    max_results: int = 100_000


class ErrorBody(BaseModel):
    """Every error answer: ``error`` says what was wrong and names the value as sent."""

    error: str
    suggestions: list[str] | None = Field(None, description="close keys, for an unknown item (404)")
    detail: list[dict[str, Any]] | None = Field(None, description="pydantic's errors, for a 422")


def error_responses(token: bool) -> dict[int | str, dict[str, Any]]:
    """The error statuses every route may answer, for the OpenAPI document."""
    out: dict[int | str, dict[str, Any]] = {
        400: {"model": ErrorBody, "description": "Host header not allowed (DNS-rebinding guard)"},
        403: {"model": ErrorBody, "description": "a state-changing request from a foreign Origin"},
        404: {"model": ErrorBody, "description": "unknown model, route or item, or an id past the table end"},
        405: {"model": ErrorBody, "description": "method not allowed; the Allow header lists the allowed"},
        413: {"model": ErrorBody, "description": "request body over max_body bytes"},
        422: {"model": ErrorBody, "description": "a bad value: the message names it as sent"},
        503: {"model": ErrorBody, "description": "a reload found the folder damaged; the old version serves"},
    }
    if token:
        out[401] = {"model": ErrorBody, "description": "missing or wrong 'Authorization: Bearer <token>'"}
    return out


def _key_checker(max_key: int):
    def check(value: Any, *, ids: bool) -> str | int:
        if (
            isinstance(value, bool)
            or not isinstance(value, str | int)
            or (isinstance(value, int) and not ids)
        ):
            raise ValueError("must be a key (a JSON string)" + (" or an id (a JSON integer)" if ids else ""))
        if isinstance(value, int):
            return value
        if not value:
            raise ValueError("an empty key names nothing")
        if len(value) > max_key:
            raise ValueError(f"a key of {len(value)} characters is over the limit of {max_key}")
        bad = _SURROGATE.search(value)
        if bad is not None:
            raise ValueError(f"holds the lone surrogate U+{ord(bad.group()):04X}, which is not text")
        return value

    return check


@dataclass(frozen=True)
class Bodies:
    """The request-body models of one application (see :func:`make_bodies`)."""

    similar: type[BaseModel]
    vector: type[BaseModel]
    basket: type[BaseModel]
    analogy: type[BaseModel]
    coords: type[BaseModel]
    customer: type[BaseModel]
    lookalike: type[BaseModel]
    campaigns: type[BaseModel]
    audience: type[BaseModel]
    read_next: type[BaseModel]
    place: type[BaseModel]


def make_bodies(lim: Limits) -> Bodies:
    """Request-body models whose constraints are ``lim``'s (so the schema documents them)."""
    check = _key_checker(lim.max_key)
    key_schema = {"type": "string", "minLength": 1, "maxLength": lim.max_key}
    Key = Annotated[str, PlainValidator(lambda v: check(v, ids=False)), WithJsonSchema(key_schema)]
    # a key, or an int id ("#12" in a key string is id 12, as on the command line)
    Item = Annotated[
        str | int,
        PlainValidator(lambda v: check(v, ids=True)),
        WithJsonSchema({"anyOf": [key_schema, {"type": "integer"}]}),
    ]
    Items = Annotated[
        list[Item], Field(min_length=1, max_length=lim.max_batch, description="keys or int ids")
    ]
    K = Annotated[StrictInt, Field(ge=1, le=lim.max_k, description="neighbours per query")]
    TypeName = Annotated[str, Field(min_length=1, max_length=64)]
    Types = Annotated[
        list[TypeName] | None,
        Field(None, min_length=1, max_length=64, description="typed space: only items of these types"),
    ]
    Number = StrictFloat | StrictInt
    Sample = Annotated[StrictInt, Field(ge=2, le=lim.max_map, description="items on the map")]

    class SimilarBody(BaseModel):
        items: Items
        k: K = 10
        skip_unknown: StrictBool = False
        types: Types = None

    class VectorBody(BaseModel):
        vector: list[Number] | Annotated[list[list[Number]], Field(max_length=lim.max_batch)] = Field(
            description="one vector [D] or a batch [n, D] of non-zero, finite float32 values"
        )
        k: K = 10
        exclude: Annotated[list[Item], Field(max_length=lim.max_batch)] = []
        types: Types = None

    class BasketBody(BaseModel):
        items: Items
        k: K = 10
        skip_unknown: StrictBool = False
        scoring: Literal["auto", "itemitem", "affinity", "mixture", "product", "cosine"] | None = Field(
            None, description="see Embeddings.recommend"
        )
        types: Types = None

    class AnalogyBody(BaseModel):
        a: Item
        b: Item
        c: Item
        k: K = 10
        method: Literal["add", "mul"] = "add"

    class CoordsBody(BaseModel):
        items: Items
        sample: Sample | None = Field(None, description="the map whose axes to use (default: the server's)")
        projection: Literal["pca", "tsne"] = Field(
            "pca", description="the map's projection (tsne: that map must be ready; see GET .../map)"
        )

    class CustomerBody(BaseModel):
        customer: Key
        k: K = 10
        exclude_bought: StrictBool = True
        types: Types = None

    class LookalikeBody(BaseModel):
        seeds: Annotated[list[Key], Field(min_length=1, max_length=lim.max_batch)]
        k: K = 10
        method: Literal["centroid", "knn"] | None = None

    Keys = Annotated[list[Key], Field(min_length=1, max_length=lim.max_batch)]

    class CampaignsBody(BaseModel):
        customer: Key | None = Field(None, description="one customer (or give customers)")
        customers: Keys | None = Field(None, description="an audience")
        k: K = 10
        exclude_opened: StrictBool = False

    class AudienceBody(BaseModel):
        campaign: Item
        k: K = 100
        method: Literal["centroid", "knn"] = "centroid"

    class ReadNextBody(BaseModel):
        articles: Annotated[list[Item], Field(min_length=1, max_length=lim.max_batch)] | None = Field(
            None, description="the article(s) just read, most recent last (or give reader)"
        )
        reader: Key | None = None
        k: K = 10
        skip_unknown: StrictBool = False

    Value = Annotated[str, Field(max_length=lim.max_key)] | StrictFloat | StrictInt | None

    class PlaceBody(BaseModel):
        attrs: Annotated[dict[Key, Value], Field(min_length=1, max_length=64)] = Field(
            description="the new product's attributes: column -> value"
        )
        k: K = 10
        type: TypeName | None = None

    return Bodies(
        SimilarBody,
        VectorBody,
        BasketBody,
        AnalogyBody,
        CoordsBody,
        CustomerBody,
        LookalikeBody,
        CampaignsBody,
        AudienceBody,
        ReadNextBody,
        PlaceBody,
    )


def as_sent(value: Any) -> str:
    """A request value as the client wrote it (JSON), cut when long."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return shown(value)
    if _SURROGATE.search(text):  # not encodable as UTF-8: show the JSON escape the client sent
        text = json.dumps(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(text)} characters)"


def validation_message(err: dict[str, Any], ranges: dict[str, tuple[int, int]]) -> str:
    """One pydantic error in the API's words: the field, the value as sent, and what is allowed.

    ``ranges`` maps a numeric field's name to its ``(low, high)`` bounds.
    """
    loc = [str(p) for p in err.get("loc", ()) if p != "body"]
    where = ".".join(loc)
    name = loc[-1] if loc else "request"
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    value = err.get("input")
    raw = err.get("loc", ("",))[0] in ("query", "path") and isinstance(value, str)
    sent = (value if len(value) <= SHOWN_CHARS else shown(value)) if raw else as_sent(value)
    if kind in ("greater_than_equal", "less_than_equal") and name in ranges:
        lo, hi = ranges[name]
        return f"{name} == {sent}, must be between {lo} and {hi}"
    if kind == "too_long" and isinstance(value, list):
        return f"{len(value)} {name} in one request, the limit is {ctx.get('max_length')}"
    if kind == "too_short" and isinstance(value, list):
        return f"{name} is empty: give at least one"
    if kind == "value_error":  # raised by the key checks above: their text is the whole story
        return f"{where} == {sent}: {str(ctx.get('error', err.get('msg')))}"
    if kind == "string_too_long":
        return f"{where}: a key of {len(value)} characters is over the limit of {ctx.get('max_length')}"
    if kind == "literal_error":
        return f"{name} == {sent}, must be {ctx.get('expected')}"
    text = f"{where}: {err.get('msg')}" if where else str(err.get("msg"))
    return text + (f" (got {sent})" if "input" in err else "")
