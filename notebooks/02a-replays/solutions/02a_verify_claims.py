from mrtr_kit.server.codecs import InvalidState
from mrtr_kit.server.state import CLOCK_SKEW_S


def verify_claims(claims: dict, principal: str, digest: str, audience: str, now: float) -> None:
    """Return if the genuine claims are meant for this principal, request, server and moment;
    raise InvalidState if not."""
    if claims["aud"] != audience:
        raise InvalidState("wrong audience")  # sealed by another server that shares the key
    if claims["sub"] != principal:
        raise InvalidState("issued to another principal")  # MRTR-S5a
    if claims["req"] != digest:
        raise InvalidState("issued for another request")  # MRTR-S5c
    if now > claims["exp"] + CLOCK_SKEW_S:
        raise InvalidState("expired")  # MRTR-S5b
    if claims["iat"] > now + CLOCK_SKEW_S:
        raise InvalidState("issued in the future")  # a clock that is far off
