"""``solvergym serve ENV_ID``: an env as an OpenEnv server on localhost (:mod:`solvergym.adapters.openenv`)."""
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

    try:
        kwargs = parse_kv(args.kwargs)
        app = make_app(args.env_id, max_sessions=args.max_sessions, **kwargs)
    except (ValueError, TypeError) as e:
        raise SystemExit(f"solvergym serve: {e}") from None
    if args.manifest:
        path = Path(args.manifest) / "openenv.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(manifest(args.env_id, args.port, **kwargs))
        print(f"wrote {path}")
    print(f"serving {args.env_id} {kwargs or ''} on http://{args.host}:{args.port} (OpenEnv: ws /ws, "
          f"at most {args.max_sessions} sessions)", flush=True)
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
    s.add_argument("--max-sessions", type=int, default=8, help="concurrent sessions (one env each)")
    s.add_argument("--manifest", default=None, metavar="DIR", help="also write DIR/openenv.yaml")
    s.set_defaults(fn=cmd_serve)
