from lesson03b_lab import user

from mrtr_kit.protocol.models import ElicitResult


def answer_form(params, ctx):
    """MRTR: the client's loop calls this for each form a round asks for."""
    answer = user.ask(params.message, params.requested_schema)
    if answer.closed:
        return ElicitResult(action="cancel")
    if not answer.submitted:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=answer.values)
