"""The routes of a typed space: campaigns, content and cold start (a router that ``create_app`` includes).

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
route does (404 with suggestions, 422 naming the value).
"""

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from .._check import default_of
from ..apps import campaigns
from ..errors import InputError
from .bodies import ANSWERS, AudienceBody, Bound, CampaignsBody, PlaceBody, QueryInt, ReadNextBody
from .deps import KeyParam, ServedModel
from .respond import answer, envelope, item_of

__all__ = ["router"]

router = APIRouter()

Wanted = Annotated[int, Query(ge=1, description="results wanted"), QueryInt, Bound("max_k")]
#: The library's own default (GET parameters cannot call it in the signature).
CAMPAIGN_PRODUCTS_K: int = default_of(campaigns.campaign_products, "k")


@router.post(
    "/models/{name}/campaigns", summary="Campaigns that fit a customer, or an audience", responses=ANSWERS
)
async def campaigns(s: ServedModel, body: CampaignsBody) -> Response:
    from ..apps import campaigns as c

    if (body.customer is None) == (body.customers is None):
        raise InputError("give customer (one) or customers (an audience), not both and not neither")

    def run() -> dict:
        if body.customer is not None:
            res = c.campaigns_for_customer(s.emb, body.customer, body.k, exclude_opened=body.exclude_opened)
            return envelope([(body.customer, res)])
        audience = body.customers or []
        res = c.campaigns_for_audience(s.emb, audience, body.k)
        return envelope([(audience, res)], customers=len(set(audience)))

    return await answer(run)


@router.get("/models/{name}/campaign_products", summary="Products bought with a campaign", responses=ANSWERS)
async def campaign_products(s: ServedModel, campaign: KeyParam, k: Wanted = CAMPAIGN_PRODUCTS_K) -> Response:
    from ..apps import campaigns as c

    def run() -> dict:
        return envelope([(campaign, c.campaign_products(s.emb, item_of(campaign), k))])

    return await answer(run)


@router.post(
    "/models/{name}/campaign_audience", summary="Customers like a campaign's responders", responses=ANSWERS
)
async def campaign_audience(s: ServedModel, body: AudienceBody) -> Response:
    from ..apps import campaigns as c

    def run() -> dict:
        campaign = item_of(body.campaign)
        res = c.campaign_audience(s.emb, campaign, body.k, method=body.method)
        n = len(c.campaign_responders(s.emb, campaign))
        return envelope([(body.campaign, res)], method=body.method, responders=n)

    return await answer(run)


@router.post(
    "/models/{name}/read_next",
    summary="Articles to read next, after articles or for a reader",
    responses=ANSWERS,
)
async def read_next(s: ServedModel, body: ReadNextBody) -> Response:
    from ..apps import content

    if (body.articles is None) == (body.reader is None):
        raise InputError("give articles (those just read) or reader, not both and not neither")

    def run() -> dict:
        if body.reader is not None:
            res = content.read_next_for(s.emb, body.reader, body.k)
            return envelope([(body.reader, res)])
        articles = body.articles or []
        res = content.read_next(s.emb, [item_of(a) for a in articles], body.k, on_unknown=body.on_unknown)
        return envelope([(body.articles, res)])

    return await answer(run)


@router.post("/models/{name}/place", summary="Place a new product from its attributes (cold start)")
async def place(s: ServedModel, body: PlaceBody) -> Response:
    from ..apps import coldstart

    def run() -> dict:
        return coldstart.place(s.emb, body.attrs, body.k, item_type=body.type).to_dict()

    return await answer(run)
