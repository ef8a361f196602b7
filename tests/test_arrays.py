"""likewise._arrays: the same answers as NumPy, by a faster road."""

from __future__ import annotations

import numpy as np
import pytest

from likewise._arrays import unique


@pytest.mark.parametrize(
    "values",
    [
        np.array([], dtype=np.int64),
        np.array([7], dtype=np.int64),
        np.array([3, 1, 3, 2, 1, -5], dtype=np.int64),
        np.random.default_rng(0).integers(0, 1000, size=5000).astype(np.int32),
        np.random.default_rng(1).integers(0, 2**63, size=3000, dtype=np.uint64),
        np.array([True, False, True]),
        np.arange(12, dtype=np.int16).reshape(3, 4) % 5,
        np.array([1.5, np.nan, 1.5, np.nan, -0.0, 0.0]),
        np.array(["b", "a", "b"]),
    ],
)
def test_unique_is_numpys_unique(values: np.ndarray) -> None:
    got, want = unique(values), np.unique(values)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
