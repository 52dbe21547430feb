"""The kit's forms answering real elicitations for other clients: the official SDK's ``Client``
(``mcp`` 2.3) and FastMCP's ``Client`` (4.x), through ``mrtr_course.widgets.elicit_callbacks``.

Each test runs a real client against a real server: the SDK port of notebook 03
(``mrtr_course.sdk_port``, one process per style) or ``sdk_forms_server.py`` (a minimal SDK
server that returns the ``ElicitResult`` it received, so the test sees what reached the server). The
forms are filled and submitted with ``button.click()`` (no kernel: ipywidgets work in plain
Python), and the tool's result shows the submitted values. Tests that start processes are
``slow``; the in-process SDK server needs none.

Both libraries are in the ``test`` extra: missing, these tests are skipped on a laptop and fail
under CI (``CI`` set).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mrtr_course.fleet import Fleet, start_processes

try:
    import fastmcp
    import mcp

    from mrtr_course.widgets.elicit_callbacks import (
        ElicitationPanel,
        fastmcp_elicitation_handler,
        sdk_elicitation_callback,
    )
    from mrtr_course.widgets.form_widgets import ElicitationForm
    from mrtr_course.widgets.url_card import UrlCard

    HAVE_CLIENTS = True
except ImportError:  # pragma: no cover - the test extra brings both
    HAVE_CLIENTS = False

HERE = Path(__file__).resolve().parents[1]  # tests/, where the support modules are
TRIP = "Reserved a suite room in Lisbon: 2 nights from 2026-09-01, 520 EUR."
TEST_TIMEOUT_S = 60.0


@pytest.fixture(scope="module", autouse=True)
def need_clients() -> None:
    if not HAVE_CLIENTS:
        message = 'the SDK or FastMCP is not installed (pip install "mrtr-kit[test]")'
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must install the test extra")
        pytest.skip(message)


@pytest.fixture(scope="module")
def servers() -> Iterator[Fleet]:
    """The SDK ports of notebook 03 (``sdk-mrtr``, ``sdk-v1``) and the echo server."""
    from mrtr_course.sdk_port import serve_command

    env = {"PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    fleet = start_processes(
        {
            "sdk-mrtr": serve_command("mrtr", "sdk-mrtr"),
            "sdk-v1": serve_command("v1", "sdk-v1"),
            "echo": [sys.executable, str(HERE / "sdk_forms_server.py")],
        },
        env=env,
        timeout=120,  # a cap: three Python servers start at once on a maybe busy machine
    )
    yield fleet
    fleet.stop()


def run(scenario: Awaitable[Any], *, debug: bool = False) -> Any:
    """Every scenario has a deadline: a form nobody answers must fail the test, not hang it.
    ``debug``: asyncio's debug mode, which raises when a thread touches the loop unsafely."""

    async def bounded() -> Any:
        return await asyncio.wait_for(scenario, TEST_TIMEOUT_S)

    return asyncio.run(bounded(), debug=debug)


def leaf_error(scenario: Awaitable[Any]) -> BaseException:
    """The one exception a scenario ends with (the SDK's task groups wrap it in a group)."""
    try:
        run(scenario)
    except BaseException as exc:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return exc
    raise AssertionError("the call did not fail")


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def sdk_call(
    target: Any, panel: ElicitationPanel, tool: str, arguments: dict[str, Any], **options: Any
) -> str:
    """``tool`` called with the official SDK's ``Client``, the kit's forms answering."""
    async with mcp.Client(
        target, elicitation_callback=sdk_elicitation_callback(panel), **options
    ) as client:
        return _text(await client.call_tool(tool, arguments))


async def fastmcp_call(
    target: Any, panel: ElicitationPanel, tool: str, arguments: dict[str, Any]
) -> str:
    """``tool`` called with FastMCP's ``Client``, the kit's forms answering."""
    handler = fastmcp_elicitation_handler(panel)
    async with fastmcp.Client(target, elicitation_handler=handler) as client:
        return _text(await client.call_tool(tool, arguments))


CLIENTS: dict[str, Callable[..., Awaitable[str]]] = {"sdk": sdk_call, "fastmcp": fastmcp_call}


def echoed(text: str) -> dict[str, Any]:
    """The ``ElicitResult`` the echo server received, as it returned it."""
    return json.loads(text)


