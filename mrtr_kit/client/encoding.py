"""The bytes of a request: UTF-8 JSON (CORE-1), with a received string echoed exactly even
when it is not valid Unicode (MRTR-C2). No I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import NotJson


def encode_request(request: Mapping[str, Any]) -> bytes:
    """The request as UTF-8 JSON bytes (CORE-1).

    Text goes out as UTF-8. A string holding a lone surrogate (a server may send a
    ``requestState`` like ``"\\ud800"``) has no UTF-8 form, yet MRTR-C2 says echo it exactly:
    then the whole body is written with ``\\uXXXX`` escapes, which carry the same string in
    plain ASCII. NaN, Infinity and non-JSON values raise ``NotJson``.
    """
    try:
        text = json.dumps(request, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise NotJson(f"{request.get('method')}: the request is not JSON: {exc}") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(request, ensure_ascii=True, allow_nan=False).encode("ascii")
