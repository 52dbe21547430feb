# Lesson 01b, exercise 3: a tool that asks with a form, and asks again when the answer is missing.
from mrtr_kit.server.context import elicit_form

COLOUR_FORM = {
    "type": "object",
    "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]}},
    "required": ["colour"],
}


def favourite_colour(ctx):
    answer = ctx.elicitation("colour")
    if answer is None:  # first round, or the answer went missing (MRTR-E4)
        return ctx.input_required({"colour": elicit_form("Which colour do you like?", COLOUR_FORM)})
    if answer.action == "decline":  # an explicit no: respect it (ELIC-6)
        return "No colour, then: I will use the default theme."
    if answer.action == "cancel":  # dismissed: nothing chosen; ask again another time (ELIC-6)
        return "No colour chosen yet: ask me again when you want to pick one."
    return f"Your favourite colour is {answer.content['colour']}."
