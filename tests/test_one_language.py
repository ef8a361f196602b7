"""One item parser and one answer record: the command line, HTTP and Python read ``#12`` alike and answer
with the same ``{"item", "id", "score"}`` records (issue 31, item 2)."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from likewise import Embeddings, Row, Vocab, parse_item  # noqa: E402
from likewise.cli import main  # noqa: E402
from likewise.data.vocab import MAX_ID_DIGITS, parse_items  # noqa: E402
from likewise.errors import InputError  # noqa: E402
from likewise.service import create_app  # noqa: E402
from likewise.service.models import ModelSpec, Registry  # noqa: E402

BAD_DIGITS = ["#²", "#٣", "#1²", "#-٣", "#" + "1" * (MAX_ID_DIGITS + 1)]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    rng = np.random.default_rng(0)
    keys = [f"p{i}" for i in range(30)] + ["#7", "#tag"]  # keys that start with '#' but are not ids
    emb = Embeddings(rng.standard_normal((len(keys), 8)), Vocab(keys, counts=np.arange(len(keys), 0, -1)))
    path = tmp_path_factory.mktemp("one") / "m"
    emb.save(path)
    return path


def http_get(path, url, **params):
    app = create_app(Registry([ModelSpec("m", path)]))

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            return await c.get(url, params=params)

    return asyncio.run(go())


def test_the_parser_reads_ids_keys_and_refuses_other_digits():
    assert parse_items(["#12", "tent", "#tag", "#", "#-3", "#1a", "12"]) == [
        Row(12),
        "tent",
        "#tag",
        "#",
        Row(-3),
        "#1a",
        "12",
    ]
    assert parse_item("#12").written == "#12"  # a key written "#12" wins over row 12 (Vocab.resolve)
    for text in BAD_DIGITS:
        with pytest.raises(InputError, match="a row number after '#'"):
            parse_item(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_any_text_is_a_key_an_id_or_one_input_error(text):
    try:
        got = parse_item(text)
    except InputError as e:
        assert text.startswith("#") and "\n" not in str(e)
        return
    if isinstance(got, Row):
        assert got.written == text
        assert text[1:].lstrip("-").isascii() and int(text[1:]) == got.n
    else:
        assert got == text


@given(st.integers(min_value=0, max_value=10**MAX_ID_DIGITS - 1))
def test_every_written_id_reads_back(i):
    assert parse_item(f"#{i}") == Row(i)


@pytest.mark.parametrize("text", BAD_DIGITS)
def test_a_bad_id_is_one_line_and_exit_1_on_the_cli_and_a_4xx_over_http(model, capsys, text):
    capsys.readouterr()
    assert main(["similar", str(model), text]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "a row number after '#'" in err
    r = http_get(model, "/models/m/similar", item=text)
    assert 400 <= r.status_code < 500 and "a row number after '#'" in r.json()["error"]


@pytest.mark.parametrize("text", ["#32", "#-1", "#99999999999999999999"])
def test_an_id_outside_the_table_is_one_line_on_the_cli_and_404_over_http(model, capsys, text):
    capsys.readouterr()
    assert main(["similar", str(model), text]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out of range" in err
    assert http_get(model, "/models/m/similar", item=text).status_code == 404


def test_cli_http_and_python_give_the_same_answer_records(model, capsys):
    emb = Embeddings.load(model)
    for written, item in [("p3", "p3"), ("#5", Row(5)), ("#tag", "#tag")]:
        want = emb.similar(item, k=4).records()
        assert [set(r) for r in want] == [{"item", "id", "score", "name", "count"}] * 4
        capsys.readouterr()
        assert main(["similar", str(model), written, "-k", "4", "--json"]) == 0
        cli = json.loads(capsys.readouterr().out)["answers"][0]["results"]
        http = http_get(model, "/models/m/similar", item=written, k=4).json()["answers"][0]["results"]
        assert cli == want == http  # same keys, ids and scores, to the last bit
    batch, one = emb.similar(["p1", "p2"], k=3).records(), emb.similar("p2", k=3).records()
    assert len(batch) == 2 and [(r["item"], r["id"]) for r in batch[1]] == [(r["item"], r["id"]) for r in one]
    assert batch[1][0]["score"] == pytest.approx(
        one[0]["score"], abs=1e-6
    )  # a batch's product may round apart


# ---- options declared once (issue 31, item 1: the command line's side) --------------------------------


def _subparser(name):
    import argparse

    from likewise.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_train_options_default_to_the_train_config_and_offer_its_literals():
    import dataclasses
    import typing

    from likewise import TrainConfig

    args = _subparser("train").parse_args(["in.txt", "-o", "out"])
    hints = typing.get_type_hints(TrainConfig)
    shown = 0
    for field in dataclasses.fields(TrainConfig):
        if not hasattr(args, field.name):
            continue
        shown += 1
        assert getattr(args, field.name) == field.default, field.name
        if typing.get_origin(hints[field.name]) is typing.Literal:
            action = next(a for a in _subparser("train")._actions if a.dest == field.name)
            assert list(action.choices) == list(typing.get_args(hints[field.name])), field.name
    assert shown == len(dataclasses.fields(TrainConfig))  # every hyper-parameter has its option


@pytest.mark.parametrize(
    ("command", "argv", "func"),
    [
        ("similar", ["m", "a"], "likewise.space.embeddings:Embeddings.similar"),
        ("recommend", ["m", "a"], "likewise.space.embeddings:Embeddings.recommend"),
        ("analogy", ["m", "a", "b", "c"], "likewise.space.embeddings:Embeddings.analogy"),
        ("also-bought", ["m", "a"], "likewise.retail:also_bought"),
        ("complete", ["m", "a"], "likewise.retail:complete_basket"),
        ("for-customer", ["m", "c"], "likewise.retail:for_customer"),
        ("similar-customers", ["m", "c"], "likewise.retail:similar_customers"),
        ("lookalike", ["m", "c"], "likewise.retail:lookalike"),
        ("campaigns", ["m", "c"], "likewise.apps.campaigns:campaigns_for_customer"),
        ("campaign-products", ["m", "c"], "likewise.apps.campaigns:campaign_products"),
        ("campaign-audience", ["m", "c"], "likewise.apps.campaigns:campaign_audience"),
        ("read-next", ["m", "a"], "likewise.apps.content:read_next"),
        ("place", ["m"], "likewise.apps.coldstart:place"),
    ],
)
def test_query_commands_default_to_what_the_library_defaults_to(command, argv, func):
    import importlib
    import inspect

    module, name = func.split(":")
    target = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    params = inspect.signature(target).parameters
    args = _subparser(command).parse_args(argv)
    assert args.k == params["k"].default
    if "on_unknown" in params and hasattr(args, "on_unknown"):
        assert args.on_unknown == params["on_unknown"].default == "raise"
        assert _subparser(command).parse_args([*argv, "--skip-unknown"]).on_unknown == "skip"
    if "scoring" in params:
        assert args.scoring == params["scoring"].default


def test_recommend_scoring_is_offered_on_the_command_line_as_over_http(model, capsys):
    from likewise.space.affinity import SCORINGS
    from likewise.space.search import BASKET_RULES

    assert SCORINGS == ("auto", "itemitem", "affinity", *BASKET_RULES, "cosine")
    emb = Embeddings.load(model)
    want = emb.recommend(["p1", "p2"], k=3, scoring="cosine").records()
    capsys.readouterr()
    assert main(["recommend", str(model), "p1", "p2", "-k", "3", "--scoring", "cosine", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answers"][0]["results"] == want


def test_the_readme_synopsis_shows_the_defaults_and_choices_the_commands_have():
    """README's command-line synopsis is checked against the parsers (which read the library's own
    defaults): a default written there (``[--dim 100]``) is the option's default, and choices written out
    in full (``auto|cpu|torch``) are its choices."""
    import argparse
    import re
    from pathlib import Path

    from likewise.cli import build_parser

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("## Command line", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    checked, command = 0, None
    for line in block.splitlines():
        head = re.match(r"likewise ([a-z-]+)\b", line)
        if head:
            command = head.group(1) if head.group(1) in sub.choices else None
        if command is None:
            continue
        actions = {s: a for a in sub.choices[command]._actions for s in a.option_strings}
        for flag, value in re.findall(r"\[(--?[a-z-]+) ([^\]\[ ]+)\]", line.split("#")[0]):
            action = actions.get(flag)
            assert action is not None, f"README shows {command} {flag}, which the command does not have"
            if re.fullmatch(r"-?[0-9.]+", value):
                assert float(value) == float(action.default), (
                    f"{command} {flag}: README {value}, parser {action.default}"
                )
                checked += 1
            elif "|" in value and "..." not in value and "[" not in value and action.choices is not None:
                assert value.split("|") == list(action.choices), f"{command} {flag}: README {value}"
                checked += 1
    assert checked >= 12


# ---- the HTTP side: the request models' defaults are the library's ---------------------------------------


@pytest.mark.parametrize(
    ("body", "func", "fields"),
    [
        ("SimilarBody", "likewise.space.embeddings:Embeddings.similar", ["k"]),
        ("VectorBody", "likewise.space.embeddings:Embeddings.similar_to_vector", ["k"]),
        ("RecommendBody", "likewise.space.embeddings:Embeddings.recommend", ["k", "scoring"]),
        ("BasketBody", "likewise.retail:complete_basket", ["k"]),
        ("AnalogyBody", "likewise.space.embeddings:Embeddings.analogy", ["k", "method"]),
        ("CustomerBody", "likewise.retail:for_customer", ["k"]),
        ("LookalikeBody", "likewise.retail:lookalike", ["k", "method"]),
        ("CampaignsBody", "likewise.apps.campaigns:campaigns_for_customer", ["k"]),
        ("AudienceBody", "likewise.apps.campaigns:campaign_audience", ["k", "method"]),
        ("ReadNextBody", "likewise.apps.content:read_next", ["k"]),
        ("PlaceBody", "likewise.apps.coldstart:place", ["k"]),
    ],
)
def test_request_bodies_default_to_what_the_library_defaults_to(body, func, fields):
    import importlib
    import inspect

    from likewise.service import bodies

    module, name = func.split(":")
    target = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    params = inspect.signature(target).parameters
    model = getattr(bodies, body)
    for field in fields:
        assert model.model_fields[field].default == params[field].default, (body, field)


def test_http_takes_restrict_and_skip_unknown_as_python_does(model):
    emb = Embeddings.load(model)
    want = emb.similar("p3", k=3, restrict=10).records()
    assert (
        http_get(model, "/models/m/similar", item="p3", k=3, restrict=10).json()["answers"][0]["results"]
        == want
    )
    app = create_app(Registry([ModelSpec("m", model)]))

    async def post(url, body):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            return await c.post(url, json=body)

    got = asyncio.run(post("/models/m/similar", {"items": ["p3"], "k": 3, "restrict": 10})).json()
    assert got["answers"][0]["results"] == want
    rec = emb.recommend(["p1", "zzz"], k=3, restrict=12, on_unknown="skip").records()
    body = {"items": ["p1", "zzz"], "k": 3, "restrict": 12, "skip_unknown": True}
    assert asyncio.run(post("/models/m/recommend", body)).json()["answers"][0]["results"] == rec
    ana = emb.analogy("p1", "p2", "p3", restrict=8).records()
    got = asyncio.run(post("/models/m/analogy", {"a": "p1", "b": "p2", "c": "p3", "restrict": 8})).json()
    assert (
        got["answers"][0]["results"] == ana and len(ana) == 5
    )  # 10 by default, of the 8 most frequent less a, b, c


@pytest.mark.parametrize(
    ("argv", "func"),
    [
        (["datasets", "retail", "-o", "d"], "likewise.data.datasets:retail_orders"),
        (["datasets", "events", "-o", "d"], "likewise.data.eventdata:shop_events"),
        (["datasets", "content", "-o", "d"], "likewise.data.eventdata:content_sessions"),
        (["demo"], "likewise.apps.demo:run_demo"),
        (["split", "in.txt", "-o", "s"], "likewise.evaluate:split_sequences"),
        (["tune", "in.txt", "-o", "m"], "likewise.training.tune:TuneOptions"),
        (["train", "in.txt", "-o", "m"], "likewise.training.config:TrainConfig"),
        (["train-next", "in.txt", "-o", "m"], "likewise.torch.nexttoken:NextTokenConfig"),
        (["sample", "m"], "likewise.torch.nexttoken:sample"),
    ],
)
def test_every_seed_defaults_to_the_seed_of_what_it_seeds(argv, func):
    """A command's --seed is its library function's (a training's 1, TrainConfig's and gensim's; a split's,
    a generator's and a search's 0): read from the function, so the two never drift apart."""
    import argparse
    import importlib
    import inspect

    from likewise.cli import build_parser

    module, name = func.split(":")
    if module.startswith("likewise.torch"):
        pytest.importorskip("torch")
    target = getattr(importlib.import_module(module), name)
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if argv[0] == "datasets":
        sub = next(a for a in sub.choices["datasets"]._actions if isinstance(a, argparse._SubParsersAction))
        argv = argv[1:]
    args = sub.choices[argv[0]].parse_args(argv[1:])
    assert args.seed == inspect.signature(target).parameters["seed"].default
