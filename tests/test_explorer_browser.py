"""The explorer in headless Chromium (Debian's ``chromium``, driven by Playwright) on a generated shop and the
seed demo, against a real ``likewise serve``: names, links, Back / Forward, model switches, both projections,
the analogy and customer panels, a 400 px screen, the keyboard alone, and axe-core.

Every test saves its screenshots under one folder, printed at the end of the run: ``$LIKEWISE_ARTEFACTS``
when set (CI keeps it), else a pytest temporary folder. ``LIKEWISE_SCREENSHOT_DIR=docs/images`` also copies
them there (that is how the pictures in docs/serve.md are refreshed). No test waits for a fixed time: each
waits for a condition of the page.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api")
httpx = pytest.importorskip("httpx")
if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does it)", allow_module_level=True)

from _live import live_server  # noqa: E402
from test_browser import ARGS  # noqa: E402

import likewise  # noqa: E402
from likewise import Embeddings, retail  # noqa: E402
from likewise.data.datasets import demo_baskets, demo_labels, retail_orders, write_retail  # noqa: E402

WAIT = 60_000  # ms: an upper bound for a slow shared machine, never a pause


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    d = Path(os.environ.get("LIKEWISE_ARTEFACTS") or tmp_path_factory.mktemp("explorer-screenshots"))
    d.mkdir(parents=True, exist_ok=True)
    yield d
    print(f"\nexplorer screenshots: {d}")


def save(page, shots: Path, name: str, *, full_page: bool = False) -> Path:
    path = shots / name
    page.screenshot(path=str(path), full_page=full_page)
    assert path.stat().st_size > 10_000
    if os.environ.get("LIKEWISE_SCREENSHOT_DIR"):
        shutil.copyfile(path, Path(os.environ["LIKEWISE_SCREENSHOT_DIR"]) / name)
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The generated shop (600 products, 8 departments, 1000 customers) with its products.csv as it is, and
    the seed demo (15 products) with its departments as item<TAB>label lines."""
    d = tmp_path_factory.mktemp("explorer")
    write_retail(retail_orders(1000, 600, seed=0), d / "data", formats=("parquet",))
    import pyarrow.parquet as pq

    shop = likewise.train(
        pq.read_table(d / "data" / "orders.parquet"),
        basket_col="order_id",
        item_col="product_id",
        user_col="customer_id",
        dim=32,
        epochs=5,
        seed=0,
        progress=False,
    )
    shop.save(d / "shop")
    demo = likewise.train(
        demo_baskets(400, seed=0), mode="basket", dim=8, negative=2, sample=0.0, min_count=1, epochs=15
    )
    demo.save(d / "demo")
    (d / "demo.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in demo_labels().items()))
    with open(d / "data" / "products.csv", newline="") as f:
        products = {r["product_id"]: r for r in csv.DictReader(f)}
    args = [
        f"shop={d / 'shop'}",
        f"demo={d / 'demo'}",
        "--item-attrs",
        f"shop={d / 'data' / 'products.csv'}",
        "--item-attrs",
        f"demo={d / 'demo.tsv'}",
        "--map-sample",
        "500",
    ]
    with live_server(args) as (base, _):
        yield base, Embeddings.load(d / "shop"), Embeddings.load(d / "demo"), products


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, served):
    base = served[0]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    external: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith(base) else external.append(r.url))
    yield page
    page.close()
    assert errors == [] and external == []


def open_page(page, base: str, query: str = "") -> None:
    page.goto(base + "/" + query)
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT)


def keys_shown(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.item)")


def wait_selected(page, key: str) -> None:
    page.wait_for_function(
        "(k) => state.selected === k && state.neighbours.length > 0", arg=key, timeout=WAIT
    )


def no_overlap(boxes: list[dict]) -> bool:
    return not any(
        a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and a["y"] < b["y"] + b["h"]
        and b["y"] < a["y"] + a["h"]
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
    )


def axe_serious(page) -> list[str]:
    """axe-core's serious and critical findings on the page as it is (axe.min.js from the pip package)."""
    from axe_playwright_python.base import AXE_FILE_PATH

    page.add_script_tag(path=str(AXE_FILE_PATH))
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


# ---- 1. names and attributes; 3. a link opens a product ------------------------------------------------


