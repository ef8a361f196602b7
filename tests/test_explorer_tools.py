"""The explorer as a tool (issue 45), in headless Chromium against a real ``likewise serve``: the four bugs
of the first round (B1-B4), a forgiving search, errors said where the user acted, the retail answers on
the page and the map's tools (legend filters, box selection, isolate, labels by column, gradients, the
view in the URL). One server and one browser for the module; the checks that depend on the layout run at
1400, 1024 and 400 px. No test waits for a fixed time: each waits for a condition of the page.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api")
httpx = pytest.importorskip("httpx")
if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does it)", allow_module_level=True)

from _live import live_server  # noqa: E402
from test_browser import ARGS  # noqa: E402
from test_explorer_browser import axe_serious  # noqa: E402
from test_service import planted  # noqa: E402

import likewise  # noqa: E402
from likewise import Embeddings, Vocab, retail  # noqa: E402
from likewise.data.datasets import retail_orders, write_retail  # noqa: E402
from likewise.space.itemtypes import ItemTypes  # noqa: E402

WAIT = 60_000  # ms: an upper bound for a slow shared machine, never a pause
WIDTHS = [1400, 1024, 400]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The generated shop (300 products, 400 customers, products.csv as it is), the seed demo's planted
    twin without attributes, and a typed space with a hidden ``attr:`` token."""
    d = tmp_path_factory.mktemp("explorer-tools")
    write_retail(retail_orders(400, 300, seed=1), d / "data", formats=("parquet",))
    import pyarrow.parquet as pq

    shop = likewise.train(
        pq.read_table(d / "data" / "orders.parquet"),
        basket_col="order_id",
        item_col="product_id",
        user_col="customer_id",
        dim=16,
        epochs=3,
        seed=0,
        progress=False,
    )
    shop.save(d / "shop")
    base, _ = planted(5, n_groups=4, group_size=10)
    kinds = ["campaign" if int(k.split("_i")[1]) % 3 == 0 else "product" for k in base.keys]
    keys = [f"{t}:{k}" for t, k in zip(kinds, base.keys, strict=True)]
    kinds[0], keys[0] = "attr", "attr:category=g"  # the most frequent token is a hidden one
    typed = Embeddings(np.asarray(base.vectors), Vocab(keys, base.counts))
    typed.attach_types(ItemTypes.from_types(kinds, hidden=["attr"]))
    typed.save(d / "typed")
    with open(d / "data" / "products.csv", newline="") as f:
        products = {r["product_id"]: r for r in csv.DictReader(f)}
    attrs = f"shop={d / 'data' / 'products.csv'}"
    args = [f"shop={d / 'shop'}", f"typed={d / 'typed'}", "--item-attrs", attrs, "--map-sample", "250"]
    with live_server(args) as (url, _):
        yield url, Embeddings.load(d / "shop"), Embeddings.load(d / "typed"), products


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def width(request) -> int:
    return request.param


def new_page(browser, base: str, width: int = 1400, **context):
    """A page at ``width`` px that fails its test on a script error or a request to another host."""
    ctx = browser.new_context(viewport={"width": width, "height": 800}, **context)
    page = ctx.new_page()
    page.errors, page.external = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith(base) else page.external.append(r.url))
    return page


def done(page) -> None:
    errors, external = page.errors, page.external
    page.context.close()
    assert errors == [] and external == []


@pytest.fixture
def page(browser, served):
    p = new_page(browser, served[0])
    yield p
    done(p)


def open_page(page, base: str, query: str = "") -> None:
    page.goto(base + "/" + query)
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT)


def wait_selected(page, key: str) -> None:
    page.wait_for_function(
        "(k) => state.selected === k && state.neighbours.length > 0", arg=key, timeout=WAIT
    )


def keys_shown(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.item)")


def canvas_box(page) -> dict:
    return page.eval_on_selector("#map", "c => c.getBoundingClientRect().toJSON()")


def screen_of(page, key: str) -> tuple[float, float]:
    """Where ``key``'s point is drawn, in page coordinates."""
    box = canvas_box(page)
    x, y = page.evaluate("(k) => { const p = position(k); return toScreen(p[0], p[1]); }", key)
    return box["x"] + x, box["y"] + y


# ---- B1-B4 -----------------------------------------------------------------------------------------------


def test_b1_back_to_the_default_colour_recolours(page, served):
    base = served[0]
    open_page(page, base, "?model=shop")
    assert page.input_value("#colour") == "department"
    page.select_option("#colour", "aisle")
    page.wait_for_function("() => location.search.includes('colour=aisle')")
    page.go_back()
    page.wait_for_function("() => !location.search.includes('colour=')")
    page.wait_for_function("() => state.colour === 'department'", timeout=WAIT)
    assert page.input_value("#colour") == "department"
    assert "outdoor" in page.inner_text("#legend") and "camping" not in page.inner_text("#legend")
    page.go_forward()
    page.wait_for_function("() => state.colour === 'aisle'", timeout=WAIT)
    assert page.input_value("#colour") == "aisle"