# -- a whole trip, through the kit's forms -----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_the_kit_form_answers_the_sdk_port_of_lesson_03(servers: Fleet, client: str) -> None:
    """MRTR-C1 through another client's loop: each round's question becomes the kit's form; the
    engine checks an answer before the library sends it (ELIC-14); the reservation holds the
    values typed into the forms."""

    async def scenario() -> tuple[str, ElicitationPanel, Any]:
        panel = ElicitationPanel(f"{client} → sdk-mrtr")
        panel.start(
            CLIENTS[client](servers["sdk-mrtr"].url, panel, "plan_trip", {"city": "Lisbon"})
        )
        dates = await panel.asked()
        refused = dates.fill(start="2026-09-01", nights=0).accept()  # outside 1..14
        dates.fill(nights=2).accept()
        room = await panel.asked()
        room.fill(room="suite").accept()
        return await panel.result(), panel, refused

    text, panel, refused = run(scenario())
    assert text == TRIP
    assert refused.problems == {"nights": "must be at least 1"}
    assert [(f.asker, f.key) for f in panel.shown] == [
        ("trip-planner-sdk-mrtr", "dates"),
        ("trip-planner-sdk-mrtr", "room"),
    ]
    assert [f.answer for f in panel.shown] == [
        {"action": "accept", "content": {"start": "2026-09-01", "nights": 2}},
        {"action": "accept", "content": {"room": "suite"}},
    ]
    assert f"result: {TRIP}" in panel.describe()


@pytest.mark.slow
def test_the_same_callback_answers_a_2025_11_25_server_request(servers: Fleet) -> None:
    """On a 2025-11-25 session the SDK's ``ctx.elicit`` sends ``elicitation/create`` to the
    client mid-tool (MRTR-0); the SDK client calls the same callback, and the same form answers.
    The request id is then a JSON-RPC id, not an ``inputRequests`` key, and is not shown."""

    async def scenario() -> tuple[str, ElicitationPanel]:
        panel = ElicitationPanel()
        call = sdk_call(
            servers["sdk-v1"].url, panel, "plan_trip", {"city": "Lisbon"}, mode="legacy"
        )
        panel.start(call)
        (await panel.asked()).fill(start="2026-09-01", nights=2).accept()
        (await panel.asked()).fill(room="suite").accept()
        return await panel.result(), panel

    text, panel = run(scenario())
    assert text == TRIP
    assert [(f.asker, f.key) for f in panel.shown] == [("trip-planner-sdk-v1", None)] * 2


# -- what reaches the server: accept, decline, cancel ----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize(
    ("press", "expected"),
    [
        (
            lambda form: form.fill(name="Ada", tea=True).accept(),
            {"action": "accept", "content": {"name": "Ada", "tea": True}},
        ),
        (lambda form: form.decline(), {"action": "decline"}),
        (lambda form: form.cancel(), {"action": "cancel"}),
    ],
    ids=["accept", "decline", "cancel"],
)
def test_each_button_reaches_the_server_as_its_elicit_result(
    servers: Fleet, client: str, press: Callable[[Any], Any], expected: dict[str, Any]
) -> None:
    """ELIC-6, ELIC-7: the server receives the action pressed, and ``content`` only with
    accept; ELIC-15: decline and cancel are offered and answer."""

    async def scenario() -> str:
        panel = ElicitationPanel()
        panel.start(CLIENTS[client](servers["echo"].url, panel, "echo_answer", {"kind": "plain"}))
        press(await panel.asked())
        return await panel.result()

    assert echoed(run(scenario())) == expected


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_url_request_gets_the_kit_url_card(servers: Fleet, client: str) -> None:
    """ELIC-9, ELIC-13: URL mode shows the kit's card (full link, its host); "Go to the page"
    is the consent, sent as ``accept`` without content (ELIC-7)."""

    async def scenario() -> tuple[str, Any]:
        panel = ElicitationPanel()
        panel.start(CLIENTS[client](servers["echo"].url, panel, "echo_answer", {"kind": "url"}))
        card = await panel.asked()
        described = card.describe()
        card.go()
        return await panel.result(), (card, described)

    text, (card, described) = run(scenario())
    assert isinstance(card, UrlCard)
    assert "Link: https://accounts.example.com/sign-in?session=abc" in described
    assert "It leads to: accounts.example.com" in described
    assert echoed(text) == {"action": "accept"}


