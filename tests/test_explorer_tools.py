"""The explorer as a tool (issue 45), in headless Chromium against a real ``likewise serve``: the four bugs
of the first round (B1-B4), a forgiving search, errors said where the user acted, the retail answers on
the page and the map's tools (legend filters, box selection, isolate, labels by column, gradients, the
view in the URL). One server and one browser for the module; the checks that depend on the layout run at
1400, 1024 and 400 px. No test waits for a fixed time: each waits for a condition of the page.
"""

from __future__ import annotations

import csv
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


# ---- search ----------------------------------------------------------------------------------------------


def suggestions(page, text: str) -> list[str]:
    page.fill("#search", text)
    page.wait_for_function(
        "(t) => document.querySelector('#search-status').textContent.includes(t)", arg=text, timeout=WAIT
    )
    return keys_shown(page, "#suggest li")


def test_search_forgives_typos_finds_values_and_says_no_matches(page, served):
    base, shop, _, products = served
    open_page(page, base, "?model=shop")
    # a mistyped word (two letters swapped) still finds the product, said to be a close spelling
    pid = next(k for k in shop.keys[:50] if len(products[k]["name"].split()[-1]) >= 4)
    first, last = products[pid]["name"].rsplit(" ", 1)
    typo = f"{first} {last[0]}{last[2]}{last[1]}{last[3:]}"
    assert pid in suggestions(page, typo)
    assert "close spellings" in page.inner_text("#search-status")
    page.keyboard.press("Enter")  # a close spelling is offered, not opened: "did you mean" names it
    page.wait_for_selector(f"#message a.suggestion[data-item='{pid}']", timeout=WAIT)
    assert products[pid]["name"] in page.inner_text("#message")
    # an attribute value finds its items, marked on the map
    aisle = products[pid]["aisle"]
    found = suggestions(page, aisle)
    assert found and all(products[k]["aisle"] == aisle for k in found)
    page.wait_for_function(  # every match marked, those outside the map's sample too
        "(want) => JSON.stringify(state.marks.filter(m => m.shape === 'match').map(m => m.key).sort())"
        " === JSON.stringify(want)",
        arg=sorted(found),
        timeout=WAIT,
    )
    # nothing at all: said
    assert suggestions(page, "qqqxqqq") == []
    assert page.inner_text("#search-status") == "No items match “qqqxqqq”."
    # Enter before the debounce's list came: the name is found, not sent raw
    page.fill("#search", products[shop.keys[7]]["name"])
    page.keyboard.press("Enter")
    wait_selected(page, shop.keys[7])
    assert page.inner_text("#message") == ""
    # #12 opens id 12, with its details and its ring
    page.fill("#search", "#12")
    page.keyboard.press("Enter")
    wait_selected(page, shop.keys[12])
    assert f"department: {products[shop.keys[12]]['department']}" in page.inner_text("#item-details")
    marks = page.evaluate("() => state.marks")
    assert {"key": shop.keys[12], "shape": "selected"} in [
        {"key": m["key"], "shape": m["shape"]} for m in marks
    ]
    assert page.evaluate("location.search").count("item=") == 1 and f"item={shop.keys[12]}" in page.evaluate(
        "location.search"
    )


def test_hidden_tokens_are_never_suggested(page, served):
    base, _, typed, _ = served
    open_page(page, base, "?model=typed")
    assert not [k for k in suggestions(page, "cat") if k.startswith("attr:")]
    page.fill("#search", "attx:categori")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#message').textContent.includes('unknown')")
    assert not [a for a in keys_shown(page, "#message a.suggestion") if a.startswith("attr:")]
    found = httpx.get(f"{base}/models/typed/search", params={"prefix": "a", "limit": 50}).json()["items"]
    assert found and not [it for it in found if it["item"].startswith("attr:")]


# ---- errors, said where the user acted -------------------------------------------------------------------


def test_bad_links_are_said_not_silently_replaced(browser, served, width):
    base, shop = served[0], served[1]
    page = new_page(browser, base, width)
    try:
        open_page(page, base, "?model=nosuch")
        assert (
            'no model "nosuch"' in page.inner_text("#notice") and page.evaluate("() => state.model") == "shop"
        )
        assert page.is_visible("#notice")
        open_page(page, base, "?model=shop&view=umap&colour=bogus")
        said = page.inner_text("#map-error")
        assert "UMAP is not available" in said and 'no column "bogus"' in said and "department" in said
        assert page.input_value("#projection") == "pca" and page.input_value("#colour") == "department"
        assert "umap" not in page.evaluate("location.search")  # the URL says what is shown
        good = shop.keys[3]
        open_page(page, base, f"?model=shop&basket={good}&basket=no-such-item")
        page.wait_for_function("() => state.recommendations.length > 0", timeout=WAIT)
        assert keys_shown(page, "#basket li") == [good]
        assert "unknown product 'no-such-item'" in page.inner_text("#basket-error")
        assert "no-such-item" not in page.evaluate("location.search")
    finally:
        done(page)


