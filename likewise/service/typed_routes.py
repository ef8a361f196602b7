"""The routes of a typed space: campaigns, content and cold start (added to the app by ``create_app``).

=========================================  =================================================================
route                                      answer (the function of the library it calls)
=========================================  =================================================================
``POST /models/{name}/campaigns``          campaigns for ``customer``, or for an audience of ``customers``
                                           (:func:`~likewise.apps.campaigns.campaigns_for_customer`,
                                           :func:`~likewise.apps.campaigns.campaigns_for_audience`)
``GET  /models/{name}/campaign_products``  products bought with ``campaign``
                                           (:func:`~likewise.apps.campaigns.campaign_products`)
``POST /models/{name}/campaign_audience``  customers like the campaign's responders
                                           (:func:`~likewise.apps.campaigns.campaign_audience`)
``POST /models/{name}/read_next``          articles after ``articles``, or for ``reader``
                                           (:func:`~likewise.apps.content.read_next`, ``read_next_for``)
``POST /models/{name}/place``              a new product's vector and neighbours from its ``attrs``
                                           (:func:`~likewise.apps.coldstart.place`; nothing is saved)
=========================================  =================================================================

Unknown items, customers and types, and spaces without what a route needs, answer as every other
route does (404 with suggestions, 422 naming the value). No ``from __future__ import annotations``
here: FastAPI reads the route annotations, which name local types.
"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, Query

from ..errors import InputError
from .bodies import Bodies
from .models import Registry

__all__ = ["add_typed_routes"]


def add_typed_routes(
    app: FastAPI,
    registry: Registry,
    bodies: Bodies,
    *,
    answer: Callable[[Callable[[], Any]], Any],
    item_of: Callable[[Any], Any],
    neighbours: Callable[[Any], list[dict]],
) -> None:
    """Add the routes of the module docstring to ``app``.

    Parameters
    ----------
    app : FastAPI
    registry : Registry
        The served models.
    bodies : Bodies
        The request models of this app (their limits).
    answer, item_of, neighbours
        ``create_app``'s helpers: run a query off the event loop, read ``#12`` as an id, and turn a
        :class:`~likewise.space.results.Neighbours` into JSON rows.
    """
    lim = app.state.limits
    K = Annotated[int, Query(ge=1, le=lim.max_k, description="results wanted")]
    KeyParam = Annotated[str, Query(min_length=1, max_length=lim.max_key, description="a key, or #id")]

    @app.post("/models/{name}/campaigns", summary="Campaigns that fit a customer, or an audience")
    async def campaigns(name: str, body: bodies.campaigns):  # type: ignore[valid-type]
        s = registry.get(name)
        from ..apps import campaigns as c

        if (body.customer is None) == (body.customers is None):
            raise InputError("give customer (one) or customers (an audience), not both and not neither")

        def run() -> dict:
            if body.customer is not None:
                res = c.campaigns_for_customer(
                    s.emb, body.customer, body.k, exclude_opened=body.exclude_opened
                )
                return {"customer": body.customer, "neighbours": neighbours(res)}
            res = c.campaigns_for_audience(s.emb, body.customers, body.k)
            return {"customers": len(set(body.customers)), "neighbours": neighbours(res)}

        return await answer(run)

    @app.get("/models/{name}/campaign_products", summary="Products bought with a campaign")
    async def campaign_products(name: str, campaign: KeyParam, k: K = 10):
        s = registry.get(name)
        from ..apps import campaigns as c

        return await answer(
            lambda: {
                "campaign": campaign,
                "neighbours": neighbours(c.campaign_products(s.emb, item_of(campaign), k)),
            }
        )

    @app.post("/models/{name}/campaign_audience", summary="Customers like a campaign's responders")
    async def campaign_audience(name: str, body: bodies.audience):  # type: ignore[valid-type]
        s = registry.get(name)
        from ..apps import campaigns as c

        def run() -> dict:
            campaign = item_of(body.campaign)
            res = c.campaign_audience(s.emb, campaign, body.k, method=body.method)
            n = len(c.campaign_responders(s.emb, campaign))
            return {"campaign": body.campaign, "responders": n, "neighbours": neighbours(res)}

        return await answer(run)

    @app.post("/models/{name}/read_next", summary="Articles to read next, after articles or for a reader")
    async def read_next(name: str, body: bodies.read_next):  # type: ignore[valid-type]
        s = registry.get(name)
        from ..apps import content

        if (body.articles is None) == (body.reader is None):
            raise InputError("give articles (those just read) or reader, not both and not neither")

        def run() -> dict:
            if body.reader is not None:
                res = content.read_next_for(s.emb, body.reader, body.k)
                return {"reader": body.reader, "neighbours": neighbours(res)}
            on_unknown = "skip" if body.skip_unknown else "raise"
            res = content.read_next(s.emb, [item_of(a) for a in body.articles], body.k, on_unknown=on_unknown)
            return {"articles": body.articles, "neighbours": neighbours(res)}

        return await answer(run)

    @app.post("/models/{name}/place", summary="Place a new product from its attributes (cold start)")
    async def place(name: str, body: bodies.place):  # type: ignore[valid-type]
        s = registry.get(name)
        from ..apps import coldstart

        def run() -> dict:
            placed = coldstart.place(s.emb, body.attrs, body.k, item_type=body.type)
            out = placed.to_dict()
            out["similar"] = neighbours(placed.similar)
            out["bought_with"] = None if placed.bought_with is None else neighbours(placed.bought_with)
            return out

        return await answer(run)
