from lesson03c_lab import DAY_FORM, HOURS_FORM, bike_text


def rent_bike(ctx):
    shop = ctx.arguments["shop"]
    state = ctx.state or {}  # what earlier rounds learned, verified by the server
    if "day" not in state:
        day = ctx.form("day", f"Which day do you want a bike from {shop}?", DAY_FORM, state=state)
        if day.needs_asking:  # round 1, or an answer that does not fit the form (ELIC-14)
            return day.ask()
        if not day.accepted:
            return "No bike booked."
        state = {"day": day.content["day"]}  # the day travels on inside requestState (MIG-2)
    hours = ctx.form("hours", f"How many hours on {state['day']}?", HOURS_FORM, state=state)
    if hours.needs_asking:
        return hours.ask()  # carries the state, so the day rides along
    if not hours.accepted:
        return "No bike booked."
    return bike_text(shop, state["day"], hours.content["hours"])