def test_link_opens_a_product_with_its_name_and_neighbours(page, served, shots):
    base, shop, _, products = served
    pid = shop.keys[5]
    open_page(page, base, f"?model=shop&item={pid}")
    wait_selected(page, pid)
    name = products[pid]["name"]
    assert page.inner_text("#neighbours-title") == f"Neighbours of {name}"
    assert page.input_value("#search") == name
    details = page.inner_text("#item-details")
    assert pid in details and f"department: {products[pid]['department']}" in details
    want = shop.similar(pid, k=10)
    assert keys_shown(page, "#neighbours li") == want.keys
    # neighbours are shown by name, their ids beside them
    texts = page.eval_on_selector_all("#neighbours li button.item", "els => els.map(e => e.textContent)")
    assert texts == [f"{products[k]['name']} {k}" for k in want.keys]
    # the score is explained beside the list
    assert "cosine similarity" in page.inner_text("#neighbours-explain")
    # selected and neighbours are marked on the map
    marks = page.evaluate("() => state.marks.map(m => [m.key, m.shape])")
    assert [pid, "selected"] in marks and all([k, "neighbour"] in marks for k in want.keys)
    save(page, shots, "explorer-shop-pca.png")


def test_typing_a_name_finds_it(page, served):
    base, shop, _, products = served
    pid = shop.keys[17]
    name = products[pid]["name"]
    open_page(page, base, "?model=shop")
    page.fill("#search", name)
    page.wait_for_selector(f"#suggest li[data-item='{pid}']", timeout=WAIT)
    assert keys_shown(page, "#suggest li")[0] == pid
    assert page.get_attribute("#search", "aria-expanded") == "true"
    page.keyboard.press("ArrowDown")
    assert page.get_attribute("#search", "aria-activedescendant") == "option-0"
    assert page.get_attribute("#option-0", "aria-selected") == "true"
    page.keyboard.press("Enter")
    wait_selected(page, pid)
    assert page.inner_text("#neighbours-title") == f"Neighbours of {name}"
    assert page.get_attribute("#search", "aria-expanded") == "false"


# ---- 2. projections, colour by any column, labels, basket marks -----------------------------------------


def test_colour_by_any_column_and_a_second_projection(page, served, shots):
    base, shop, _, products = served
    open_page(page, base, "?model=shop")
    options = page.eval_on_selector_all("#colour option", "els => els.map(e => e.value)")
    assert options == ["department", "aisle", "popularity", "complement"]  # every column with groups
    assert page.input_value("#colour") == "department"
    legend = page.inner_text("#legend")
    assert all(d in legend for d in {p["department"] for p in products.values()})
    page.select_option("#colour", "aisle")
    page.wait_for_function("() => location.search.includes('colour=aisle')", timeout=WAIT)
    legend = page.inner_text("#legend")
    assert all(a in legend for a in {products[k]["aisle"] for k in shop.keys[:500]})

    assert page.eval_on_selector_all("#projection option", "els => els.map(e => e.value)") == ["pca", "tsne"]
    pca_x = page.evaluate("() => state.map.x")
    page.select_option("#projection", "tsne")
    page.wait_for_function(
        "() => state.projection === 'tsne' && state.map.projection === 'tsne'", timeout=WAIT
    )
    assert page.evaluate("() => state.map.x") != pca_x
    assert f"t-SNE: 500 of {len(shop)} items" in page.inner_text("#map-info")
    assert "view=tsne" in page.evaluate("location.search")

    # the basket is marked on the map; labels never overlap
    pid = shop.keys[0]
    page.fill("#search", pid)
    page.keyboard.press("Enter")
    wait_selected(page, pid)
    first = keys_shown(page, "#neighbours li")[0]
    page.click(f"#neighbours li[data-item='{first}'] button.add")
    page.wait_for_function("(k) => state.marks.some(m => m.key === k && m.shape === 'square')", arg=first)
    boxes = page.evaluate("() => state.labelBoxes")
    assert len(boxes) > 10 and no_overlap(boxes)
    assert boxes[0]["key"] == pid  # the selected item is named first
    save(page, shots, "explorer-shop-tsne.png")


def test_recommendations_have_a_heading_and_their_score_explained(page, served):
    base, shop, _, products = served
    a, b = shop.keys[1], shop.keys[2]
    open_page(page, base, f"?model=shop&basket={a}&basket={b}")
    want = shop.recommend([a, b], k=10).keys
    page.wait_for_function(
        "(want) => JSON.stringify(state.recommendations) === want",
        arg=json.dumps(want, separators=(",", ":")),
        timeout=WAIT,
    )
    assert keys_shown(page, "#basket li") == [a, b]
    assert page.is_visible("#recommendations-title")
    assert page.inner_text("#recommendations-title") == "Recommended with the basket"
    explain = page.inner_text("#recommendations-explain")
    meaning = {"itemitem": "item-item model", "affinity": "log-odds", "cosine": "cosine"}
    assert meaning[shop.completion] in explain
    assert products[a]["name"] in page.inner_text("#basket")


