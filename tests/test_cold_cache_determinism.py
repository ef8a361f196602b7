"""Deterministic training gives the same bytes whatever the state of numba's compile cache (issue 29),
and a kernel that compiles says so.

The cause was numba's linking: a compiled function that another one calls was compiled on its own and
also copied into its caller, where it was optimised again; both copies are one symbol, and a process
runs whichever it loaded first. A cold process compiled (so loaded) the callee first, a warm one loaded
only the caller's copy from the cache, and under fastmath the two rounded differently. The kernels now
compile each driver as one self-contained function (likewise/kernels/_common.py, "Compiled steps");
the last test checks that rule in the source, the others the vectors.

Each run trains in a child process with its own ``NUMBA_CACHE_DIR`` (the repository's own cache never
takes part), from the child of tests/test_checkpoints.py. Two runs compile from nothing, so this module
takes about a minute, all of it compiling.
"""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_checkpoints import CHILD, TESTS

import likewise.training.train_numba
from likewise.kernels.batched import SPECIALISE_MIN_DIM
from likewise.training.train_numba import COMPILING, compile_notice

# A driver compiled for a literal width (dim >= SPECIALISE_MIN_DIM), at a width and length of training
# where the cold and the warm vectors of the original code differed (by up to 5e-5).
DIM = 48
CONFIG = {
    "mode": "basket",
    "dim": DIM,
    "epochs": 12,
    "min_count": 1,
    "seed": 5,
    "deterministic": True,
    "backend": "cpu",
}
NEVER = [10**6, 0]  # a kill position no run reaches
KERNELS = Path(likewise.__file__).parent / "kernels"


