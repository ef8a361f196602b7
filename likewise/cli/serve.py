"""``likewise index`` (build the approximate index beside a model) and ``likewise serve`` (the HTTP API)."""

from __future__ import annotations

import argparse

from ._common import Commands, emit_fields, positive_int

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def cmd_index(args: argparse.Namespace) -> None:
    """Build the HNSW index beside a model and print its measured recall."""
    from likewise.index import IndexParams, build_index, check_index_target, index_folder
    from likewise.space.embeddings import Embeddings

    folder = check_index_target(index_folder(args.model), overwrite=args.overwrite)  # before the build
    emb = Embeddings.load(args.model, mmap=True, index=False)
    params = IndexParams(
        m=args.m, ef_construction=args.ef_construction, ef_search=args.ef_search, seed=args.seed
    )
    index = build_index(emb, params, threads=args.threads, recall_queries=args.recall_queries)
    index.save(folder, overwrite=args.overwrite)
    summary = {
        "index": str(folder),
        "library": index.library,
        "items": index.size,
        "dim": index.dim,
        **{f"params.{k}": v for k, v in params.__dict__.items()},
        **index.info,
        "fingerprint": index.fingerprint,
    }
    emit_fields(args, summary)


def cmd_serve(args: argparse.Namespace) -> None:
    """Serve the models over HTTP until interrupted."""
    import os
    from dataclasses import replace
    from pathlib import Path

    from likewise.errors import InputError, MissingDependencyError
    from likewise.service.bodies import Limits
    from likewise.service.config import CONFIG_VARIABLE, ServeConfig
    from likewise.service.models import parse_model_arg

    try:
        import uvicorn
    except ImportError:
        raise MissingDependencyError("uvicorn", "service", "the HTTP service") from None
    token = read_token(args)
    if args.host not in LOOPBACK and not token:
        raise InputError(
            f"--host {args.host!r} would accept requests from other machines: give an API token with "
            "--token-file, LIKEWISE_TOKEN or --token (requests then need 'Authorization: Bearer <token>')"
        )
    if args.host in LOOPBACK:  # refuse other Host names: a page elsewhere must not reach us by DNS rebinding
        hosts: list[str] | None = sorted({*LOOPBACK, args.host, *(args.allow_host or [])})
    else:  # a public bind, behind the token: check Host only when names were given
        hosts = sorted({args.host, *args.allow_host}) if args.allow_host else None
    if hosts is not None and "*" in hosts:
        hosts = None
    specs = [parse_model_arg(a) for a in args.models]
    labels = {}
    for raw in args.labels or []:
        name, sep, path = raw.partition("=")
        if not sep:
            name, path = specs[0].name, raw
        labels[name] = path
    unknown = sorted(set(labels) - {s.name for s in specs})
    if unknown:
        raise InputError(f"--item-attrs names model {unknown[0]!r}, which is not served")
    config = ServeConfig(
        models=tuple(
            replace(
                s, labels_path=Path(labels[s.name]) if labels.get(s.name) else None, name_col=args.name_col
            )
            for s in specs
        ),
        token=token,
        limits=Limits(
            max_k=args.max_k,
            max_batch=args.max_batch,
            max_body=args.max_body,
            max_key=args.max_key,
            max_history=args.max_history,
        ),
        map_sample=args.map_sample,
        watch_seconds=args.watch,
        allowed_hosts=None if hosts is None else tuple(hosts),
    )
    check_port_free(args.host, args.port)  # before loading models: uvicorn's own message is a log line
    where = f"http://{args.host}:{args.port}/"
    names = ", ".join(s.name for s in specs)
    if args.workers > 1:
        # Each worker process loads the models; check the folders here so a bad path fails with one message.
        from likewise.space.store import read_manifest

        for s in specs:
            read_manifest(s.path)
        # uvicorn starts each worker as a new interpreter that imports the app by name: the configuration
        # goes to it in the one variable those processes inherit (see likewise.service.config)
        os.environ[CONFIG_VARIABLE] = config.to_json()
        print(f"likewise: serving {names} on {where} ({args.workers} workers)", flush=True)
        uvicorn.run(
            "likewise.service.app:app_from_env",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_level=args.log_level,
            access_log=args.access_log,
        )
    else:
        from likewise.service.app import app_from_config

        app = app_from_config(
            config
        )  # loads the models now: a bad model fails here, before the port is bound
        print(f"likewise: serving {names} on {where}", flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=args.access_log)


def check_port_free(host: str, port: int) -> None:
    """Raise :class:`~likewise.errors.InputError` when ``host:port`` cannot be bound (in use, or not ours).

    Binds and closes a socket the way uvicorn will (``SO_REUSEADDR``), so what passes here binds there
    barring a race with another program.
    """
    import socket

    from likewise.errors import InputError

    if not 0 <= port <= 65535:
        raise InputError(f"--port {port} is not a port: must be 0..65535")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise InputError(
                f"cannot listen on {host}:{port}: {e.strerror or e} (another server holds the port? "
                "stop it, or choose another with --port)"
            ) from None


