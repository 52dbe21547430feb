import secrets

from lesson03c_lab import SEVERITY_FORM


def open_ticket(ctx, tracker):
    title = ctx.arguments["title"]
    # Nothing happens before the question: this code runs on every round (MIG-3). The key of
    # this call's ticket is made here and sealed in the state, where the client cannot change it.
    state = ctx.state or {"ticket_key": secrets.token_urlsafe(16)}
    severity = ctx.form("severity", f"How bad is {title!r}?", SEVERITY_FORM, state=state)
    if severity.needs_asking:  # round 1, or an answer that does not fit the form (ELIC-14)
        return severity.ask()
    if not severity.accepted:
        return "No ticket filed."
    # The side effect, after the last answer, and once: a final retry sent twice (HTTP-26)
    # gets the ticket filed under this key back, not a second one.
    ticket = tracker.file(title, severity.content["severity"], key=state["ticket_key"])
    return f"Filed {ticket}: {title}."
