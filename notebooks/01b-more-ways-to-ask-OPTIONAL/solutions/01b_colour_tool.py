# Lesson 01b, exercise 3: a tool that asks with a form, checks the answer against it, and asks
# again when the answer is missing or does not fit.
COLOUR_FORM = {
    "type": "object",
    "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]}},
    "required": ["colour"],
}


def favourite_colour(ctx):
    colour = ctx.form("colour", "Which colour do you like?", COLOUR_FORM)
    if colour.needs_asking:  # no answer yet, it went missing, or it does not fit the form
        return colour.ask()  # asks again, saying what was wrong (ELIC-14, MRTR-E4)
    if colour.declined:  # an explicit no: finish; not asking again is the kit's choice (KIT)
        return "No colour, then: I will use the default theme."
    if colour.cancelled:  # dismissed: nothing chosen; ask again another time (ELIC-6)
        return "No colour chosen yet: ask me again when you want to pick one."
    return f"Your favourite colour is {colour.content['colour']}."  # checked: red, green or blue
