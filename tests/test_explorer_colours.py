"""The explorer colours by any column a user would pick, in a real browser: 30 departments each in a colour
of its own with a legend entry, an id as a category (never a gradient), and a column of many values as its
most common values and "other".

Playwright drives Debian's chromium (``apt-get install chromium``; .ci/run does it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("httpx")
if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does it)", allow_module_level=True)

from _live import live_server  # noqa: E402
from test_browser import ARGS  # noqa: E402
from test_service import planted  # noqa: E402

WAIT = 60_000  # ms: an upper bound for a slow shared machine, never a pause


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """300 products in 30 groups; products.csv as the Complete Journey's reads: a name, the department
    (30 values), a brand (2), a manufacturer id (120 whole numbers)."""
    d = tmp_path_factory.mktemp("colours")
    emb, labels = planted(0, n_groups=30, group_size=10)
    emb.save(d / "cat")
    rows = ['"product_id","name","department","brand","manufacturer_id"']
    for n, k in enumerate(sorted(emb.keys)):
        g = int(k[1 : k.index("_")])
        rows.append(
            f'"{k}","thing {k}","DEPT {g:02d}","{"National" if n % 3 else "Private"}",{1000 + n % 120}'
        )
    (d / "products.csv").write_text("\n".join(rows) + "\n")
    with live_server([f"cat={d / 'cat'}", "--item-attrs", f"cat={d / 'products.csv'}"]) as (base, _):
        yield base


@pytest.fixture
def page(served):
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        yield page
        browser.close()
    assert errors == []


def legend_values(page) -> list[str]:
    return page.eval_on_selector_all("#legend button.filter", "els => els.map(e => e.dataset.value)")


def test_thirty_departments_each_have_a_colour_and_a_legend_entry(page, served):
    page.goto(served + "/?model=cat")
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT)
    assert page.input_value("#colour") == "department"
    assert legend_values(page) == [f"DEPT {g:02d}" for g in range(30)]
    colours = page.eval_on_selector_all(
        "#legend button.filter .swatch", "els => els.map(e => getComputedStyle(e).backgroundColor)"
    )
    assert len(set(colours)) == 30  # no colour used twice
    assert len(set(page.evaluate("() => state.map.css"))) == 30


def test_an_id_is_a_category_its_rarest_values_other(page, served):
    page.goto(served + "/?model=cat&colour=manufacturer_id")
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT)
    assert page.input_value("#colour") == "manufacturer_id"
    assert "by rank" not in page.inner_text("#legend")  # no gradient: an id is no quantity
    values = legend_values(page)
    assert len(values) == 40 and values[-1] == "other (81 values)"
    assert values[:3] == ["1000", "1001", "1002"]
    swatches = page.eval_on_selector_all(
        "#legend button.filter .swatch", "els => els.map(e => e.style.background)"
    )
    assert swatches[-1] == "rgb(176, 176, 176)"  # "other" in grey, after the values
    assert len(set(swatches[:-1])) == 39