# -- a schema the form cannot render --------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["nested", "pattern"])
def test_sdk_callback_refuses_a_schema_outside_the_subset(servers: Fleet, kind: str) -> None:
    """ELIC-5 (KIT): the form says it cannot be shown, and the callback answers a protocol
    error (-32602) instead of a result; the SDK ends the call with it, nothing is retried."""
    from mcp.shared.exceptions import MCPError

    panel = ElicitationPanel()
    error = leaf_error(sdk_call(servers["echo"].url, panel, "echo_answer", {"kind": kind}))
    assert isinstance(error, MCPError), error
    assert error.error.code == -32602
    (form,) = panel.shown
    assert isinstance(form, ElicitationForm) and form.spec is None
    assert error.error.message == f"requestedSchema outside the form subset: {form.schema_problem}"
    assert "This form cannot be shown" in form.describe()
    assert not form.buttons  # nothing to press: no answer can be sent


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["nested", "pattern"])
def test_fastmcp_handler_refuses_a_schema_outside_the_subset(servers: Fleet, kind: str) -> None:
    """ELIC-5 (KIT) with FastMCP: the handler raises, and FastMCP turns that into its error
    response (-32603), which ends the call; the form shows why."""
    from mcp.shared.exceptions import MCPError

    panel = ElicitationPanel()
    error = leaf_error(fastmcp_call(servers["echo"].url, panel, "echo_answer", {"kind": kind}))
    assert isinstance(error, MCPError), error
    assert error.error.code == -32603
    (form,) = panel.shown
    assert isinstance(form, ElicitationForm) and form.spec is None
    assert error.error.message == f"requestedSchema outside the form subset: {form.schema_problem}"


# -- in this process: no server process needed ------------------------------------------------


def test_a_refused_question_locks_the_other_form_of_its_round() -> None:
    """The SDK asks a round's questions at once and ends the call on the first error: the
    other form, still open, is locked and says that nothing was sent (MRTR-C1: a round is
    answered whole or not at all)."""
    from mcp.shared.exceptions import MCPError

    panel = ElicitationPanel()
    error = leaf_error(sdk_call(echo_server(), panel, "echo_answer", {"kind": "pair"}))
    assert isinstance(error, MCPError) and error.error.code == -32602
    unshowable, plain = panel.shown
    assert unshowable.spec is None and plain.spec is not None
    assert not plain.answered and all(button.disabled for button in plain.buttons)
    assert "The client stopped waiting: nothing sent." in plain.status.value


def echo_server() -> Any:
    sys.path.insert(0, str(HERE))
    from tests.sdk_forms_server import build_server

    return build_server()


def test_a_form_nobody_answers_cancels_itself_after_the_timeout() -> None:
    """ELIC-6: a dismissed form is ``cancel``; a wait for a person always has a timeout
    (docs/architecture.md §3). The SDK's in-process server receives the cancel."""

    async def scenario() -> tuple[str, ElicitationPanel]:
        panel = ElicitationPanel(timeout=0.2)
        text = await sdk_call(echo_server(), panel, "echo_answer", {"kind": "plain"})
        return text, panel

    text, panel = run(scenario())
    assert echoed(text) == {"action": "cancel"}
    (form,) = panel.shown
    assert form.answered and "No answer within 0.2 s: sent cancel." in form.status.value


def test_asked_waits_for_the_server_not_a_person() -> None:
    """``asked()`` returns the open form; after the last answer it says the call ended rather
    than waiting for a question that will not come."""

    async def scenario() -> tuple[str, str]:
        panel = ElicitationPanel()
        panel.start(sdk_call(echo_server(), panel, "echo_answer", {"kind": "plain"}))
        (await panel.asked()).fill(name="Grace").accept()
        text = await panel.result()
        with pytest.raises(RuntimeError, match="the call ended without another question"):
            await panel.asked()
        return text, panel.describe()

    text, described = run(scenario())
    assert echoed(text) == {"action": "accept", "content": {"name": "Grace", "tea": False}}
    assert "(A text copy of the widget" not in described  # nothing is waiting any more
    assert described.endswith(f"result: {text}")


