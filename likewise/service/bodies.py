"""What the HTTP API accepts and answers on error: limits, request bodies, the error body.

The request bodies are declared once, here; the bounds that are the server's configuration (``k`` up to
``max_k``, batches up to ``max_batch``, keys up to ``max_key`` characters, the map's ``sample``) are
:class:`Bound` marks, checked against the :class:`Limits` of the app that answers
(:data:`LIMITS_IN_FORCE`) and written into its OpenAPI document by :func:`document_limits`, so the
document states every bound the server enforces and pydantic enforces exactly what the document says.
Values are strict: JSON ``true`` is not an id or a ``k``, ``1.5`` is not an id, and a key holding a
lone UTF-16 surrogate (not text) is refused.
"""

import json
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainValidator,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticKnownError, core_schema

from .. import retail
from .._check import default_of
from ..apps import campaigns, coldstart, content
from ..data.vocab import OnUnknown
from ..errors import SHOWN_CHARS, shown
from ..retail.queries import AudienceMethod
from ..space.affinity import Scoring
from ..space.analogies import AnalogyMethod
from ..space.embeddings import Embeddings

__all__ = [
    "ANSWERS",
    "LIMITS_IN_FORCE",
    "Answer",
    "AnswerRecord",
    "Answers",
    "AnalogyBody",
    "AudienceBody",
    "BasketBody",
    "Bound",
    "CampaignsBody",
    "CoordsBody",
    "CustomerBody",
    "ErrorBody",
    "Item",
    "Key",
    "Limits",
    "NextBasketBody",
    "LookalikeBody",
    "QueryInt",
    "PlaceBody",
    "ReadNextBody",
    "SimilarBody",
    "TypeName",
    "UseLimits",
    "VectorBody",
    "as_sent",
    "document_limits",
    "error_loc",
    "error_responses",
    "limits_in_force",
    "ranges_of",
    "validation_message",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
_DIGITS = re.compile("[0-9]+")
# more digits than any limit has: taken as just over every limit, never converted (no 5,000-digit int)
_DIGITS_MAX = 18


def _query_int(value: Any) -> Any:
    """A query parameter's whole number as strictly as a JSON body's: ASCII digits only, so ``1.0``,
    ``+1``, ``1_0``, `` 1`` and other scripts' digits are refused as ``1.5`` and ``true`` are in a body."""
    if not isinstance(value, str):
        return value
    if not _DIGITS.fullmatch(value):
        raise ValueError(
            "must be a whole number written with the digits 0-9 only (no sign, point, '_' or space)"
        )
    return int(value) if len(value) <= _DIGITS_MAX else 10**_DIGITS_MAX


#: ``Annotated`` metadata for an integer query parameter (``k``, ``limit``, ``sample``, ...): see
#: :func:`_query_int`. A body's integers are :class:`~pydantic.StrictInt`; the two refuse the same values.
QueryInt = BeforeValidator(_query_int)


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
    max_history : int
        Most products of a customer's history a next-basket answer reads (the most recently bought).
    """

    max_k: int = 1000
    max_batch: int = 1000
    max_body: int = 1 << 20
    max_prefix_results: int = 100
    max_map: int = 20000
    max_key: int = 1024
    max_results: int = 100_000
    max_history: int = default_of(retail.next_basket, "max_history")


class ErrorBody(BaseModel):
    """Every error answer: ``error`` says what was wrong and names the value as sent."""

    error: str
    suggestions: list[str] | None = Field(None, description="close keys, for an unknown item (404)")
    detail: list[dict[str, Any]] | None = Field(None, description="pydantic's errors, for a 422")


class AnswerRecord(BaseModel):
    """One result: the one answer record of every front end (``Neighbours.records()``)."""

    item: str
    id: int
    score: float
    name: str | None = Field(None, description="the item's display name; null when the model knows none")
    count: int | None = Field(
        None,
        description="the item's evidence: its count in training (baskets, in a space trained on baskets); "
        "null when the answer does not carry it",
    )


class Answer(BaseModel):
    """One query's answer: the query as it was sent, and its results best first."""

    query: Any = Field(
        description="a key or #row, a list (basket, seeds, [a, b, c]), a customer, a vector's row"
    )
    results: list[AnswerRecord]


class Answers(BaseModel):
    """The envelope of every query route, as ``--json`` on the command line
    (:func:`likewise.space.results.envelope`); what the request fixed for every answer (``method``,
    ``scoring``, ``responders``, ``customers``) sits beside ``answers``."""

    model_config = {"extra": "allow"}
    answers: list[Answer]


#: The 200 answer of every query route, for the OpenAPI document.
ANSWERS: dict[int | str, dict[str, Any]] = {200: {"model": Answers, "description": "the one answer envelope"}}


def error_responses(token: bool) -> dict[int | str, dict[str, Any]]:
    """The error statuses every route may answer, for the OpenAPI document."""
    out: dict[int | str, dict[str, Any]] = {
        400: {"model": ErrorBody, "description": "Host header not allowed (DNS-rebinding guard)"},
        403: {"model": ErrorBody, "description": "a state-changing request from a foreign Origin"},
        404: {"model": ErrorBody, "description": "unknown model, route or item, or an id past the table end"},
        405: {"model": ErrorBody, "description": "method not allowed; the Allow header lists the allowed"},
        413: {"model": ErrorBody, "description": "request body over max_body bytes"},
        422: {"model": ErrorBody, "description": "a bad value: the message names it as sent"},
        500: {
            "model": ErrorBody,
            "description": "an internal error, named by its class (the log has details)",
        },
        503: {"model": ErrorBody, "description": "a reload found the folder damaged; the old version serves"},
    }
    if token:
        out[401] = {"model": ErrorBody, "description": "missing or wrong 'Authorization: Bearer <token>'"}
    return out


#: The limits of the application answering the request in this context (see :class:`UseLimits`); the
#: defaults outside a request. FastAPI gives pydantic no validation context, and pydantic's documented
#: way to reach validation one does not call is a context variable: with it the request models are
#: declared once, here, yet each app's bounds are checked in pydantic's one pass (every error of a body
#: at once, a list over the limit refused before its items are read).
LIMITS_IN_FORCE: ContextVar[Limits | None] = ContextVar("likewise_limits_in_force", default=None)

_DEFAULT_LIMITS = Limits()


def limits_in_force() -> Limits:
    """The :class:`Limits` of the application answering this request (the defaults outside one)."""
    return LIMITS_IN_FORCE.get() or _DEFAULT_LIMITS


#: The JSON-schema key that marks bounds taken from :class:`Limits`, ``{keyword: limit}`` (see
#: :func:`document_limits`).
LIMIT_KEY = "x-likewise-limit"

# the JSON-schema keyword that bounds each type
_BOUND_WORDS = {"integer": "maximum", "array": "maxItems", "string": "maxLength"}


class UseLimits:
    """ASGI middleware: run each request with its application's :class:`Limits` in :data:`LIMITS_IN_FORCE`."""

    def __init__(self, app: Any, limits: Limits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        token = LIMITS_IN_FORCE.set(self.limits)
        try:
            await self.app(scope, receive, send)
        finally:
            LIMITS_IN_FORCE.reset(token)


@dataclass(frozen=True)
class Bound:
    """``Annotated`` metadata: at most ``Limits.<limit>`` of the answering server.

    A number's maximum, a list's length (checked before its items are read) or a text's length, refused
    with pydantic's own error (``less_than_equal``, ``too_long``, ``string_too_long``) so the message is
    the one a fixed bound gives. The JSON schema carries the limit's name under :data:`LIMIT_KEY` until
    :func:`document_limits` writes the app's number in.
    """

    limit: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_wrap_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        out[LIMIT_KEY] = {_BOUND_WORDS[out["type"]]: self.limit}
        return out

    def _check(self, value: Any, inner: ValidatorFunctionWrapHandler) -> Any:
        bound = getattr(limits_in_force(), self.limit)
        if isinstance(value, list) and len(value) > bound:  # before the items: bounded work
            raise PydanticKnownError(
                "too_long", {"field_type": "List", "max_length": bound, "actual_length": len(value)}
            )
        out = inner(value)
        if isinstance(out, str) and len(out) > bound:
            raise PydanticKnownError("string_too_long", {"max_length": bound})
        if isinstance(out, int) and out > bound:
            raise PydanticKnownError("less_than_equal", {"le": bound})
        return out


def _key(value: Any, *, ids: bool) -> str | int:
    if isinstance(value, bool) or not isinstance(value, str | int) or (isinstance(value, int) and not ids):
        raise ValueError("must be a key (a JSON string)" + (" or an id (a JSON integer)" if ids else ""))
    if isinstance(value, int):
        return value
    if not value:
        raise ValueError("an empty key names nothing")
    max_key = limits_in_force().max_key
    if len(value) > max_key:
        raise ValueError(f"a key of {len(value)} characters is over the limit of {max_key}")
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise ValueError(f"holds the lone surrogate U+{ord(bad.group()):04X}, which is not text")
    return value


def _key_only(value: Any) -> str | int:
    return _key(value, ids=False)


def _key_or_id(value: Any) -> str | int:
    return _key(value, ids=True)


_KEY_SCHEMA = {"type": "string", "minLength": 1, LIMIT_KEY: {"maxLength": "max_key"}}

#: A key: a non-empty JSON string of text, at most ``max_key`` characters.
Key = Annotated[str, PlainValidator(_key_only), WithJsonSchema(_KEY_SCHEMA)]
#: A key, or an int id ("#12" in a key string is id 12, as on the command line).
Item = Annotated[
    str | int, PlainValidator(_key_or_id), WithJsonSchema({"anyOf": [_KEY_SCHEMA, {"type": "integer"}]})
]
Items = Annotated[list[Item], Field(min_length=1, description="keys or int ids"), Bound("max_batch")]
Keys = Annotated[list[Key], Field(min_length=1), Bound("max_batch")]
K = Annotated[StrictInt, Field(ge=1, description="neighbours per query"), Bound("max_k")]
TypeName = Annotated[str, Field(min_length=1, max_length=64)]
Types = Annotated[
    list[TypeName] | None,
    Field(None, min_length=1, max_length=64, description="typed space: only items of these types"),
]
Number = StrictFloat | StrictInt
Sample = Annotated[StrictInt, Field(ge=2, description="items on the map"), Bound("max_map")]
Value = Annotated[str, Bound("max_key")] | StrictFloat | StrictInt | None


Restrict = Annotated[StrictInt | None, Field(None, ge=1, description="search only the N most frequent items")]


class SkipUnknown(BaseModel):
    """``skip_unknown`` of a body, as the library's ``on_unknown``."""

    skip_unknown: StrictBool = False

    @property
    def on_unknown(self) -> OnUnknown:
        """``"skip"`` when unknown items are to be left out, else ``"raise"`` (the library's default)."""
        return "skip" if self.skip_unknown else "raise"


# Defaults are the library's (default_of reads each function's signature), so a body that leaves a field
# out is answered as Python and the command line answer when it is left out there.


class SimilarBody(SkipUnknown):
    items: Items
    k: K = default_of(Embeddings.similar, "k")
    restrict: Restrict = None
    types: Types = None


class VectorBody(BaseModel):
    vector: list[Number] | Annotated[list[list[Number]], Bound("max_batch")] = Field(
        description="one vector [D] or a batch [n, D] of non-zero, finite float32 values"
    )
    k: K = default_of(Embeddings.similar_to_vector, "k")
    exclude: Annotated[list[Item], Bound("max_batch")] = []
    types: Types = None


class BasketBody(SkipUnknown):
    items: Items
    k: K = default_of(retail.complete_basket, "k")
    types: Types = None


class RecommendBody(BasketBody):
    k: K = default_of(Embeddings.recommend, "k")
    scoring: Scoring = Field(
        default_of(Embeddings.recommend, "scoring"), description="see Embeddings.recommend"
    )
    restrict: Restrict = None


class AnalogyBody(BaseModel):
    a: Item
    b: Item
    c: Item
    k: K = default_of(Embeddings.analogy, "k")
    method: AnalogyMethod = default_of(Embeddings.analogy, "method")
    restrict: Restrict = None


class CoordsBody(BaseModel):
    items: Items
    sample: Sample | None = Field(None, description="the map whose axes to use (default: the server's)")
    projection: Literal["pca", "tsne", "umap"] = Field(
        "pca", description="the map's projection (tsne: that map must be ready; see GET .../map)"
    )


class CustomerBody(BaseModel):
    customer: Key
    k: K = default_of(retail.for_customer, "k")
    exclude_bought: StrictBool = True
    types: Types = None


class NextBasketBody(BaseModel):
    customer: Key
    k: K = default_of(retail.next_basket, "k")
    explore: StrictBool = default_of(retail.next_basket, "explore")
    types: Types = None


class LookalikeBody(BaseModel):
    seeds: Keys
    k: K = default_of(retail.lookalike, "k")
    method: AudienceMethod = default_of(retail.lookalike, "method")


class CampaignsBody(BaseModel):
    customer: Key | None = Field(None, description="one customer (or give customers)")
    customers: Keys | None = Field(None, description="an audience")
    k: K = default_of(campaigns.campaigns_for_customer, "k")
    exclude_opened: StrictBool = False


class AudienceBody(BaseModel):
    campaign: Item
    k: K = default_of(campaigns.campaign_audience, "k")
    method: AudienceMethod = default_of(campaigns.campaign_audience, "method")


class ReadNextBody(SkipUnknown):
    articles: Annotated[list[Item], Field(min_length=1), Bound("max_batch")] | None = Field(
        None, description="the article(s) just read, most recent last (or give reader)"
    )
    reader: Key | None = None
    k: K = default_of(content.read_next, "k")


class PlaceBody(BaseModel):
    attrs: Annotated[dict[Key, Value], Field(min_length=1, max_length=64)] = Field(
        description="the new product's attributes: column -> value"
    )
    k: K = default_of(coldstart.place, "k")
    type: TypeName | None = None


def document_limits(doc: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """``doc`` (an OpenAPI document) with every :class:`Bound` written in as ``limits``' number.

    A mark ``{"maximum": "max_k"}`` becomes ``"maximum": limits.max_k``, and so on; the marks go.
    """

    def fill(node: Any) -> Any:
        if isinstance(node, list):
            return [fill(x) for x in node]
        if not isinstance(node, dict):
            return node
        out = {k: fill(v) for k, v in node.items() if k != LIMIT_KEY}
        for word, limit in node.get(LIMIT_KEY, {}).items():
            out[word] = getattr(limits, limit)
        return out

    return fill(doc)


def ranges_of(limits: Limits) -> dict[str, tuple[int, int]]:
    """The bounds of the numeric fields and parameters, by name, for :func:`validation_message`."""
    return {"k": (1, limits.max_k), "sample": (2, limits.max_map), "limit": (1, limits.max_prefix_results)}


def as_sent(value: Any) -> str:
    """A request value as the client wrote it (JSON), cut when long."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return shown(value)
    if _SURROGATE.search(text):  # not encodable as UTF-8: show the JSON escape the client sent
        text = json.dumps(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(text)} characters)"


def error_loc(err: dict[str, Any]) -> list[str]:
    """Where a pydantic error is, as names: without the union-member labels a :class:`Bound` adds."""
    # pydantic names a union's member by its validator; a bounded member's is "function-wrap[...]"
    return [str(p) for p in err.get("loc", ()) if not str(p).startswith("function-wrap[")]


def validation_message(err: dict[str, Any], ranges: dict[str, tuple[int, int]]) -> str:
    """One pydantic error in the API's words: the field, the value as sent, and what is allowed.

    ``ranges`` maps a numeric field's name to its ``(low, high)`` bounds.
    """
    loc = [p for p in error_loc(err) if p != "body"]
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
        noun = "type name" if "types" in loc else "key"
        return f"{where}: a {noun} of {len(value)} characters is over the limit of {ctx.get('max_length')}"
    if kind == "literal_error":
        return f"{name} == {sent}, must be {ctx.get('expected')}"
    text = f"{where}: {err.get('msg')}" if where else str(err.get("msg"))
    return text + (f" (got {sent})" if "input" in err else "")