def test_the_demo_names_every_point(page, served, shots):
    base, _, demo, _ = served
    open_page(page, base, "?model=demo")
    boxes = page.evaluate("() => state.labelBoxes")
    assert sorted(b["key"] for b in boxes) == sorted(demo.keys)  # all 15, before any hover
    assert no_overlap(boxes)
    assert "outdoor" in page.inner_text("#legend")
    page.fill("#search", "tent")
    page.keyboard.press("Enter")
    wait_selected(page, "tent")
    boxes = page.evaluate("() => state.labelBoxes")
    assert boxes[0]["key"] == "tent" and no_overlap(boxes)
    save(page, shots, "explorer-demo.png")


# ---- 3. state in the URL: links, Back and Forward, switching model ----------------------------------------


def test_back_and_forward_and_a_model_switch_clears_the_old_model(page, served):
    base, shop, demo, products = served
    a = shop.keys[3]
    open_page(page, base, f"?model=shop&item={a}")
    wait_selected(page, a)
    b = keys_shown(page, "#neighbours li")[0]
    page.click(f"#neighbours li[data-item='{b}'] button.item")
    wait_selected(page, b)
    assert f"item={b}" in page.evaluate("location.search")
    page.click(f"#neighbours li[data-item='{keys_shown(page, '#neighbours li')[0]}'] button.add")
    page.wait_for_function("() => location.search.includes('basket=')")
    page.go_back()
    page.wait_for_function("() => !location.search.includes('basket=') && state.basket.length === 0")
    page.go_back()
    wait_selected(page, a)
    assert page.inner_text("#neighbours-title") == f"Neighbours of {products[a]['name']}"
    page.go_forward()
    wait_selected(page, b)

    # an unknown item leaves a message; switching model clears it with everything else of the old model
    page.fill("#search", "no-such-product")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#message').textContent.includes('unknown')")
    assert page.evaluate("() => state.selected") == b and f"item={b}" in page.evaluate("location.search")
    page.select_option("#model", "demo")
    page.wait_for_function(
        "() => state.model === 'demo' && document.body.dataset.ready === '1'", timeout=WAIT
    )
    assert page.inner_text("#neighbours-title") == "Neighbours"
    assert page.inner_text("#message") == "" and keys_shown(page, "#neighbours li") == []
    assert page.input_value("#search") == "" and keys_shown(page, "#basket li") == []
    assert page.evaluate("location.search") == "?model=demo"
    assert page.is_hidden("#customers-panel")  # the demo has no customers
    page.fill("#search", "kettle")
    page.keyboard.press("Enter")
    wait_selected(page, "kettle")
    assert keys_shown(page, "#neighbours li") == demo.similar("kettle", k=10).keys
    page.go_back()  # the demo as it opened
    page.wait_for_function("() => state.model === 'demo' && state.selected === null", timeout=WAIT)
    page.go_back()  # back to the shop, on the item it showed
    page.wait_for_function("() => state.model === 'shop'", timeout=WAIT)
    wait_selected(page, b)
    assert page.inner_text("#neighbours-title") == f"Neighbours of {products[b]['name']}"


# ---- 4. analogies and customers -------------------------------------------------------------------------


