from lesson03_lab import ask_day, ask_hours, bike_text


def rent_bike(ctx):
    shop = ctx.arguments["shop"]
    state = ctx.state or {}  # what earlier rounds learned, verified by the server
    if "day" not in state:
        day = ctx.elicitation("day")
        if day is None:
            return ctx.input_required({"day": ask_day(shop)}, state)
        if day.action != "accept":
            return "No bike booked."
        state = {"day": day.content["day"]}
    hours = ctx.elicitation("hours")
    if hours is None:  # the day travels to the next round inside requestState
        return ctx.input_required({"hours": ask_hours(shop, state["day"])}, state)
    if hours.action != "accept":
        return "No bike booked."
    return bike_text(shop, state["day"], hours.content["hours"])
