"""``solvergym serve ENV_ID``: an env as an OpenEnv server on localhost (:mod:`solvergym.adapters.openenv`).

What the server takes from its clients is the adapter's (its module docstring): ``--max-sessions``
bounds the envs on every route; OpenEnv's HTTP ``/reset``, ``/step`` and ``/state`` are off unless
``--http-routes`` (then one shared episode, holding one of the sessions); ``--no-client-instances``
refuses a client's ``seed``, ``instance`` and ``difficulty``, for a server a policy can reach.
"""
from __future__ import annotations

from pathlib import Path

from ..kv import parse_kv

__all__ = ["add_parser", "cmd_serve"]


def cmd_serve(args) -> int:
    try:
        from ..adapters.openenv import make_app, manifest
    except ImportError as e:
        raise SystemExit(f"solvergym serve needs OpenEnv: pip install -e \".[openenv]\" ({e})") from None
    import uvicorn

    settings = dict(max_sessions=args.max_sessions, http_routes=args.http_routes,
                    client_instances=not args.no_client_instances)
    try:
        kwargs = parse_kv(args.kwargs)
        app = make_app(args.env_id, **settings, **kwargs)
    except (ValueError, TypeError) as e:
        raise SystemExit(f"solvergym serve: {e}") from None
    if args.manifest:
        path = Path(args.manifest) / "openenv.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(manifest(args.env_id, args.port, **settings, **kwargs))
        print(f"wrote {path}")
    routes = "ws /ws" + (", http /reset /step /state (one shared episode)" if args.http_routes else "")
    posed = "clients may not choose instances" if args.no_client_instances else "clients may choose instances"
    print(f"serving {args.env_id} {kwargs or ''} on http://{args.host}:{args.port} (OpenEnv: {routes}; "
          f"at most {args.max_sessions} sessions; {posed})", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def add_parser(sub) -> None:
    s = sub.add_parser("serve", help="serve an env as an OpenEnv environment on localhost",
                       description="Serve ENV_ID as an OpenEnv environment (WebSocket /ws, /health, /schema): one "
                                   "env per session, reset(seed) deterministic, actions {\"text\": ...}.")
    s.add_argument("env_id", help="an env id (solvergym list), or MODULE:ENV-ID for a family of your own")
    s.add_argument("--kwargs", nargs="*", metavar="KEY=VALUE", help="env kwargs, e.g. task=sat-bench or a JSON object")
    s.add_argument("--host", default="127.0.0.1", help="the address to bind (default: localhost only)")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--max-sessions", type=int, default=8,
                   help="envs at once, on every route: WebSocket sessions, and the HTTP episode with --http-routes "
                        "(default: 8)")
    s.add_argument("--http-routes", action="store_true",
                   help="also serve OpenEnv's HTTP POST /reset, POST /step and GET /state (its simulation mode) "
                        "over one episode shared by every HTTP client, one request at a time; it holds one of "
                        "--max-sessions (default: off, WebSocket only)")
    s.add_argument("--no-client-instances", action="store_true",
                   help="the server draws every instance itself: a client's reset may not give a seed, an instance "
                        "or a difficulty (for a server a policy can reach, which could pose its own trivial "
                        "instance or replay a seed it knows; default: clients choose, as a trainer posing its "
                        "dataset does)")
    s.add_argument("--manifest", default=None, metavar="DIR", help="also write DIR/openenv.yaml")
    s.set_defaults(fn=cmd_serve)