def test_analogy_and_customer_panels(page, served, shots):
    base, shop, _, products = served
    a, b, c = shop.keys[0], shop.keys[1], shop.keys[2]
    open_page(page, base, "?model=shop")
    page.fill("#analogy-a", products[a]["name"])  # by name
    page.fill("#analogy-b", b)  # or by key
    page.fill("#analogy-c", c)
    page.click("#analogy-form button")
    want = shop.analogy(a, b, c, k=5).keys
    page.wait_for_function(
        "(want) => JSON.stringify([...document.querySelectorAll('#analogy-results li')]"
        ".map(e => e.dataset.item)) === want",
        arg=json.dumps(want, separators=(",", ":")),
        timeout=WAIT,
    )
    assert page.is_visible("#customers-panel")
    customer = shop.customers.keys[0]
    page.fill("#customer", customer)
    page.click("#similar-customers-form button")
    want = retail.similar_customers(shop, customer, 10).keys
    page.wait_for_function(
        "(n) => document.querySelectorAll('#similar-customers li').length === n", arg=len(want), timeout=WAIT
    )
    assert keys_shown(page, "#similar-customers li") == want
    seeds = shop.customers.keys[1:4]
    page.fill("#seeds", ", ".join(seeds))
    page.click("#lookalike-form button")
    want = retail.lookalike(shop, seeds, 10).keys
    page.wait_for_function(
        "(n) => document.querySelectorAll('#lookalike li').length === n", arg=len(want), timeout=WAIT
    )
    assert keys_shown(page, "#lookalike li") == want and not set(seeds) & set(want)
    panel = page.inner_text("#customers-panel")
    assert "cosine similarity of the two customers' vectors" in panel and "mean of the seeds'" in panel
    assert "b − a + c" in page.inner_text("#left")
    page.eval_on_selector("#lookalike", "e => e.scrollIntoView({block: 'end'})")
    save(page, shots, "explorer-panels.png")


# ---- 5. a 400 px screen, the keyboard alone, axe-core ---------------------------------------------------


def test_narrow_screen_keyboard_only_and_axe(browser, served, shots):
    base, shop, _, products = served
    page = browser.new_page(viewport={"width": 400, "height": 800})
    try:
        pid = shop.keys[8]
        open_page(page, base, f"?model=shop&item={pid}&basket={shop.keys[9]}")
        wait_selected(page, pid)
        assert page.evaluate("document.documentElement.scrollWidth") <= 400  # no sideways scrolling
        canvas = page.eval_on_selector("#map", "c => c.getBoundingClientRect().toJSON()")
        assert canvas["width"] >= 360 and canvas["height"] >= 300  # a map, not a strip
        page.eval_on_selector("#reset", "b => b.scrollIntoView()")
        reset = page.eval_on_selector("#reset", "b => b.getBoundingClientRect().toJSON()")
        assert 0 <= reset["left"] and reset["right"] <= 400
        # the "+" buttons are at least 24 x 24 px and say what they do
        add = page.eval_on_selector("#neighbours li button.add", "b => b.getBoundingClientRect().toJSON()")
        assert add["width"] >= 24 and add["height"] >= 24
        first = keys_shown(page, "#neighbours li")[0]
        assert page.get_attribute("#neighbours li button.add", "aria-label") == (
            f"add {products[first]['name']} to the basket"
        )
        save(page, shots, "explorer-400px.png", full_page=True)
        assert axe_serious(page) == []

        # the keyboard alone: search, pick, move to a neighbour, open it, add one to the basket
        page.focus("#search")
        page.keyboard.press("Control+A")  # the field shows the selected item's name: type over it
        other = shop.keys[30]
        page.keyboard.type(products[other]["name"])
        page.wait_for_selector(f"#suggest li[data-item='{other}']", timeout=WAIT)
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
        wait_selected(page, other)
        for _ in range(40):  # Tab until the first neighbour's name has the focus
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.classList.contains('item')"):
                break
        target = page.evaluate("document.activeElement.closest('li').dataset.item")
        assert target == keys_shown(page, "#neighbours li")[0]
        page.keyboard.press("Enter")
        wait_selected(page, target)
        page.focus("#neighbours li button.add")
        added = page.evaluate("document.activeElement.closest('li').dataset.item")
        page.keyboard.press("Enter")
        page.wait_for_function("(k) => state.basket.includes(k)", arg=added)
        # the map by keyboard: arrows pan, + zooms, 0 resets
        page.focus("#map")
        before = page.evaluate("() => ({...state.view})")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("+")
        after = page.evaluate("() => ({...state.view})")
        assert after["cx"] > before["cx"] and after["scale"] > before["scale"]
        page.keyboard.press("0")
        assert page.evaluate("() => state.view.scale") == pytest.approx(before["scale"])
    finally:
        page.close()


def test_axe_finds_nothing_serious_on_the_wide_page(page, served):
    base, shop, _, _ = served
    open_page(page, base, f"?model=shop&item={shop.keys[4]}&basket={shop.keys[5]}")
    wait_selected(page, shop.keys[4])
    page.fill("#search", "a")
    page.wait_for_selector("#suggest li", timeout=WAIT)  # the open suggestion list too
    assert axe_serious(page) == []
