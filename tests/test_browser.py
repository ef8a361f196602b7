"""The explorer page in headless Chromium (Debian's ``chromium``, driven by Playwright) against a real server.

The test searches with autocomplete, checks the neighbours shown against the library, clicks a point of
the map, builds a basket and saves a screenshot. Set ``LIKEWISE_SCREENSHOT=docs/images/explorer.png`` to
also write the screenshot there (that is how the README's picture is refreshed).
"""

from __future__ import annotations

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
from test_service import planted  # noqa: E402

from likewise import Embeddings  # noqa: E402

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser")
    emb, labels = planted(3, n_groups=8, group_size=12)
    emb.save(d / "shop")
    (d / "labels.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in labels.items()))
    args = [f"shop={d / 'shop'}", "--labels", str(d / "labels.tsv"), "--map-sample", "80"]
    with live_server(args) as (base, _):
        yield base, Embeddings.load(d / "shop")


def shown(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.item)")


def test_explorer_search_click_basket_screenshot(served, tmp_path):
    base, emb = served
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            external: list[str] = []
            page.on("request", lambda r: None if r.url.startswith(base) else external.append(r.url))
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base + "/")
            page.wait_for_selector("body[data-ready='1']", timeout=20_000)
            assert "96 items" in page.inner_text("#model-info")
            assert "80 of 96 items (most frequent)" in page.inner_text("#map-info")

            # search with autocomplete: suggestions start with the prefix, most frequent first
            page.fill("#search", "g3_i1")
            page.wait_for_selector("#suggest li")
            sugg = shown(page, "#suggest li")
            expected_sugg = [k for k in emb.keys if k.startswith("g3_i1")][:10]
            assert sugg == expected_sugg
            page.click(f"#suggest li[data-item='{sugg[0]}']")
            page.wait_for_function(
                f"document.querySelector('#neighbours-title').textContent.includes('{sugg[0]}')"
            )
            page.wait_for_selector("#neighbours li")
            assert shown(page, "#neighbours li") == emb.similar(sugg[0], k=10).keys
            scores = page.eval_on_selector_all("#neighbours li .score", "els => els.map(e => +e.textContent)")
            assert scores == [round(float(s), 3) for s in emb.similar(sugg[0], k=10).scores]

            # an item outside the map's sample is placed on the map's axes by the server, and marked
            rare = emb.keys[90]
            page.fill("#search", rare)
            page.keyboard.press("Enter")
            page.wait_for_function("(k) => state.selected === k && state.extra.has(k)", arg=rare)
            assert shown(page, "#neighbours li") == emb.similar(rare, k=10).keys

            # an unknown item: the page says so and offers suggestions
            page.fill("#search", "g3_zz")
            page.keyboard.press("Enter")
            page.wait_for_selector("#message a.suggestion")
            assert "unknown item 'g3_zz'" in page.inner_text("#message")

            # click a point of the map: the neighbours of the item under the pointer are shown
            target = emb.keys[40]
            box = page.eval_on_selector(
                "#map", "c => { const r = c.getBoundingClientRect(); return [r.x, r.y]; }"
            )
            sx, sy = page.evaluate(
                f"() => {{ const i = state.map.index.get('{target}'); "
                "return toScreen(state.map.x[i], state.map.y[i]); }"
            )
            page.mouse.move(box[0] + sx, box[1] + sy)
            page.wait_for_selector("#tip:not([hidden])")
            # (the unknown item left the rare item selected, which is not on the map)
            page.mouse.click(box[0] + sx, box[1] + sy)
            page.wait_for_function(
                "(prev) => state.selected && state.selected !== prev && state.neighbours.length === 10",
                arg=rare,
            )
            picked = page.evaluate("() => state.selected")
            px, py = page.evaluate(
                f"() => {{ const i = state.map.index.get('{picked}'); "
                "return toScreen(state.map.x[i], state.map.y[i]); }"
            )
            assert (px - sx) ** 2 + (py - sy) ** 2 <= 64  # the item under the pointer (8 px)
            page.wait_for_function(
                "(k) => document.querySelector('#neighbours-title').textContent.includes(k)", arg=picked
            )
            assert shown(page, "#neighbours li") == emb.similar(picked, k=10).keys
            assert picked.split("_")[0] == shown(page, "#neighbours li")[0].split("_")[0]  # planted group

            # the basket builder: add two neighbours, recommendations are the library's
            first, second = shown(page, "#neighbours li")[:2]
            page.click(f"#neighbours li[data-item='{first}'] button.add")
            page.click(f"#neighbours li[data-item='{second}'] button.add")
            expected = emb.recommend([first, second], k=10).keys
            page.wait_for_function(
                "(want) => JSON.stringify([...document.querySelectorAll('#recommendations li')]"
                ".map(e => e.dataset.item)) === want",
                arg=__import__("json").dumps(expected, separators=(",", ":")),
            )
            assert shown(page, "#basket li") == [first, second]

            # zoom with the wheel changes the view; the legend shows the labels
            before = page.evaluate("() => state.view.scale")
            page.mouse.move(box[0] + 300, box[1] + 300)
            page.mouse.wheel(0, -400)
            page.wait_for_function("(s) => state.view.scale > s", arg=before)
            assert "g0" in page.inner_text("#legend")

            page.click("#reset")
            page.wait_for_function("(s) => Math.abs(state.view.scale - s) < 1e-9", arg=before)
            shot = tmp_path / "explorer.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
            if os.environ.get("LIKEWISE_SCREENSHOT"):
                shutil.copyfile(shot, os.environ["LIKEWISE_SCREENSHOT"])
            assert errors == [] and external == []
        finally:
            browser.close()