def _child(tmp: Path, cache: Path, name: str, **args: object) -> tuple[subprocess.CompletedProcess, Path]:
    """Train CONFIG in a child process whose compile cache is ``cache``; the vectors go to ``name.npy``."""
    out = tmp / f"{name}.npy"
    args = {**CONFIG, "kill": NEVER, "out": str(out), **args}
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), LIKEWISE_CACHE=str(tmp / "corpora"))
    child = subprocess.run(
        [sys.executable, "-c", CHILD.format(tests=str(TESTS)), json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return child, out


@pytest.fixture(scope="module")
def cold_then_warm(tmp_path_factory) -> dict[str, object]:
    """The same training with a fresh compile cache, then again with the cache it filled."""
    tmp = tmp_path_factory.mktemp("cold-cache")
    cache = tmp / "numba"
    cache.mkdir()
    cold, cold_out = _child(tmp, cache, "cold", progress=True)
    assert cold.returncode == 0, cold.stderr[-3000:]
    warm, warm_out = _child(tmp, cache, "warm", progress=True)
    assert warm.returncode == 0, warm.stderr[-3000:]
    return {
        "cold": np.load(cold_out),
        "warm": np.load(warm_out),
        "cold_err": cold.stderr,
        "warm_err": warm.stderr,
    }


def test_a_cold_and_a_warm_compile_cache_train_the_same_bytes(cold_then_warm):
    assert COMPILING in cold_then_warm["cold_err"]  # the first run did compile: the cache was cold
    cold, warm = cold_then_warm["cold"], cold_then_warm["warm"]
    assert cold.shape[1] == DIM >= SPECIALISE_MIN_DIM
    assert cold.tobytes() == warm.tobytes()


def test_compiling_is_said_with_its_seconds_on_a_cold_cache_only(cold_then_warm):
    said = re.findall(re.escape(COMPILING) + r" \((\d+\.\d) s\)", cold_then_warm["cold_err"])
    assert said and float(said[0]) > 0
    assert COMPILING not in cold_then_warm["warm_err"]


def test_a_cold_run_killed_after_its_first_checkpoint_resumes_to_the_same_bytes(tmp_path, cold_then_warm):
    """SIGKILL as soon as the first checkpoint (after the first block) is on disk, in a process that
    compiled its kernel from nothing; resumed, the vectors are those of the runs that never stopped.
    Without progress (``--quiet``) the compile says nothing."""
    cache = tmp_path / "numba"
    cache.mkdir()
    ckpt = tmp_path / "ckpt"
    run = {"checkpoint_dir": str(ckpt), "checkpoint_every": 1e-9, "progress": False}
    killed, _ = _child(tmp_path, cache, "killed", **run, kill=[0, 1])
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert COMPILING not in killed.stderr
    state = json.loads((ckpt / "checkpoint" / "manifest.json").read_text())["state"]
    assert (state["epoch"], state["step"]) >= (0, 1) and state["epoch"] < state["epochs"]

    resumed, out = _child(tmp_path, cache, "resumed", **run, resume=True)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert np.load(out).tobytes() == cold_then_warm["cold"].tobytes()


def test_compile_notice_speaks_only_when_numba_compiles(capsys):
    from numba import njit

    @njit
    def fresh(x):  # never compiled before, and not cached: calling it compiles
        return x + 1

    with compile_notice(True):
        fresh(1)
    err = capsys.readouterr().err
    assert f"{COMPILING} ..." in err
    assert re.search(re.escape(COMPILING) + r" \(\d+\.\d s\)", err)

    with compile_notice(True):
        fresh(2)  # compiled already: nothing to say
    assert capsys.readouterr().err == ""

    @njit
    def other(x):
        return x - 1

    with compile_notice(False):  # progress off (--quiet): nothing said even when compiling
        other(1)
    assert capsys.readouterr().err == ""


def test_the_command_line_quiet_turns_the_notice_off(tmp_path, monkeypatch):
    from likewise.cli import main

    asked: list[bool] = []
    real = likewise.training.train_numba.compile_notice

    def spy(enabled: bool):
        asked.append(enabled)
        return real(enabled)

    monkeypatch.setattr(likewise.training.train_numba, "compile_notice", spy)
    orders = tmp_path / "orders.csv"
    rows = [f"{b},p{(b * 7 + i) % 13}" for b in range(60) for i in range(3)]
    orders.write_text("order_id,product\n" + "\n".join(rows) + "\n")
    args = [str(orders), "--basket-col", "order_id", "--item-col", "product", "--deterministic"]
    args += ["--epochs", "2", "--dim", "8", "--backend", "cpu", "--quiet", "--cache-dir", str(tmp_path / "c")]
    assert main(["train", *args, "-o", str(tmp_path / "model")]) == 0
    assert asked and not any(asked)


# Compiled functions called from compiled code that may be compiled on their own: integer work only,
# which no optimisation can round differently (none at present).
SEPARATE_OK: set[str] = set()


def _njit_functions(path: Path) -> dict[str, ast.FunctionDef]:
    """The functions of ``path`` decorated with ``@njit(...)``."""
    out = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "njit":
                    out[node.name] = node
    return out


def _inlined(fn: ast.FunctionDef) -> bool:
    return any(
        kw.arg == "inline" and isinstance(kw.value, ast.Constant) and kw.value.value == "always"
        for d in fn.decorator_list
        if isinstance(d, ast.Call)
        for kw in d.keywords
    )


def test_compiled_kernels_call_no_separately_compiled_float_code():
    """Every ``@njit`` function called from another ``@njit`` function is ``inline="always"`` (or
    integer-only, SEPARATE_OK): otherwise it exists twice, and which copy runs depends on the cache."""
    defined: dict[str, bool] = {}  # name -> inlined, over every kernel module
    bodies: list[tuple[str, ast.FunctionDef]] = []
    for path in sorted(KERNELS.glob("*.py")):
        for name, fn in _njit_functions(path).items():
            defined[name] = defined.get(name, True) and _inlined(fn)
            bodies.append((path.name, fn))
    assert len(bodies) > 10, "no compiled kernels found: has the kernels folder moved?"
    called_separately = sorted(
        {
            f"{module}:{fn.name} calls {node.func.id}"
            for module, fn in bodies
            for node in ast.walk(fn)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in defined
            and not defined[node.func.id]
            and node.func.id not in SEPARATE_OK
        }
    )
    assert called_separately == [], "\n".join(called_separately)


def test_steps_numba_picks_by_type_are_inlined_too():
    """A compiled step chosen by its arguments' types (``@overload``, kernels/_pairs.py) is inlined into
    the driver like an ``@njit`` step; else the driver would call a separately compiled copy."""

    def overloads(fn: ast.FunctionDef) -> bool:
        calls = [d for d in fn.decorator_list if isinstance(d, ast.Call)]
        return any(getattr(d.func, "id", None) == "overload" for d in calls)

    found = [
        (path.name, node.name, _inlined(node))
        for path in sorted(KERNELS.glob("*.py"))
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef) and overloads(node)
    ]
    assert found, "no overloaded steps found: has the per-pair kernel moved?"
    assert [f for f in found if not f[2]] == []


ONE_DRIVER = """
import sys
from likewise.cli import main
from likewise.kernels import batched
assert main(sys.argv[1:]) == 0
print("SIGNATURES", len(batched._run_chunks.signatures))
"""


def test_a_first_run_compiles_one_driver(tmp_path):
    """auto-epochs trains its trials on in-memory copies and the run on the memory-mapped corpus: both
    reach the driver read-only, so a cold first run compiles it once (it compiled twice, about 12 s
    each, before)."""
    orders = tmp_path / "orders.csv"
    rows = [f"{b},p{(b * 7 + i) % 13}" for b in range(200) for i in range(3)]
    orders.write_text("order_id,product\n" + "\n".join(rows) + "\n")
    args = ["train", str(orders), "--basket-col", "order_id", "--item-col", "product", "--epochs", "auto"]
    args += ["--dim", "8", "--cache-dir", str(tmp_path / "c"), "-o", str(tmp_path / "m")]
    child = subprocess.run(
        [sys.executable, "-c", ONE_DRIVER, *args], capture_output=True, text=True, timeout=600
    )
    assert child.returncode == 0, child.stderr[-3000:]
    assert "auto: up to" in child.stdout + child.stderr  # the trials did run
    assert "SIGNATURES 1" in child.stdout, child.stdout[-2000:]
