"""core/auth.py `SignIn` on fakes of just its collaborators (the editor port, the agents' part, an
agent connection): which sign-in asks the user what, when the agent is restarted, and that one
agent's answers never reach another."""

from __future__ import annotations

from typing import Any

from acpls.acp.transport import AcpError
from acpls.core.auth import SignIn, auth_required_message
from acpls.core.secrets import KnownSecrets
from acpls.registry.spec import AgentSpec
from tests.fuzz.frame_fuzzer import FakeEditor


class Editor(FakeEditor):
    """Answers acpls/authEnv and acpls/runLogin with what the test gives."""

    def __init__(self, answer: Any) -> None:
        super().__init__("/ws")
        self.answer = answer
        self.requests: list[tuple[str, Any]] = []
        self.messages: list[str] = []

    async def request(self, method: str, params: Any, msg_id: str) -> Any:
        self.requests.append((method, params))
        return self.answer

    def show_message(self, level: int, text: str) -> None:
        self.messages.append(text)


class Conn:
    def __init__(
        self,
        version: int = 1,
        error: AcpError | None = None,
        methods: list[dict[str, Any]] | None = None,
    ) -> None:
        self.version = version
        self.error = error
        self.sent: list[tuple[str, Any]] = []
        self.auth_methods = methods or []

    async def request(self, method: str, params: Any) -> Any:
        self.sent.append((method, params))
        if self.error is not None:
            raise self.error
        return {}


class Agents:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env or {}
        self.restarted: list[str] = []
        self.conn = Conn()

    def agent_spec(self, agent: Any = None) -> AgentSpec:
        return AgentSpec(str(agent), "/bin/agent", ("--acp",))

    def agent_env(self, spec: AgentSpec) -> dict[str, str]:
        return dict(self.env)

    async def agent(self, name: Any = None) -> Any:
        return self.conn

    async def restart_agent(self, name: Any = None) -> None:
        self.restarted.append(str(name))

    def workspace_root(self) -> str:
        return "/ws"


KEY_METHOD = {"id": "key", "type": "env_var", "vars": [{"name": "API_KEY"}]}


async def test_env_var_answers_restart_that_agent_only_and_then_authenticate() -> None:
    editor, agents = Editor({"values": {"API_KEY": "secret"}}), Agents()
    sign_in = SignIn(editor, agents, KnownSecrets())  # type: ignore[arg-type]
    assert await sign_in.run(Conn(), "alpha", KEY_METHOD, "key")  # type: ignore[arg-type]
    assert [m for m, _ in editor.requests] == ["acpls/authEnv"]
    assert agents.restarted == ["alpha"]
    assert agents.conn.sent == [("authenticate", {"methodId": "key"})]
    assert sign_in.env_for("alpha") == {"API_KEY": "secret"}
    assert sign_in.env_for("beta") == {}, "one agent's answers never reach another"


async def test_a_variable_the_agent_has_is_not_asked_again() -> None:
    editor, agents = Editor(None), Agents(env={"API_KEY": "from-settings"})
    conn = Conn(version=2)
    sign_in = SignIn(editor, agents, KnownSecrets())  # type: ignore[arg-type]
    assert await sign_in.run(conn, "alpha", KEY_METHOD, "key")  # type: ignore[arg-type]
    assert editor.requests == [] and agents.restarted == []
    assert conn.sent == [("auth/login", {"methodId": "key"})]


async def test_a_missing_required_variable_is_named_and_nothing_restarts() -> None:
    editor, agents = Editor({"values": {"API_KEY": ""}}), Agents()
    sign_in = SignIn(editor, agents, KnownSecrets())  # type: ignore[arg-type]
    assert not await sign_in.run(Conn(), "alpha", KEY_METHOD, "key")  # type: ignore[arg-type]
    assert agents.restarted == [] and agents.conn.sent == []
    assert editor.messages == ["acpls: sign-in needs API_KEY"]
    assert sign_in.env_for("alpha") == {}


async def test_a_terminal_login_restarts_the_agent_only_when_it_succeeded() -> None:
    method = {"id": "login", "type": "terminal", "args": ["login"], "env": {"MODE": 1}}
    for exit_code, restarted in ((1, []), (0, ["alpha"])):
        editor, agents = Editor({"exitCode": exit_code}), Agents()
        done = await SignIn(editor, agents, KnownSecrets()).run(Conn(), "alpha", method, "login")  # type: ignore[arg-type]
        assert done is (exit_code == 0) and agents.restarted == restarted
        (name, params), *_ = editor.requests
        assert name == "acpls/runLogin"
        assert params["command"] == ["/bin/agent", "--acp", "login"]
        assert params["env"] == {"MODE": "1"} and params["cwd"] == "/ws"


async def test_a_failed_authenticate_is_shown_and_reported() -> None:
    editor, agents = Editor(None), Agents()
    conn = Conn(error=AcpError(-32000, "bad credentials"))
    assert not await SignIn(editor, agents, KnownSecrets()).run(conn, "alpha", {"id": "x"}, "x")  # type: ignore[arg-type]
    assert editor.messages == ["acpls: sign-in failed: bad credentials"]


class Picking(Editor):
    """Picks the sign-in method titled `choice` from window/showMessageRequest."""

    def __init__(self, choice: str | None) -> None:
        super().__init__(None)
        self.choice = choice
        self.offered: list[list[str]] = []

    async def show_message_request(
        self, level: int, message: str, actions: list[str], msg_id: str | None = None
    ) -> str | None:
        self.offered.append(actions)
        return self.choice


METHODS = [
    {"methodId": "old-draft", "name": "Old draft"},  # an early draft's key, still taken
    {"id": "oauth", "name": "Browser"},
    {"name": "no id: never offered"},
]


async def test_sign_in_without_a_method_asks_which_and_runs_the_one_picked() -> None:
    editor, agents = Picking("Browser"), Agents()
    conn = Conn(methods=METHODS)
    sign_in = SignIn(editor, agents, KnownSecrets())  # type: ignore[arg-type]
    assert await sign_in.sign_in(conn, "alpha", None, "token expired")  # type: ignore[arg-type]
    assert editor.offered == [["Old draft", "Browser"]]
    assert conn.sent == [("authenticate", {"methodId": "oauth"})]


async def test_sign_in_is_declined_when_nothing_is_picked_or_offered() -> None:
    cases = ((Picking(None), METHODS, 1), (Picking("Elsewhere"), METHODS, 1))
    for editor, methods, asked in (*cases, (Picking("Browser"), [], 0)):
        conn = Conn(methods=methods)
        assert not await SignIn(editor, Agents(), KnownSecrets()).sign_in(conn, "alpha", None)  # type: ignore[arg-type]
        assert conn.sent == [] and len(editor.offered) == asked  # no methods: nothing to ask
    named = Picking(None)
    conn = Conn(methods=METHODS)
    assert await SignIn(named, Agents(), KnownSecrets()).sign_in(conn, "alpha", "old-draft")  # type: ignore[arg-type]
    assert named.offered == [] and conn.sent == [("authenticate", {"methodId": "old-draft"})]


def test_the_auth_required_message_names_the_methods_with_an_id() -> None:
    text = auth_required_message(METHODS, "no key")
    assert text == (
        "authentication required: the agent says 'no key'. It offers: Old draft, Browser"
        " (run acpls.authenticate)."
    )
    assert (
        auth_required_message([], "no key") == "authentication required: the agent says 'no key'."
    )