@pytest.fixture(scope="module")
def typed_served(tmp_path_factory):
    """A typed space (products and campaigns in planted groups, a hidden attribute token, one placed
    product), served with no labels file: the map colours by type."""
    import numpy as np

    from likewise import Vocab
    from likewise.space.itemtypes import ItemTypes

    d = tmp_path_factory.mktemp("browser-typed")
    base, _ = planted(5, n_groups=4, group_size=10)
    kinds = ["campaign" if int(k.split("_i")[1]) % 3 == 0 else "product" for k in base.keys]
    keys = [f"{t}:{k}" for t, k in zip(kinds, base.keys, strict=True)]
    kinds[-1], keys[-1] = "attr", "attr:category=g"
    keys[-2] = "product:launch-day"
    kinds[-2] = "product"
    emb = Embeddings(
        np.asarray(base.vectors),
        Vocab(keys, base.counts),
        meta={"placed": {"product:launch-day": {"tokens": ["attr:category=g"], "prior_count": 1}}},
    )
    emb.attach_types(ItemTypes.from_types(kinds, hidden=["attr"]))
    emb.save(d / "typed")
    with live_server([f"typed={d / 'typed'}", "--map-sample", "30"]) as (base_url, _):
        yield base_url, Embeddings.load(d / "typed")


def test_explorer_filters_by_type_and_marks_placed_items(typed_served):
    base, emb = typed_served
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base + "/")
            page.wait_for_selector("body[data-ready='1']", timeout=20_000)
            assert "1 placed" in page.inner_text("#model-info")
            # the legend colours by type (no labels file) and names the placed marker
            legend = page.inner_text("#legend")
            assert (
                "campaign" in legend and "product" in legend and "placed" in legend and "attr" not in legend
            )
            assert page.is_visible("#type-filter")
            options = page.eval_on_selector_all("#type-filter option", "els => els.map(e => e.value)")
            assert options == ["", *emb.types.names]
            # the map holds the visible types only, plus the placed product (beyond the sample)
            on_map = page.evaluate("() => state.map.items")
            assert "attr:category=g" not in on_map and "product:launch-day" in on_map
            assert page.evaluate("() => state.map.placed") == ["product:launch-day"]

            item = next(k for k in emb.keys if k.startswith("product:"))
            page.fill("#search", item)
            page.keyboard.press("Enter")
            page.wait_for_function("(k) => state.selected === k", arg=item)
            assert shown(page, "#neighbours li") == emb.similar(item, k=10).keys
            page.select_option("#type-filter", "campaign")
            want = emb.similar(item, k=10, types="campaign").keys
            page.wait_for_function(
                "(want) => JSON.stringify(state.neighbours) === want",
                arg=__import__("json").dumps(want, separators=(",", ":")),
            )
            assert all(k.startswith("campaign:") for k in shown(page, "#neighbours li"))

            # hovering the placed product says so
            box = page.eval_on_selector(
                "#map", "c => { const r = c.getBoundingClientRect(); return [r.x, r.y]; }"
            )
            sx, sy = page.evaluate(
                "() => { const i = state.map.index.get('product:launch-day'); "
                "return toScreen(state.map.x[i], state.map.y[i]); }"
            )
            page.mouse.move(box[0] + sx, box[1] + sy)
            page.wait_for_selector("#tip:not([hidden])")
            assert page.inner_text("#tip").endswith("· product · placed")
            assert errors == []
        finally:
            browser.close()
