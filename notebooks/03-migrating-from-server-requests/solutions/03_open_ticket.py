from lesson03_lab import ask_severity


def open_ticket(ctx, tracker):
    title = ctx.arguments["title"]
    answer = ctx.elicitation("severity")
    if answer is None:  # nothing happens before the question: this code runs every round
        return ctx.input_required({"severity": ask_severity(title)})
    if answer.action != "accept":
        return "No ticket filed."
    # The side effect, once, after the last answer.
    return f"Filed {tracker.file(title, answer.content['severity'])}: {title}."
