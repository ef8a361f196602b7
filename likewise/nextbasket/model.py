"""The fitted next-basket model as a typed record that checks itself.

A space trained from an order log with a customer column keeps, in its customer table, how
:func:`likewise.retail.next_basket` ranks a customer's candidates: a logistic model over the named
features of :mod:`likewise.nextbasket.features` (``rule="fitted"``), or the customer's own most-bought
list (``rule="own"``: too few customers to fit, or the fitted weights did no better on the held-out
baskets). :class:`NextBasketModel` is that record. The manifest keeps it as JSON
(``customers.config.next_basket``, the form :meth:`NextBasketModel.to_dict` writes and
:meth:`NextBasketModel.from_dict` reads), and a saved file has no checksum over it, so reading checks
every part that steers an answer (one line naming the part, the value and what is expected), and
:meth:`NextBasketModel.check` refuses weights fitted on other features than the code computes, naming
the command that retrains them.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..errors import InputError, ModelMismatchError

__all__ = [
    "MAX_NEIGHBOURS",
    "RETRAIN",
    "NextBasketModel",
    "retrain_command",
]

#: Most similar customers a saved next-basket record may ask for (a query reads each one's purchases).
MAX_NEIGHBOURS = 10_000
# The largest magnitude of a saved mean, scale or weight: the features are shares, logs and 0/1 bins, so
# a fit never comes near it, while an edited 1e12 gave scores of that size.
_MOST = 1e6
#: The retrain command when the space does not record how its log was read.
RETRAIN = "likewise train LOG --basket-col ... --user-col ..."
# meta["retail"]'s read options and the `likewise train` options that set them, in the command's order
_OPTIONS = (
    ("basket_col", "--basket-col"),
    ("item_col", "--item-col"),
    ("user_col", "--user-col"),
    ("time_col", "--time-col"),
    ("quantity_col", "--quantity-col"),
    ("type_col", "--type-col"),
    ("type_map", "--type-map"),
    ("type_cols", "--type-cols"),
    ("sessions", "--sessions"),
    ("basket_scope", "--basket-scope"),
)


def retrain_command(retail: Any = None) -> str:
    """The ``likewise train`` command that retrains a space, from the read options it records
    (``emb.meta["retail"]``: ``basket_col``, ``item_col``, ``user_col``, ...); :data:`RETRAIN` when it
    records none. ``LOG`` and ``MODEL`` stand for the order log and the output folder."""
    if not isinstance(retail, Mapping) or not retail.get("basket_col") or not retail.get("user_col"):
        return RETRAIN
    words = ["likewise", "train", "LOG"]
    for key, option in _OPTIONS:
        value = retail.get(key)
        if key == "item_col" and retail.get("type_cols"):
            continue  # a log with an item column per type: its item_col reads "(a, b)", not a column
        if isinstance(value, Mapping):
            value = ",".join(f"{k}={v}" for k, v in value.items())
        if isinstance(value, str) and value:
            words += [option, shlex.quote(value)]
    return " ".join([*words, "-o", "MODEL"])


@dataclass(frozen=True)
class NextBasketModel:
    """How a space ranks a customer's next basket (see the module docstring).

    Attributes
    ----------
    rule : {"fitted", "own"}
        ``"fitted"``: the logistic model's log-odds; ``"own"``: the customer's own most-bought list.
    neighbours : int
        Similar customers whose purchases are evidence (1 to :data:`MAX_NEIGHBOURS`).
    features : tuple of str
        The feature names the weights are for, in their order (empty when there are no weights).
    mean, scale, weights : tuple of float, or None
        Per feature, then the bias (``len(features) + 1`` each): a candidate's score is
        ``((x, 1) - mean) / scale @ weights``. None when the own rule was chosen without a fit.
    validation : dict or None
        The held-out recall@10 of the model beside that of the customer's own most-bought list
        (``customers``, ``recall_at_10``, ``recall_at_10_own_most_bought``); None without a fit.
    reason : str or None
        Why the own rule answers (None for a fitted model).
    """

    rule: Literal["fitted", "own"]
    neighbours: int
    features: tuple[str, ...] = ()
    mean: tuple[float, ...] | None = None
    scale: tuple[float, ...] | None = None
    weights: tuple[float, ...] | None = None
    validation: dict[str, Any] | None = None
    reason: str | None = None

    @classmethod
    def own(cls, reason: str, neighbours: int) -> NextBasketModel:
        """The model when there are no weights to fit: the customer's own most-bought list."""
        return cls(rule="own", neighbours=neighbours, reason=reason)

    @classmethod
    def from_dict(cls, record: Any) -> NextBasketModel:
        """Read the saved record (``customers.config.next_basket`` of a manifest, as :meth:`to_dict`
        writes it and every earlier version wrote it), checking every part that steers an answer, with
        its type and range.

        Raises
        ------
        InputError
            One line naming the part, the value found and what is expected.
        """

        def bad(part: str, value: Any, want: str) -> InputError:
            shown = repr(value)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            return InputError(f"the next-basket record's {part!r} is {shown}, expected {want}")

        if not isinstance(record, dict):
            raise bad("next_basket", record, "an object")
        rule = record.get("rule")
        if rule not in (None, "own"):
            raise bad("rule", rule, "'own' or absent (the fitted weights)")
        k = record.get("neighbours")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_NEIGHBOURS:
            raise bad("neighbours", k, f"a whole number from 1 to {MAX_NEIGHBOURS:,}")
        validation = record.get("validation")
        if validation is not None and not isinstance(validation, dict):
            raise bad("validation", validation, "an object or null (the held-out recall)")
        reason = record.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise bad("reason", reason, "a text or null (why the own list answers)")
        common = {"neighbours": k, "validation": validation, "reason": reason}
        if rule == "own" and "weights" not in record:
            return cls(rule="own", **common)
        features = record.get("features")
        if not isinstance(features, list) or not features or not all(isinstance(f, str) for f in features):
            raise bad("features", features, "a list of feature names")
        parts = {}
        for part in ("mean", "scale", "weights"):
            values = record.get(part)
            if (
                not isinstance(values, list)
                or len(values) != len(features) + 1
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
                or not all(math.isfinite(v) and abs(v) <= _MOST for v in values)
            ):
                want = f"{len(features) + 1} numbers of at most {_MOST:g} (one per feature, then the bias)"
                raise bad(part, values, want)
            parts[part] = tuple(float(v) for v in values)
        if not all(v > 0 for v in parts["scale"]):
            raise bad("scale", record["scale"], "numbers > 0 (each feature's spread)")
        return cls(rule="own" if rule == "own" else "fitted", features=tuple(features), **parts, **common)

    def to_dict(self) -> dict[str, Any]:
        """The record as the manifest keeps it (the JSON form :meth:`from_dict` reads)."""
        if self.weights is None:
            out: dict[str, Any] = {"rule": "own"}
            if self.reason is not None:
                out["reason"] = self.reason
            return {**out, "neighbours": self.neighbours, "validation": self.validation}
        out = {
            "features": list(self.features),
            "mean": list(self.mean or ()),
            "scale": list(self.scale or ()),
            "weights": list(self.weights),
            "neighbours": self.neighbours,
            "validation": self.validation,
        }
        if self.rule == "own":  # fitted, but the own list did better on the held-out baskets
            out["rule"] = "own"
            if self.reason is not None:
                out["reason"] = self.reason
        return out

    def check(self, features: Sequence[str], retrain: str = RETRAIN) -> NextBasketModel:
        """This model, when its weights are for ``features`` (the names the code computes, in order).

        Parameters
        ----------
        features : sequence of str
            :data:`likewise.nextbasket.features.FEATURES`.
        retrain : str
            The command that retrains the space (:func:`retrain_command`), named in the error.

        Raises
        ------
        ModelMismatchError
            One line: what differs between the fitted features and ``features``, and ``retrain``.
        """
        if self.weights is None or tuple(self.features) == tuple(features):
            return self
        raise ModelMismatchError(
            f"the next-basket weights were fitted on other features than this version computes "
            f"({_difference(self.features, tuple(features))}): retrain from the order log ({retrain})"
        )

    def log_odds(self, x: np.ndarray, block: int) -> np.ndarray:
        """The fitted model's score of each row of features ``x`` (float64 [n, len(features)]), computed
        ``block`` rows at a time (three copies of a large ``x`` were 0.9 GiB)."""
        mean, scale, w = (np.asarray(v, dtype=np.float64) for v in (self.mean, self.scale, self.weights))
        out = np.empty(len(x), dtype=np.float64)
        for a in range(0, len(x), block):
            blk = x[a : a + block]
            z = np.hstack([blk, np.ones((len(blk), 1))])  # the bias's column (its mean 0 and scale 1)
            out[a : a + len(blk)] = ((z - mean) / scale) @ w
        return out


def _difference(fitted: tuple[str, ...], computed: tuple[str, ...]) -> str:
    """What differs between two feature lists, in a few words."""

    def names(found: list[str]) -> str:
        return ", ".join(map(repr, found[:3])) + (f" and {len(found) - 3} more" if len(found) > 3 else "")

    new = [f for f in computed if f not in fitted]
    gone = [f for f in fitted if f not in computed]
    said = [f"{names(new)} {'is' if len(new) == 1 else 'are'} new"] if new else []
    said += [f"{names(gone)} {'is' if len(gone) == 1 else 'are'} no longer computed"] if gone else []
    if not said:
        said = ["the same names in another order or repeated"]
    return f"fitted on {len(fitted)} features, this version computes {len(computed)}: " + "; ".join(said)
