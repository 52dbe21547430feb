"""The call's state machine as one table: ``(state, event) -> next state``.

Every request the client makes (``call.Exchange``: an ``MrtrCall`` across its rounds, or a
``PlainRequest``) is in one ``CallStatus``. Something happens to it — the client sends a
round, a response arrives and turns out to be of some kind — and the call moves to the state
``TRANSITIONS`` gives for that pair. A pair the table does not list cannot happen:
``next_status`` raises ``IllegalTransition`` naming the event and the state, and nothing
changes. The table is read in this one function; ``Exchange._transition`` is the one place
that enters the state it returns.

Read the table top to bottom as the life of a call; each row cites the rule it enforces
(docs/spec-map.md; KIT marks the kit's own conventions). What the call *does* on a transition
(build the request, read the result, pick the next step) is in ``call.py``.
"""

from __future__ import annotations

from enum import Enum, auto


class CallStatus(Enum):
    """Where a call stands; it changes only by the transition table of this module."""

    NEW = "new"  # nothing sent yet
    AWAITING = "awaiting"  # a request is out, its response not yet received
    INPUT_REQUIRED = "input_required"  # the server asked for input; retry next
    COMPLETE = "complete"  # done: ``result`` holds the answer
    FAILED = "failed"  # an error response, or one the protocol does not allow


class Event(Enum):
    """What happens to a call: the client sends, or a response arrives and is read."""

    FIRST_REQUEST = auto()  # the client builds round 1: first_request()
    RESPONSE = auto()  # a response to the request out arrives: receive()
    UNSUPPORTED_VERSION = auto()  # ... it is the round's first -32022
    ERROR = auto()  # ... it is an error, or a response the protocol does not allow
    COMPLETE = auto()  # ... it is a final result
    INPUT_REQUIRED = auto()  # ... it is an InputRequiredResult
    RETRY = auto()  # the client builds the next round: retry_request()
    RESEND = auto()  # the client builds the same round again: resend_request()


NEW, AWAITING = CallStatus.NEW, CallStatus.AWAITING
INPUT_REQUIRED, COMPLETE, FAILED = (
    CallStatus.INPUT_REQUIRED,
    CallStatus.COMPLETE,
    CallStatus.FAILED,
)

TRANSITIONS: dict[tuple[CallStatus, Event], CallStatus] = {
    # Round 1: the original method and params (MRTR-C5) under a fresh id and _meta (CORE-3,
    # CORE-10).
    (NEW, Event.FIRST_REQUEST): AWAITING,
    # A response may be read only while a request is out; its id must echo the request's
    # (CORE-4: a mismatch raises ProtocolViolation and the call keeps waiting).
    (AWAITING, Event.RESPONSE): AWAITING,
    # The round's first -32022: switch to a version the server lists and send the same round
    # again, once (VER-2). Not a new round.
    (AWAITING, Event.UNSUPPORTED_VERSION): AWAITING,
    # An error response (ERR-4), no version in common (VER-2), or a result the protocol does
    # not allow: unknown resultType (RT-3), input_required from another method (MRTR-R3),
    # malformed inputRequests (MRTR-S2b), an empty InputRequiredResult (MRTR-S6).
    (AWAITING, Event.ERROR): FAILED,
    # A final result; a missing resultType means complete (RT-2). Cacheable or not: MRTR-C9.
    (AWAITING, Event.COMPLETE): COMPLETE,
    # The server asks for input, or just to be called again (MRTR-C1). At the round limit the
    # step is GiveUp instead of a retry (MRTR-C7, KIT).
    (AWAITING, Event.INPUT_REQUIRED): INPUT_REQUIRED,
    # The next round: a new id (MRTR-C3), the same method and params (MRTR-C5), an answer for
    # every requested key and nothing else (MRTR-C1, MRTR-C6), requestState echoed exactly or
    # left out (MRTR-C2), all private to this call (MRTR-C4); refused past the round limit
    # (MRTR-C7, KIT).
    (INPUT_REQUIRED, Event.RETRY): AWAITING,
    # The same round again under a fresh id: its response was lost (HTTP-26) or the tool's
    # header annotations changed (HTTP-14).
    (AWAITING, Event.RESEND): AWAITING,
    (FAILED, Event.RESEND): AWAITING,
    # COMPLETE has no row: a finished call does nothing more.
}


class IllegalTransition(RuntimeError):
    """``event`` cannot happen to a call in ``status``: a bug in the code driving the call,
    not the server's fault (so not an ``McpClientError``)."""

    def __init__(self, status: CallStatus, event: Event) -> None:
        self.status = status
        self.event = event
        super().__init__(_why_illegal(status, event))


def _why_illegal(status: CallStatus, event: Event) -> str:
    if event is Event.FIRST_REQUEST:
        return "first_request() was already called for this call"
    if event is Event.RESPONSE:
        return f"no request is awaiting a response: the call is {status}"
    if event is Event.RETRY:
        return f"nothing to retry: the call is {status.value}"
    if event is Event.RESEND:
        return f"nothing to resend: the call is {status.value}"
    return f"{event.name} cannot happen to a call that is {status.value}"


def next_status(status: CallStatus, event: Event) -> CallStatus:
    """The state after ``event`` happens to a call in ``status``: its row of ``TRANSITIONS``.
    ``IllegalTransition`` when the table has none."""
    try:
        return TRANSITIONS[status, event]
    except KeyError:
        raise IllegalTransition(status, event) from None