def test_an_unreachable_server_is_said_and_retried(page, served):
    base, shop = served[0], served[1]
    open_page(page, base, "?model=shop")
    page.route("**/models/**", lambda route: route.abort())
    page.route("**/health", lambda route: route.abort())
    page.select_option("#projection", "tsne")
    page.wait_for_selector("#connection:not([hidden])", timeout=WAIT)
    assert "not answering" in page.inner_text("#connection") and "Retrying" in page.inner_text("#connection")
    assert "could not reach the server" in page.inner_text("#map-error")
    assert page.input_value("#projection") == "pca" and page.evaluate("() => state.projection") == "pca"
    page.fill("#search", shop.keys[2])
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#message').textContent.includes('could not reach')")
    page.unroute("**/models/**")
    page.unroute("**/health")
    page.wait_for_selector("#connection", state="hidden", timeout=WAIT)
    page.keyboard.press("Enter")
    wait_selected(page, shop.keys[2])


# ---- retail on the page ----------------------------------------------------------------------------------


def test_also_bought_and_a_customer_with_purchases_next_basket_and_place(browser, served, width):
    base, shop = served[0], served[1]
    page = new_page(browser, base, width)
    try:
        pid = shop.keys[4]
        open_page(page, base, f"?model=shop&item={pid}")
        wait_selected(page, pid)
        want = retail.also_bought(shop, pid, 10).keys
        page.wait_for_function(
            "(n) => document.querySelectorAll('#also-bought li').length === n", arg=len(want), timeout=WAIT
        )
        assert keys_shown(page, "#also-bought li") == want and page.is_visible("#also-bought-title")

        customer = shop.customers.keys[0]
        page.fill("#customer", customer[:3])  # the field completes customer keys
        page.wait_for_function("() => document.querySelectorAll('#customer-list option').length > 0")
        page.fill("#customer", customer)
        page.click("#similar-customers-form button[type=submit]")
        page.wait_for_selector("#similar-customers li button.customer", timeout=WAIT)
        other = keys_shown(page, "#similar-customers li")[0]
        page.click(f"#similar-customers li[data-item='{other}'] button.customer")  # customers are clickable
        page.wait_for_function(
            "() => document.querySelectorAll('#next-basket li').length > 0"
            " && document.querySelectorAll('#something-new li').length > 0",
            timeout=WAIT,
        )
        assert page.inner_text("#customer-title") == f"Customer {other}"
        assert keys_shown(page, "#next-basket li") == retail.next_basket(shop, other, 10).keys
        new = keys_shown(page, "#something-new li")
        assert new == retail.next_basket(shop, other, 10, explore=True).keys
        bought = keys_shown(page, "#bought li")
        ever = {shop.keys[i] for i in shop.customers.bought(other).tolist()}
        assert bought and set(bought) <= ever and not set(new) & ever
        marks = page.evaluate("() => state.marks")
        assert any(m["shape"] == "customer" and m["key"] == other for m in marks)
        assert {m["key"] for m in marks if m["shape"] == "bought"} == set(bought)
        assert f"customer={other}" in page.evaluate("location.search")
        assert axe_serious(page) == []
    finally:
        done(page)


def test_a_skip_link_reaches_the_map_first_and_the_analogy_fields_complete_names(page, served):
    base, shop, _, products = served
    open_page(page, base, "?model=shop")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.id === 'map'")
    name = products[shop.keys[0]]["name"]
    page.fill("#analogy-a", name[:4])
    page.wait_for_function(
        "(n) => [...document.querySelectorAll('#item-names option')].some(o => o.value === n)", arg=name
    )


# ---- the map as a tool -----------------------------------------------------------------------------------


def shown_count(page) -> int:
    return page.evaluate("() => state.map.shown.reduce((a, b) => a + b, 0)")


