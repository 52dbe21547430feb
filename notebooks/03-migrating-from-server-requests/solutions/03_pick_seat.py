from lesson03_lab import SEAT_FORM, seat_question, seat_text


def pick_seat(ctx):
    flight = ctx.arguments["flight"]
    seat = ctx.form("seat", seat_question(flight), SEAT_FORM)  # checked against the form
    if seat.needs_asking:  # round 1, a lost answer, or one that does not fit (ELIC-14, MRTR-E4)
        return seat.ask()  # the same question on every run; after a bad answer, says why
    if not seat.accepted:  # declined or cancelled
        return f"No seat chosen on {flight}."
    return seat_text(flight, seat.content["seat"])
