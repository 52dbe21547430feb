# Lesson 01b, exercise 3: a tool that asks with a form, and asks again when the answer is missing.
from mrtr_kit.server.context import elicit_form

COLOUR_FORM = {
    "type": "object",
    "properties": {
        "colour": {
            "type": "string",
            "title": "Favourite colour",
            "enum": ["red", "green", "blue"],
        }
    },
    "required": ["colour"],
}


def favourite_colour(ctx):
    answer = ctx.elicitation("colour")
    if answer is None:  # first round, or the answer went missing (MRTR-E4)
        question = elicit_form("Which colour do you like best?", COLOUR_FORM)
        return ctx.input_required({"colour": question})
    if answer.action != "accept":  # declined or cancelled: finish politely
        return "No colour chosen."
    return f"Your favourite colour is {answer.content['colour']}."