def test_b2_picking_an_item_while_zoomed_elsewhere_shows_it_and_its_neighbours(browser, served, width):
    base, shop = served[0], served[1]
    page = new_page(browser, base, width)
    try:
        open_page(page, base, "?model=shop")
        far = page.evaluate(  # the point farthest from the centre of the view, then zoom in on the other side
            "() => { const m = state.map; let b = 0, d = -1; for (let i = 0; i < m.x.length; i++) {"
            " const e = (m.x[i] - state.view.cx) ** 2 + (m.y[i] - state.view.cy) ** 2;"
            " if (e > d) { d = e; b = i; } }"
            " return m.items[b]; }"
        )
        page.focus("#map")
        for _ in range(12):
            page.keyboard.press("+")
        x, y = page.evaluate("(k) => position(k)", far)
        page.evaluate(
            "([x, y]) => { const v = state.view; v.cx = 2 * v.cx - x; v.cy = 2 * v.cy - y; draw(); }", [x, y]
        )
        page.fill("#search", far)
        page.keyboard.press("Enter")
        wait_selected(page, far)
        box = canvas_box(page)
        marks = page.evaluate("() => state.marks")
        want = {far, *shop.similar(far, k=10).keys}
        assert {m["key"] for m in marks} >= want
        for m in marks:
            assert 0 <= m["x"] <= box["width"] and 0 <= m["y"] <= box["height"], m
    finally:
        done(page)


def test_b3_analogy_and_customer_errors_are_said_in_their_panels(browser, served, width):
    base = served[0]
    page = new_page(browser, base, width)
    try:
        open_page(page, base, "?model=shop")
        page.fill("#analogy-a", "no-such-thing")
        page.fill("#analogy-b", served[1].keys[1])
        page.fill("#analogy-c", served[1].keys[2])
        page.click("#analogy-form button[type=submit]")
        err = page.wait_for_selector("#analogy-form + .panel-error:not(:empty)", timeout=WAIT)
        assert "no-such-thing" in err.inner_text() and err.get_attribute("role") == "alert"
        assert err.is_visible()
        page.fill("#customer", "nobody-at-all")
        page.click("#similar-customers-form button[type=submit]")
        err = page.wait_for_selector("#similar-customers-form + .panel-error:not(:empty)", timeout=WAIT)
        assert "unknown customer 'nobody-at-all'" in err.inner_text()
        assert page.inner_text("#message") == ""  # not under the search box, out of sight
    finally:
        done(page)


def test_b4_the_tooltip_stays_on_the_map(browser, served, width):
    base = served[0]
    page = new_page(browser, base, width)
    try:
        open_page(page, base, "?model=shop")
        right = page.evaluate(  # the rightmost point on screen, hovered first
            "() => { const m = state.map; let b = 0;"
            " for (let i = 1; i < m.x.length; i++) if (m.x[i] > m.x[b]) b = i; return m.items[b]; }"
        )
        x, y = screen_of(page, right)
        page.mouse.move(x, y)
        page.wait_for_selector("#tip:not([hidden])")
        tip = page.eval_on_selector("#tip", "t => t.getBoundingClientRect().toJSON()")
        wrap = page.eval_on_selector("#map-wrap", "t => t.getBoundingClientRect().toJSON()")
        assert wrap["left"] <= tip["left"] and tip["right"] <= wrap["right"] + 0.5, (tip, wrap)
        assert tip["top"] >= wrap["top"] and tip["bottom"] <= wrap["bottom"] + 0.5
    finally:
        done(page)


def test_b4_a_tap_picks_without_a_stuck_tooltip_and_one_finger_pans(browser, served):
    base, shop = served[0], served[1]
    page = new_page(browser, base, 400, has_touch=True, is_mobile=True, device_scale_factor=2)
    try:
        open_page(page, base, "?model=shop")
        page.eval_on_selector("#map", "c => c.scrollIntoView({block: 'center'})")
        key = shop.keys[0]
        x, y = screen_of(page, key)
        page.touchscreen.tap(x, y)
        page.wait_for_function("() => state.selected !== null", timeout=WAIT)
        page.wait_for_function("() => document.querySelector('#tip').hidden")
        # one finger drags the map, not the page
        page.eval_on_selector("#map", "c => c.scrollIntoView({block: 'center'})")
        scroll = page.evaluate("() => window.scrollY")
        before = page.evaluate("() => ({...state.view})")
        box = canvas_box(page)
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        cdp = page.context.new_cdp_session(page)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": cx, "y": cy}]})
        for i in range(1, 6):
            pt = {"x": cx - 20 * i, "y": cy - 20 * i}
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [pt]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        page.wait_for_function("(cx) => state.view.cx > cx", arg=before["cx"])
        after = page.evaluate("() => ({...state.view})")
        assert after["cy"] < before["cy"]  # dragged up-left: the view moved down-right
        assert page.evaluate("() => window.scrollY") == scroll
    finally:
        done(page)
