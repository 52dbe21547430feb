from mrtr_kit.protocol import errors


def require_forms(ctx):
    """Refuse a request that cannot show the form this round is about to ask (CAP-2)."""
    if not ctx.capabilities.supports_elicitation("form"):  # this request's own (CAP-1, CAP-4)
        raise errors.missing_capability({"elicitation": {"form": {}}})
