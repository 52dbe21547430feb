"""``python -m mrtr_course.sdk_port --style v1|mrtr|resolve [--port 0] [--instance-name NAME]``.

Serves the official-SDK version of ``plan_trip`` over Streamable HTTP at ``/mcp`` on loopback
and prints the URL (a fleet reads it). The SDK's app speaks 2025-11-25 sessions and
2026-07-28 requests on the same endpoint.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from mrtr_kit.server.http import INSTANCE_HEADER, bind_tcp, run_announced


class InstanceHeader:
    """ASGI middleware: name the instance in every response (as the kit's servers do)."""

    def __init__(self, app: Any, instance: str) -> None:
        self.app = app
        self.header = (INSTANCE_HEADER.lower().encode(), instance.encode())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def named(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), self.header]}
            await send(message)

        await self.app(scope, receive, named if scope["type"] == "http" else send)


def main(argv: Sequence[str] | None = None) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m mrtr_course.sdk_port")
    parser.add_argument("--style", choices=["v1", "mrtr", "resolve"], required=True)
    parser.add_argument("--port", type=int, default=8766, help="0 picks a free port")
    parser.add_argument("--instance-name", default="sdk")
    args = parser.parse_args(argv)

    if args.style == "v1":
        from mrtr_course.sdk_port.trip_v1 import build_server
    elif args.style == "mrtr":
        from mrtr_course.sdk_port.trip_mrtr import build_server
    else:
        from mrtr_course.sdk_port.trip_resolve import build_server
    app = InstanceHeader(build_server().streamable_http_app(host="127.0.0.1"), args.instance_name)
    sock = bind_tcp("127.0.0.1", args.port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
    run_announced(config, sock, f"Serving the official SDK's {args.style} plan_trip at {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
