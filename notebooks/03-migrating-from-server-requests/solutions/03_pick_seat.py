from lesson03_lab import SEAT_FORM, ask_seat, seat_text

from mrtr_kit.protocol.elicitation import validate_content


def pick_seat(ctx):
    flight = ctx.arguments["flight"]
    answer = ctx.elicitation("seat")
    if answer is None:  # round 1: ask; the same question on every run
        return ctx.input_required({"seat": ask_seat(flight)})
    if answer.action != "accept" or validate_content(SEAT_FORM, answer.content):
        return f"No seat chosen on {flight}."
    return seat_text(flight, answer.content["seat"])
