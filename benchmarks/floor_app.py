"""The floor under ``bench_flows.py``: a bare ASGI app with canned ``get_weather`` answers,
under the kit's own uvicorn settings (``uvicorn_config``): what HTTP, asyncio and uvicorn
cost per flow before any MCP work. Not an MCP server: it reads no JSON, checks nothing, and
answers round 1 (no ``inputResponses`` in the body) with input_required and round 2 with the
result, echoing the request id, which is all the kit's client needs to run the flow.

    .venv/bin/python benchmarks/floor_app.py [--port 0]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

import uvicorn

from mrtr_course.examples.weather import LOGIN_FORM
from mrtr_kit.server.http import bind_tcp, uvicorn_config

_ID = re.compile(rb'"id":\s*("[^"]*"|-?[0-9]+)')
TOOLS = {"tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}
ASK = {
    "resultType": "input_required",
    "inputRequests": {
        "login": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Sign in", "requestedSchema": LOGIN_FORM},
        }
    },
}
DONE = {"resultType": "complete", "content": [{"type": "text", "text": "Hello bench-user!"}]}


def _canned(result: dict[str, Any]) -> tuple[bytes, bytes]:
    text = json.dumps({"jsonrpc": "2.0", "id": 0, "result": result}, separators=(",", ":"))
    head, tail = text.encode().split(b'"id":0', 1)
    return head + b'"id":', tail


CANNED = {name: _canned(r) for name, r in (("tools", TOOLS), ("ask", ASK), ("done", DONE))}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    found = _ID.search(body)
    rid = found.group(1) if found else b"null"
    if b'"tools/list"' in body:
        head, tail = CANNED["tools"]
    else:
        head, tail = CANNED["done" if b"inputResponses" in body else "ask"]
    payload = head + rid + tail
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    sock = bind_tcp("127.0.0.1", args.port)
    print(f"Serving the bare floor app at http://127.0.0.1:{sock.getsockname()[1]}/mcp")
    sys.stdout.flush()
    uvicorn.Server(uvicorn_config(app, log_level="warning")).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