def read_token(args: argparse.Namespace) -> str | None:
    """The API token: ``--token-file``, else ``--token``, else ``$LIKEWISE_TOKEN``; None when none is set."""
    import os
    from pathlib import Path

    from likewise.errors import InputError

    if args.token_file is not None:
        if args.token:
            raise InputError("give the token once: --token-file or --token, not both")
        try:
            token = Path(args.token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"--token-file {args.token_file!r} cannot be read: {e}") from None
        if not token or any(c.isspace() for c in token):
            raise InputError(
                f"--token-file {args.token_file!r} must hold one token (no spaces), got "
                f"{'an empty file' if not token else 'text with spaces'}"
            )
        return token
    return args.token or os.environ.get("LIKEWISE_TOKEN") or None


def register(commands: Commands) -> None:
    """Add ``index`` and ``serve`` to the ``likewise`` command."""
    _add_index(commands)
    _add_serve(commands)


def _add_index(commands: Commands) -> None:
    """``likewise index``: the HNSW build's settings."""
    i = commands.add(
        "index",
        cmd_index,
        help="build the approximate nearest-neighbour index beside a model",
        description="Build an HNSW index (hnswlib) over MODEL, measure its recall@10 against exact search "
        "and save it as MODEL/index; queries then use it when no --restrict is given.",
    )
    i.add_argument("model", metavar="MODEL", help="a saved model: the folder `likewise train -o` wrote")
    i.add_argument("--m", type=positive_int, default=16, help="links per node (default 16)")
    i.add_argument(
        "--ef-construction",
        type=positive_int,
        default=200,
        help="HNSW build breadth (higher: better graph, slower)",
    )
    i.add_argument(
        "--ef-search",
        type=positive_int,
        default=128,
        help="HNSW query breadth (higher: better recall, slower)",
    )
    i.add_argument("--threads", type=positive_int, default=None, help="build threads (default: all cores)")
    i.add_argument("--seed", type=int, default=0, help="seeds the graph's construction")
    i.add_argument("--recall-queries", type=int, default=1000, help="items used to measure recall@10")
    i.add_argument("--overwrite", action="store_true", help="replace an existing index")


def _add_serve(commands: Commands) -> None:
    """``likewise serve``: the models, who may ask (host, token, allowed Host names), what the explorer
    shows, and the server's limits (:func:`_add_serve_limits`)."""
    s = commands.add(
        "serve",
        cmd_serve,
        help="serve models over HTTP with the explorer page at /",
        description="Serve one or more models (NAME=PATH, or PATH named after its folder) over HTTP. Off "
        "loopback an API token is required: give it in a file (--token-file FILE) or in the LIKEWISE_TOKEN "
        "environment variable; --token TOKEN works too but any user can read it in `ps`.",
    )
    s.add_argument("models", nargs="+", metavar="MODEL", help="NAME=PATH or PATH")
    s.add_argument("--host", default="127.0.0.1", help="bind address (default loopback; others need a token)")
    s.add_argument("--port", type=int, default=8000, help="TCP port to listen on")
    s.add_argument(
        "--token-file",
        default=None,
        metavar="FILE",
        help="read the API token from FILE (required off loopback, with LIKEWISE_TOKEN or --token as "
        "alternatives); requests then need 'Authorization: Bearer <token>'",
    )
    s.add_argument(
        "--token",
        default=None,
        help="the API token itself; visible to other users in `ps`: prefer --token-file or the "
        "LIKEWISE_TOKEN environment variable",
    )
    s.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a Host name to answer besides the bound address and localhost (repeatable; '*' for any); "
        "other Host headers get 400, which stops DNS-rebinding pages",
    )
    s.add_argument(
        "--item-attrs",
        "--labels",
        dest="labels",
        action="append",
        metavar="[NAME=]FILE",
        help="the items' names and attributes for the explorer: CSV/TSV with a header or Parquet, one row "
        "per item (the item column found by name), or item<TAB>label lines; an unreadable file, or one "
        "naming none of the model's items, is an error",
    )
    s.add_argument(
        "--name-col",
        default=None,
        metavar="COLUMN",
        help="the item table's column of display names, shown beside every key and searched (default: "
        "name, product_name, display_name, title or description)",
    )
    _add_serve_limits(s)


def _add_serve_limits(s: argparse.ArgumentParser) -> None:
    """The server's processes, reloading, request limits and logging."""
    from likewise._check import default_of
    from likewise.retail import next_basket

    s.add_argument("--workers", type=positive_int, default=1, help="server processes (each loads the models)")
    s.add_argument(
        "--watch", type=float, default=2.0, help="seconds between checks for a new model version (0: off)"
    )
    s.add_argument(
        "--map-sample",
        type=positive_int,
        default=3000,
        help="items on the map (most frequent); also bounds the t-SNE map's work",
    )
    s.add_argument("--max-k", type=positive_int, default=1000, help="largest k a request may ask for")
    s.add_argument("--max-batch", type=positive_int, default=1000, help="most queries in one request")
    s.add_argument("--max-body", type=positive_int, default=1 << 20, help="request body limit in bytes")
    s.add_argument("--max-key", type=positive_int, default=1024, help="longest item key, in characters")
    s.add_argument(
        "--max-history",
        type=positive_int,
        default=default_of(next_basket, "max_history"),
        help="next basket reads at most this many of a customer's products, the most recent",
    )
    s.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="the server's log level",
    )
    s.add_argument("--access-log", action="store_true", help="log every request")
