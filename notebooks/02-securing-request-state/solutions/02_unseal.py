import base64
import binascii
import hashlib
import hmac
import json

from mrtr_kit.server.codecs import MAX_TOKEN_BYTES, InvalidState


def unseal(token: str, key: bytes) -> dict:
    """Open an hmac1 token sealed with key and return its claims; raise InvalidState if not."""
    if len(token) > MAX_TOKEN_BYTES:  # 1. the size cap, before any other work
        raise InvalidState("oversized token")
    fields = token.split(".")
    if len(fields) != 4 or fields[0] != "hmac1":  # 2. the format: exactly hmac1.kid.payload.tag
        raise InvalidState("not a hmac1 token")
    fmt, kid, payload, tag = fields
    expected = hmac.new(key, f"{fmt}.{kid}.{payload}".encode(), hashlib.sha256).digest()
    try:
        got = base64.urlsafe_b64decode(tag + "=" * (-len(tag) % 4))
    except (binascii.Error, ValueError):
        raise InvalidState("tag is not base64url") from None
    if not hmac.compare_digest(got, expected):  # 3. the whole tag, in constant time
        raise InvalidState("bad tag")
    try:  # 4. only now is the payload the server's own: decode it
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, ValueError):
        raise InvalidState("payload is not JSON") from None
    if not isinstance(claims, dict):
        raise InvalidState("payload is not an object")
    return claims
