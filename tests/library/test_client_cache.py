"""What a caching client keeps (``mrtr_kit.client.cache``): the cache key (CACHE-4), freshness
by ``ttlMs`` (CACHE-5), and what is never stored - an ``input_required`` result (CACHE-2), the
result of a request that carried answers or state (CACHE-3, MRTR-C9), a tools/call or
prompts/get result (CACHE-6). Plain dicts, no I/O; the session's own use of a cache is in
test_client_session.py, the server's ``ttlMs``/``cacheScope`` in test_server_protocol.py.
"""

from __future__ import annotations

import pytest

from mrtr_kit.client import MrtrCall, RequestFactory, ResultCache, client_capabilities
from mrtr_kit.client.cache import cache_key, fresh_for_ms, may_cache
from mrtr_kit.client.results import Complete, NeedsInput
from tests.helpers import ACCEPT, FORM, asking, irr, reply


def factory(**kw) -> RequestFactory:
    return RequestFactory(capabilities=client_capabilities(form=True), **kw)


def test_mrtr_c9_results_of_rounds_with_inputs_are_never_cacheable():
    """MRTR-C9 / CACHE-2 / CACHE-3: input_required results and results of requests carrying
    inputResponses or requestState may not be cached, even for resources/read."""
    f = factory()
    listing = f.request("tools/list")
    assert may_cache(listing, Complete({"tools": []}))
    read = MrtrCall.resource(f, "kit://r")
    first = read.first_request()
    assert may_cache(first, Complete({"contents": []}))
    assert not may_cache(first, NeedsInput({"k": FORM}, "S", irr({"k": FORM}, "S")))
    read.receive(reply(first, irr({"k": FORM}, "S")))
    retry = read.retry_request({"k": ACCEPT})
    assert not may_cache(retry, Complete({"contents": [], "ttlMs": 60000}))
    state_only = dict(
        retry, params={k: v for k, v in retry["params"].items() if k != "inputResponses"}
    )
    assert not may_cache(state_only, Complete({"contents": []}))
    answers_only = dict(
        retry, params={k: v for k, v in retry["params"].items() if k != "requestState"}
    )
    assert not may_cache(answers_only, Complete({"contents": []}))
    tool = f.request("tools/call", {"name": "t"})
    assert not may_cache(tool, Complete({"content": []}))  # CACHE-6


def test_cache_4_the_key_is_method_plus_the_params_that_change_the_result():
    """CACHE-4: same method and uri/cursor -> same key (ids and _meta do not count); another
    method, uri or cursor -> another key, so a cached result is never served for them."""
    f = factory()
    a1, a2 = (
        f.request("resources/read", {"uri": "kit://a"}),
        f.request("resources/read", {"uri": "kit://a"}),
    )
    assert a1["id"] != a2["id"] and cache_key(a1) == cache_key(a2)
    keys = {
        cache_key(f.request("resources/read", {"uri": "kit://b"})),
        cache_key(a1),
        cache_key(f.request("tools/list")),
        cache_key(f.request("tools/list", {"cursor": ""})),
        cache_key(f.request("tools/list", {"cursor": "2"})),
        cache_key(f.request("prompts/list")),
        cache_key(f.request("server/discover")),
    }
    assert len(keys) == 7 and None not in keys
    assert cache_key(f.request("tools/call", {"name": "t"})) is None  # CACHE-6


@pytest.mark.parametrize(
    ("ttl", "fresh"), [(5000, 5000), (0, 0), (None, 0), (-1, 0), (True, 0), ("60", 0)]
)
def test_cache_5_ttl_is_read_defensively(ttl, fresh):
    """CACHE-5: absent, non-integer or negative ttlMs count as 0: stale at once."""
    result = {"tools": []} if ttl is None else {"tools": [], "ttlMs": ttl}
    assert fresh_for_ms(result) == fresh


def test_cache_4_5_result_cache_serves_only_fresh_results_for_the_same_request():
    """CACHE-4 / CACHE-5 / CACHE-3: fresh while now < received + ttlMs; never for another
    request; never a result of a retry or an input_required result."""
    clock = [1000.0]
    cache = ResultCache(now=lambda: clock[0])
    f = factory()
    listing = f.request("tools/list")
    assert cache.store(listing, Complete({"tools": ["t"], "ttlMs": 500}))
    assert cache.lookup(f.request("tools/list")) == {"tools": ["t"], "ttlMs": 500}
    assert cache.lookup(f.request("prompts/list")) is None
    assert cache.lookup(f.request("tools/list", {"cursor": "2"})) is None
    clock[0] = 1499.0
    assert cache.lookup(f.request("tools/list")) is not None
    clock[0] = 1500.0
    assert cache.lookup(f.request("tools/list")) is None  # stale at received + ttlMs
    assert not cache.store(listing, Complete({"tools": [], "ttlMs": 0}))
    assert not cache.store(listing, Complete({"tools": [], "ttlMs": -5}))
    assert not cache.store(listing, Complete({"tools": []}))  # absent: 0
    read = MrtrCall.resource(f, "kit://r")
    first = read.first_request()
    assert not cache.store(first, NeedsInput({"k": FORM}, "S", irr({"k": FORM}, "S")))
    read.receive(reply(first, irr({"k": FORM}, "S")))
    retry = read.retry_request({"k": ACCEPT})
    assert not cache.store(retry, Complete({"contents": [], "ttlMs": 60000}))
    assert cache.lookup(first) is None


