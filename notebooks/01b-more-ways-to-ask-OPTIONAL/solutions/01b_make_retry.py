# Lesson 01b, exercise 1: build the retry of an MRTR round by hand.
import copy

from mrtr_course.messages import FORM_CAPS, meta


def make_retry(first_request, result, answers, new_id):
    params = {
        "_meta": meta(FORM_CAPS),  # fresh _meta on every round (CORE-10)
        "name": first_request["params"]["name"],  # same tool ...
        "arguments": copy.deepcopy(first_request["params"].get("arguments", {})),  # ... same args
        "inputResponses": answers,  # an answer for every requested key (MRTR-C1)
    }
    if "requestState" in result:
        params["requestState"] = result["requestState"]  # echoed untouched (MRTR-C2)
    return {"jsonrpc": "2.0", "id": new_id, "method": first_request["method"], "params": params}
