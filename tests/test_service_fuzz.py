"""The HTTP API fuzzed from its own OpenAPI schema (issue 14, item 16).

Two fuzzers, each on a model with customers and one without:

* schemathesis generates requests from ``/openapi.json`` (valid and invalid) and checks every answer:
  no 5xx, a documented status, a JSON body matching the documented schema;
* a hypothesis test of our own puts strings drawn from all of Unicode (lone surrogates, ``#`` before
  digits of any script, NUL, huge and boolean numbers) into every field of every body, which the
  schema-driven generator, held to UTF-8 and to the schema's types, never sends. It found the two
  kinds of 500 that hand-made strings found before (``"#²"`` and a lone surrogate).

The CI budget is small and fixed (``FUZZ_EXAMPLES``); a longer run::

    LIKEWISE_FUZZ_EXAMPLES=2000 python -m pytest tests/test_service_fuzz.py
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from likewise import Embeddings, Vocab  # noqa: E402
from likewise.service import create_app  # noqa: E402
from likewise.service.app import Limits  # noqa: E402
from likewise.service.models import ModelSpec, Registry  # noqa: E402

FUZZ_EXAMPLES = int(os.environ.get("LIKEWISE_FUZZ_EXAMPLES", "25"))
LIMITS = Limits(max_k=20, max_batch=8, max_body=1 << 16, max_key=64, max_results=100)


def _plain_space(tmp: Path) -> Path:
    rng = np.random.default_rng(0)
    keys = [f"p{i}" for i in range(30)] + ["#x", "ü", "日本"]
    emb = Embeddings(rng.standard_normal((len(keys), 6)), Vocab(keys, counts=np.arange(len(keys), 0, -1)))
    emb.save(tmp / "plain")
    return tmp / "plain"


def _retail_space(tmp: Path) -> Path:
    from likewise import retail

    rows = [(f"o{o}", f"p{(o * 3 + j) % 12}", f"c{o % 7}") for o in range(120) for j in range(3)]
    log = tmp / "orders.csv"
    log.write_text("order_id,product_id,customer_id\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    model = retail.train_from_log(
        log, dim=6, epochs=2, min_count=1, deterministic=True, seed=1, progress=False
    )
    model.save(tmp / "retail")
    return tmp / "retail"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz")
    specs = [ModelSpec("plain", _plain_space(tmp)), ModelSpec("retail", _retail_space(tmp))]
    return create_app(Registry(specs, map_sample=10), limits=LIMITS)


def test_schema_fuzz_finds_no_server_error_and_no_mismatch(app):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    checks = [
        schemathesis.checks.not_a_server_error,
        schemathesis.checks.status_code_conformance,
        schemathesis.checks.content_type_conformance,
        schemathesis.checks.response_schema_conformance,
    ]
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    for op in operations:

        @settings(
            max_examples=FUZZ_EXAMPLES,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=op.as_strategy(), model=st.sampled_from(["plain", "retail", "retail"]))
        def fuzz(case, model):
            if "name" in (case.path_parameters or {}):  # mostly real model names, so the queries run
                case.path_parameters["name"] = model
            case.call_and_validate(checks=checks)

        fuzz()


# ---- all of Unicode into every field --------------------------------------------------------------------

ODD_TEXT = st.one_of(
    st.text(st.characters(codec=None), max_size=12),  # any code point, lone surrogates included
    st.builds(lambda d: "#" + d, st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=4)),
    st.sampled_from(["", "#", "#0", "#-1", "\x00", "p1", "c1", "ü", "#x", "\ud800", "a" * 65]),
)
ODD_VALUE = st.one_of(
    ODD_TEXT,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _bodies() -> dict[str, st.SearchStrategy]:
    items = st.lists(ODD_VALUE, max_size=4)
    k = st.one_of(st.integers(-2, 30), st.booleans())
    return {
        "similar": st.fixed_dictionaries({"items": items}, optional={"k": k, "skip_unknown": ODD_VALUE}),
        "recommend": st.fixed_dictionaries({"items": items}, optional={"k": k, "scoring": ODD_VALUE}),
        "complete_basket": st.fixed_dictionaries({"items": items}, optional={"k": k}),
        "coords": st.fixed_dictionaries({"items": items}, optional={"sample": ODD_VALUE}),
        "analogy": st.fixed_dictionaries(
            {"a": ODD_VALUE, "b": ODD_VALUE, "c": ODD_VALUE}, optional={"method": ODD_VALUE}
        ),
        "similar_vector": st.fixed_dictionaries(
            {
                "vector": st.lists(
                    st.one_of(st.floats(width=32), st.integers(-3, 3), st.booleans()), max_size=7
                )
            },
            optional={"exclude": items, "k": k},
        ),
        "for_customer": st.fixed_dictionaries({"customer": ODD_VALUE}, optional={"k": k}),
        "similar_customers": st.fixed_dictionaries({"customer": ODD_VALUE}, optional={"k": k}),
        "lookalike": st.fixed_dictionaries(
            {"seeds": st.lists(ODD_VALUE, max_size=3)}, optional={"method": ODD_VALUE}
        ),
    }


BODIES = _bodies()


@settings(
    max_examples=FUZZ_EXAMPLES * 8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
@given(
    route=st.sampled_from(sorted(BODIES)),
    model=st.sampled_from(["plain", "retail"]),
    data=st.data(),
    query=ODD_TEXT,
)
def test_any_unicode_in_any_field_gets_a_documented_answer(app, route, model, data, query):
    body = data.draw(BODIES[route])
    doc = app.openapi()
    documented = set(doc["paths"][f"/models/{{name}}/{route}"]["post"]["responses"])

    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            # json.dumps escapes lone surrogates as \\udXXX: valid JSON a client may send
            post = await c.post(
                f"/models/{model}/{route}",
                content=json.dumps(body),
                headers={"content-type": "application/json"},
            )
            get = await c.get(f"/models/{model}/similar", params={"item": query.encode("utf-8", "replace")})
            return post, get

    post, get = asyncio.run(go())
    for r in (post, get):
        assert r.status_code < 500, (route, body, r.text)
        payload = r.json()  # always JSON, also for errors
        if r.status_code >= 400:
            assert isinstance(payload["error"], str) and payload["error"]
    assert str(post.status_code) in documented, (route, body, post.status_code)