def test_mrtr_c9_a_request_without_params_can_still_be_judged():
    """MRTR-C9: ``may_cache`` answers for any request dict, one without ``params`` too.

    Kills: ``or {}`` dropped where ``may_cache`` reads the params.
    """
    assert may_cache({"method": "resources/read"}, Complete({"contents": []})) is True


def test_cache_3_a_request_carrying_answers_or_state_has_no_cache_key():
    """CACHE-3 / MRTR-C9: a request that carried ``inputResponses`` or ``requestState`` (each
    alone) has no cache key; a request with no params at all still has one.

    Kills: ``or`` made ``and`` between the two, either half dropped or emptied; ``or {}``
    dropped where the params are read.
    """
    read = {"method": "resources/read", "params": {"uri": "kit://a"}}
    assert cache_key(read) == ("resources/read", "uri", "kit://a")
    answers = {"method": "resources/read", "params": {"uri": "kit://a", "inputResponses": {}}}
    state = {"method": "resources/read", "params": {"uri": "kit://a", "requestState": "s"}}
    assert cache_key(answers) is None and cache_key(state) is None
    assert cache_key({"method": "tools/list"}) == ("tools/list", "cursor", None)


def test_mrtr_c9_cache_2_nothing_uncacheable_is_stored_and_store_says_so():
    """MRTR-C9 / CACHE-2 / CACHE-6: ``store`` keeps neither a tools/call result nor an
    input_required one (even one that wrongly carries ``ttlMs``), and answers False.

    Kills: ``key is None or not may_cache(...)`` with ``and``, or without its second half;
    ``return False`` turned into ``return None``.
    """
    cache = ResultCache(now=lambda: 0.0)
    tool = {"method": "tools/call", "params": {"name": "t"}}
    assert cache.store(tool, Complete({"content": [], "ttlMs": 5000})) is False
    read = {"method": "resources/read", "params": {"uri": "kit://a"}}
    asking_result = {"resultType": "input_required", "requestState": "s", "ttlMs": 5000}
    assert cache.store(read, NeedsInput({}, "s", asking_result)) is False
    assert cache.lookup(read) is None and cache.lookup(tool) is None
    assert cache.store(read, Complete({"contents": [], "ttlMs": 0})) is False


def test_cache_5_a_fresher_ttl_0_answer_evicts_the_cached_one_and_clear_forgets_all():
    """CACHE-5: a newer result for the same request with ``ttlMs: 0`` means "do not reuse":
    the older cached result goes too. ``clear()`` (a list_changed notification) forgets all.

    Kills: the eviction on ttl 0 removed; ``clear()`` doing nothing.
    """
    cache = ResultCache(now=lambda: 0.0)
    listing = {"method": "tools/list", "params": {}}
    read = {"method": "resources/read", "params": {"uri": "kit://a"}}
    assert cache.store(listing, Complete({"tools": [], "ttlMs": 500}))
    assert cache.store(listing, Complete({"tools": [], "ttlMs": 0})) is False
    assert cache.lookup(listing) is None
    assert cache.store(read, Complete({"contents": [], "ttlMs": 500}))
    cache.clear()
    assert cache.lookup(read) is None


def test_cache_4_a_cached_result_cannot_be_changed_through_the_caller():
    """CACHE-4: what is served is what the server sent; editing the stored dict, or a dict
    a lookup returned, does not change what the next lookup serves.

    Kills: ``copy.deepcopy`` dropped in ``store`` or in ``lookup``.
    """
    cache = ResultCache(now=lambda: 0.0)
    listing = {"method": "tools/list", "params": {}}
    sent = {"tools": [{"name": "t"}], "ttlMs": 500}
    cache.store(listing, Complete(sent))
    sent["tools"][0]["name"] = "edited"
    served = cache.lookup(listing)
    assert served == {"tools": [{"name": "t"}], "ttlMs": 500}
    served["tools"].clear()
    assert cache.lookup(listing) == {"tools": [{"name": "t"}], "ttlMs": 500}


def test_cache_5_the_default_clock_counts_milliseconds(monkeypatch):
    """CACHE-5: ``ttlMs`` is milliseconds. With the default (monotonic) clock a 500 ms result
    is fresh 0.4998 s later and stale at 0.5 s.

    Kills: the default clock scaled by ``/ 1000`` or ``* 1001`` instead of ``* 1000``.
    """
    import time

    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    cache = ResultCache()
    listing = {"method": "tools/list", "params": {}}
    cache.store(listing, Complete({"tools": [], "ttlMs": 500}))
    clock[0] = 1000.4998
    assert cache.lookup(listing) is not None
    clock[0] = 1000.5
    assert cache.lookup(listing) is None


def test_mrtr_c9_may_cache_answers_with_a_bool():
    """MRTR-C9: ``may_cache`` is a yes or no, ``False`` for an input_required result and for
    a retry's result alike (the trace shows it as such).

    Kills: either ``return False`` in ``may_cache`` returning None.
    """
    call = MrtrCall.resource(RequestFactory(), "file:///a")
    first = call.first_request()
    needs = NeedsInput({"k": FORM}, "s", {"resultType": "input_required"})
    assert may_cache(first, needs) is False
    call.receive(asking(first, {"k": FORM}))
    assert may_cache(call.retry_request({"k": ACCEPT}), Complete({"contents": []})) is False