def test_without_a_panel_the_callback_shows_its_own_when_first_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """For a call awaited in the cell itself: the callback displays a panel of its own with the
    first form (outside IPython, ``display`` prints the text copy) and keeps it as ``.panel``."""

    async def scenario() -> tuple[str, str]:
        callback = sdk_elicitation_callback()
        panel = callback.panel  # type: ignore[attr-defined]
        assert capsys.readouterr().out == ""  # nothing shown before the server asks

        async def call() -> str:
            async with mcp.Client(echo_server(), elicitation_callback=callback) as client:
                return _text(await client.call_tool("echo_answer", {"kind": "plain"}))

        panel.start(call())
        form = await panel.asked()
        shown = capsys.readouterr().out
        form.fill(name="Ada").accept()
        return await panel.result(), shown

    text, shown = run(scenario())
    assert "echo-forms asks (q): A plain form." in shown
    assert "[Accept] [Decline] [Cancel]" in shown
    assert echoed(text) == {"action": "accept", "content": {"name": "Ada", "tea": False}}


def test_a_click_handled_on_another_thread_still_answers() -> None:
    """A kernel may run a comm's click handler off the event loop's thread (``CallFlow`` allows
    for it too): the answer is handed to the loop thread-safely (asyncio's debug mode would
    raise otherwise), and the call goes on."""

    async def scenario() -> str:
        panel = ElicitationPanel()
        panel.start(sdk_call(echo_server(), panel, "echo_answer", {"kind": "plain"}))
        form = await panel.asked()
        await asyncio.to_thread(lambda: form.fill(name="Lin").accept())
        return await panel.result()

    answer = run(scenario(), debug=True)
    assert echoed(answer) == {"action": "accept", "content": {"name": "Lin", "tea": False}}


def test_a_failed_call_is_shown_in_the_panel() -> None:
    """A call that fails inside the task is shown, not lost: ``result()`` raises with it, and
    the exception group an anyio task group wraps it in is unwrapped for reading."""

    async def broken_call() -> str:
        raise ExceptionGroup("unhandled errors in a TaskGroup", [ConnectionError("refused")])

    async def scenario() -> ElicitationPanel:
        panel = ElicitationPanel()
        panel.start(broken_call())
        with pytest.raises(RuntimeError, match="ConnectionError: refused"):
            await panel.result()
        return panel

    panel = run(scenario())
    assert panel.text == "error: ConnectionError: refused"
    assert panel.status_message == "The call stopped: ConnectionError: refused"


# -- in a real kernel: the click arrives as a comm message, as JupyterLab sends it ------------


@pytest.mark.slow
def test_in_a_kernel_a_click_between_cells_lets_the_sdk_call_go_on(tmp_path: Path) -> None:
    """Lesson 03's cells: one cell starts the SDK call (``panel.start``) and ends while its form
    waits; the learner's click, a ``comm_msg`` to the Accept button handled while no cell runs,
    answers it; a later cell reads the result. The kernel is a real ipykernel, in its own
    ``HOME`` (nothing is written to the user's)."""
    from jupyter_client.manager import start_new_kernel

    home = tmp_path / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "IPYTHONDIR": str(home / ".ipython"),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)]),
    }
    manager, client = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))

    def cell(code: str) -> str:
        msg_id = client.execute(code)
        out: list[str] = []
        while True:
            msg = client.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind == "error":
                raise AssertionError(f"{content['ename']}: {content['evalue']}")
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(out)

    def click(comm_id: str) -> None:
        data = {"method": "custom", "content": {"event": "click"}}
        client.session.send(
            client.shell_channel.socket,
            client.session.msg("comm_msg", {"comm_id": comm_id, "data": data}),
        )

    try:
        comm_id = cell(
            "from mcp import Client\n"
            "from mrtr_course.widgets.elicit_callbacks import ElicitationPanel,"
            " sdk_elicitation_callback\n"
            "from sdk_forms_server import build_server\n"
            "async def call(panel):\n"
            "    callback = sdk_elicitation_callback(panel)\n"
            "    async with Client(build_server(), elicitation_callback=callback) as client:\n"
            "        result = await client.call_tool('echo_answer', {'kind': 'plain'})\n"
            "    return result.content[0].text\n"
            "panel = ElicitationPanel(timeout=60)\n"
            "panel.start(call(panel))\n"
            "form = await panel.asked()\n"
            "form.fill(name='Ada')\n"
            "print(form.accept_button.comm.comm_id)\n"
        ).strip()
        assert cell("print(panel.text)").strip() == "not finished"  # the form waits
        click(comm_id)
        text = cell("print(await panel.result(timeout=30))").strip()
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert echoed(text) == {"action": "accept", "content": {"name": "Ada", "tea": False}}
