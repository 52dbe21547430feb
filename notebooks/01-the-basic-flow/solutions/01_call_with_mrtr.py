import itertools

_ids = itertools.count(1)  # one counter for all calls: no id is ever used twice (CORE-3)


async def call_with_mrtr(send, answer, method, params, max_rounds=10):
    answers, state = None, None
    for _ in range(max_rounds):  # a round cap (MRTR-C7 (KIT))
        round_params = dict(params)  # a new dict: the caller's params stay as they were
        if answers is not None:
            round_params["inputResponses"] = answers
        if state is not None:
            round_params["requestState"] = state  # exactly as received (MRTR-C2)
        request = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": round_params}
        response = await send(request)  # a new id every round (MRTR-C3)
        if "error" in response:
            raise RuntimeError(f"the server answered with an error: {response['error']}")
        result = response["result"]
        kind = result.get("resultType", "complete")  # missing means complete (RT-2)
        if kind == "complete":
            return result
        if kind != "input_required":
            raise RuntimeError(f"unknown resultType {kind!r}")  # RT-3
        state = result.get("requestState")  # None: the next round sends none
        questions = result.get("inputRequests")
        answers = answer(questions) if questions else None  # all keys, before retrying (MRTR-C1)
    raise RuntimeError(f"no complete result after {max_rounds} rounds")