def test_legend_filters_box_selection_isolate_labels_gradient_in_the_url(browser, served, width):
    base, shop, _, products = served
    page = new_page(browser, base, width)
    try:
        open_page(page, base, "?model=shop")
        n = page.evaluate("() => state.map.items.length")
        # a legend value hides its points, and says so in the URL
        dept = products[shop.keys[0]]["department"]
        page.click(f"#legend button.filter[data-value='{dept}']")
        assert page.get_attribute(f"#legend button.filter[data-value='{dept}']", "aria-pressed") == "false"
        hidden = sum(products[k]["department"] == dept for k in page.evaluate("() => state.map.items"))
        assert shown_count(page) == n - hidden and f"hide={dept}" in page.evaluate("location.search")
        # hovering asks the grid's nearby cells, not every point
        key = shop.keys[1]
        page.eval_on_selector("#map", "c => c.scrollIntoView({block: 'center'})")
        x, y = screen_of(page, key)
        page.mouse.move(x, y)
        page.wait_for_selector("#tip:not([hidden])")
        assert 0 < page.evaluate("() => state.lastScan") < n / 2
        # a box: drag with the box tool; isolate; zoom to it
        page.click("#box-mode")
        box = canvas_box(page)
        page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.3)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5, steps=4)
        page.mouse.move(box["x"] + box["width"] * 0.7, box["y"] + box["height"] * 0.7, steps=4)
        page.mouse.up()
        page.wait_for_function("() => state.box !== null")
        count = page.evaluate("() => state.selectionCount")
        assert 0 < count < n and f"{count} selected" in page.inner_text("#selection-count")
        page.click("#isolate")
        assert shown_count(page) == count and "iso=1" in page.evaluate("location.search")
        scale = page.evaluate("() => state.view.scale")
        page.click("#zoom-selection")
        assert page.evaluate("() => state.view.scale") > scale
        # labels by any column; numbers on a gradient
        page.select_option("#label", "aisle")
        texts = {b["text"] for b in page.evaluate("() => state.labelBoxes")}
        assert texts and texts <= {p["aisle"] for p in products.values()}
        page.select_option("#colour", "popularity")
        page.wait_for_selector("#legend .swatch.gradient")
        css = page.evaluate(
            "() => { const v = state.map.attributes.popularity.map(Number);"
            " const lo = v.indexOf(Math.min(...v)), hi = v.lastIndexOf(Math.max(...v));"
            " return [state.map.css[lo], state.map.css[hi]]; }"
        )
        assert css == ["#440154", "#fde725"]
        page.wait_for_function("() => location.search.includes('at=')")  # the zoom, replaced in place
        url = page.evaluate("location.search")
        assert all(p in url for p in ("label=aisle", "colour=popularity", "box=", "iso=1"))
        # the link reopens the same view
        view = page.evaluate("() => [state.view.cx, state.view.cy, state.view.scale]")
        open_page(page, base, url)
        page.wait_for_function("() => state.box !== null && state.isolate")
        assert page.evaluate("() => [state.view.cx, state.view.cy, state.view.scale]") == pytest.approx(
            view, rel=1e-3
        )
        assert shown_count(page) == page.evaluate("() => state.selectionCount")
        assert page.input_value("#label") == "aisle" and page.input_value("#colour") == "popularity"
        assert axe_serious(page) == []
    finally:
        done(page)


def test_answers_are_compressed(served):
    r = httpx.get(f"{served[0]}/models/shop/map", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
    assert int(r.headers["content-length"]) < len(r.content) / 3


def test_neighbour_count_and_map_size_are_chosen_in_the_page(page, served):
    base, shop = served[0], served[1]
    pid = shop.keys[6]
    open_page(page, base, f"?model=shop&item={pid}")
    wait_selected(page, pid)
    page.select_option("#k", "20")
    page.wait_for_function("() => state.neighbours.length === 20", timeout=WAIT)
    assert keys_shown(page, "#neighbours li") == shop.similar(pid, k=20).keys
    sizes = page.eval_on_selector_all("#sample option", "els => els.map(e => +e.value)")
    assert page.input_value("#sample") == "250" and max(sizes) == len(shop)
    page.select_option("#sample", str(len(shop)))
    page.wait_for_function("(n) => state.map.items.length === n", arg=len(shop), timeout=WAIT)
    url = page.evaluate("location.search")
    assert f"sample={len(shop)}" in url and "k=20" in url
    open_page(page, base, url)
    wait_selected(page, pid)
    assert page.evaluate("() => [state.map.items.length, state.neighbours.length]") == [len(shop), 20]
    assert page.input_value("#sample") == str(len(shop)) and page.input_value("#k") == "20"
