"""How every route answers: JSON built in the thread pool, items read as the command line reads them.

Every query, and the JSON of its answer, is computed by :func:`answer` in the thread pool, never on the
event loop: a slow or large request (a huge batch, a map, an unknown key's "did you mean") does not
hold up the others. The answer records are :meth:`~likewise.space.results.Neighbours.records`, the one
record the CLI's ``--json`` and Python give.
"""

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from .._threads import query_threads
from ..data.vocab import parse_item

__all__ = ["answer", "coordinates", "dumps", "envelope", "item_of", "json_response"]


def dumps(payload: Any) -> bytes:
    """``payload`` as compact UTF-8 JSON."""
    # backslashreplace: a lone surrogate that reached an answer becomes its JSON escape, not a 500
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")


def coordinates(values: Any) -> list[float]:
    """Map coordinates as JSON numbers: five places, and ``0.0`` for ``-0.0`` (a tiny negative value
    rounded to zero printed ``"x": -0.0``)."""
    return (np.round(np.asarray(values, dtype=np.float64).reshape(-1), 5) + 0.0).tolist()


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """``payload`` as a JSON response with ``status``."""
    return Response(dumps(payload), status_code=status, media_type="application/json", headers=headers)


async def answer(fn: Callable[[], Any], queries: int = 1) -> Response:
    """Run ``fn`` and serialise its payload in the thread pool, off the event loop.

    ``fn`` runs under the BLAS thread policy for ``queries`` query vectors (:func:`likewise.query_threads`):
    one BLAS thread while small queries are in flight, the library's count for a batch. The service is
    where requests run concurrently, so this is where the policy is applied; the library itself never
    changes the process's BLAS threads.
    """

    def run() -> Response:
        with query_threads(queries):
            return json_response(fn())

    return await run_in_threadpool(run)


def item_of(raw: str | int) -> Any:
    """An item as sent: a JSON int is the key written the same way (``43`` is ``"43"``); in text ``"#12"``
    is row 12 unless a key ``"#12"`` exists (the CLI's parser, :func:`likewise.parse_item`)."""
    return parse_item(raw) if isinstance(raw, str) else raw


def envelope(answers: Any, **facts: Any) -> dict:
    """Every query route's answer: :func:`likewise.space.results.envelope`, as the CLI's ``--json``."""
    from ..space.results import envelope as one_envelope

    return one_envelope(answers, **facts)
