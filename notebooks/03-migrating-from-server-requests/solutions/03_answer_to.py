# Exercise 3: the SDK port reads an answer only if its own state asked for it.
from mcp_types import ElicitResult


def answer_to(ctx, state, key):
    """The answer to `key` if this round's state asked for it (MRTR-E3), else None."""
    if state.get("asked") != key:  # a first call has no state: state is {}
        return None  # sent early, or with no requestState: as if it had not come
    answer = (ctx.input_responses or {}).get(key)
    # Only a form's answer answers a form: a roots or sampling reply under `key` does not.
    return answer if isinstance(answer, ElicitResult) else None
