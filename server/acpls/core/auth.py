"""Signing in with the agent's `authMethods` of every type:

- `agent` (or no type): `authenticate` (v1) / `auth/login` (v2) with the method's id.
- `terminal`: the agent's own program, run with the method's `args` and `env` in an editor terminal
  (custom mode: `acpls/runLogin`, answered when the terminal closes); then the request that needed
  the sign-in is tried again. Generic editors are told the command to run.
- `env_var`: the editor asks the user for the variables (custom mode: `acpls/authEnv`; VS Code keeps
  the values in its SecretStorage, Neovim for the session only), acpls restarts the agent with them
  in its environment and then sends `authenticate` with the method's id.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acpls.acp.errors import AcpError
from acpls.core import ports
from acpls.editor import messages as msg
from acpls.translate.redact import is_secret_name

if TYPE_CHECKING:
    from acpls.acp.connection import AgentConnection
    from acpls.core.parts import AgentsPart
    from acpls.core.secrets import KnownSecrets

logger = logging.getLogger(__name__)

RUN_LOGIN = msg.RUN_LOGIN
AUTH_ENV = msg.AUTH_ENV


def method_type(method: Mapping[str, Any]) -> str:
    value = method.get("type")
    return value if isinstance(value, str) and value else "agent"


def env_vars(method: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The variables an `env_var` method wants: `vars` `[{"name", "label"?, "secret"?,
    "optional"?}]`, or the older single `varName`."""
    out: list[dict[str, Any]] = []
    listed = method.get("vars")
    for var in listed if isinstance(listed, list) else []:
        if isinstance(var, dict) and isinstance(var.get("name"), str) and var["name"]:
            out.append(
                {
                    "name": var["name"],
                    "label": var.get("label") if isinstance(var.get("label"), str) else None,
                    "secret": var.get("secret") is not False,
                    "optional": var.get("optional") is True,
                }
            )
    single = method.get("varName")
    if not out and isinstance(single, str) and single:
        out.append({"name": single, "label": None, "secret": True, "optional": False})
    return out


def id_of(method: Mapping[str, Any]) -> str | None:
    """An auth method's id: `id` in ACP (v1 and v2); `methodId` in early drafts some agents
    still send. None when it has neither, so no method is ever sent as "None"."""
    for key in ("id", "methodId"):
        value = method.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def name_of(method: Mapping[str, Any]) -> str:
    name = method.get("name")
    return name if isinstance(name, str) and name else str(id_of(method))


def auth_required_message(methods: Sequence[Mapping[str, Any]], reason: str) -> str:
    """The editor's error for a request the agent refused until the user signs in."""
    names = ", ".join(name_of(m) for m in methods if id_of(m))
    offered = f" It offers: {names} (run acpls.authenticate)." if names else ""
    return f"authentication required: the agent says {reason!r}.{offered}"


class SignIn:
    def __init__(self, editor: ports.EditorPort, agents: AgentsPart, secrets: KnownSecrets) -> None:
        self.editor = editor
        self.agents = agents  # their specs and processes: a sign-in may restart one
        # Where the values the user types are made known as secret, before anything can print
        # them (redacted from transcripts and logs).
        self.secrets = secrets
        # Variables the user gave for `env_var` methods, by agent name: part of that agent's
        # environment from its next start on (in memory only; the editor keeps them where it
        # keeps secrets). One agent's answers never reach another agent.
        self._env: dict[str, dict[str, str]] = {}

    def env_for(self, agent: str) -> dict[str, str]:
        return self._env.setdefault(agent, {})

    async def sign_in(
        self, conn: AgentConnection, agent: str, chosen_id: str | None, reason: str = ""
    ) -> bool:
        """Sign in to `agent` (its process `conn`) with the method `chosen_id`, or with None the
        one the user picks among those the agent offers; False when none was signed in."""
        methods = [m for m in conn.auth_methods if id_of(m)]
        if chosen_id is None:
            chosen_id = await self._pick(agent, methods, reason)
            if chosen_id is None:
                return False
        chosen = next((m for m in methods if id_of(m) == chosen_id), {})
        return await self.run(conn, agent, chosen, chosen_id)

    async def _pick(
        self, agent: str, methods: Sequence[Mapping[str, Any]], reason: str
    ) -> str | None:
        if not methods:
            return None
        names = [name_of(m) for m in methods]
        text = f"The agent {agent} needs you to sign in" + (f" ({reason})." if reason else ".")
        try:
            choice = await self.editor.show_message_request(ports.MESSAGE_WARNING, text, names)
        except Exception:
            logger.exception("asking the editor to pick a sign-in method failed")
            return None
        if choice is None or choice not in names:
            return None
        return id_of(methods[names.index(choice)])

    async def run(
        self, conn: AgentConnection, agent: str, method: Mapping[str, Any], method_id: str
    ) -> bool:
        kind = method_type(method)
        if kind == "terminal":
            return await self._terminal(agent, method, method_id)
        if kind == "env_var":
            if self._already_set(agent, method):
                # The agent has the variables (its `env` setting, the editor's environment, an
                # earlier answer): the agent only needs to be told which method (Codex's
                # `openai-api-key` with OPENAI_API_KEY set), never the user asked again.
                return await self._agent(conn, method_id)
            return await self._env_var(agent, method, method_id)
        return await self._agent(conn, method_id)

    def _already_set(self, agent: str, method: Mapping[str, Any]) -> bool:
        wanted = [v["name"] for v in env_vars(method) if not v["optional"]]
        have = {**self.agents.agent_env(self.agents.agent_spec(agent)), **self.env_for(agent)}
        return bool(wanted) and all(have.get(name) for name in wanted)

    async def _agent(self, conn: AgentConnection, method_id: str) -> bool:
        name = "authenticate" if conn.version == 1 else "auth/login"
        try:
            await conn.request(name, {"methodId": method_id})
        except AcpError as exc:
            message = f"acpls: sign-in failed: {exc.message}"
            self.editor.show_message(ports.MESSAGE_ERROR, message)
            return False
        return True

    async def _terminal(self, agent: str, method: Mapping[str, Any], method_id: str) -> bool:
        """The agent's program with the method's arguments, interactive, in an editor terminal."""
        args = [a for a in method.get("args") or [] if isinstance(a, str)]
        raw_env = method.get("env")
        env = raw_env if isinstance(raw_env, dict) else {}
        argv = [*self.agents.agent_spec(agent).argv, *args]
        if not self.editor.custom_mode:
            self.editor.show_message(
                ports.MESSAGE_WARNING,
                "acpls: sign in by running this in a terminal, then try again: " + " ".join(argv),
            )
            return False
        params = {
            "methodId": method_id,
            "name": method.get("name") or method_id,
            "command": argv,
            "env": {**self.env_for(agent), **{k: str(v) for k, v in env.items()}},
            "cwd": self.agents.workspace_root(),
        }
        msg_id = f"acpls-login-{uuid.uuid4().hex[:12]}"
        result = await self.editor.request(RUN_LOGIN, params, msg_id)
        # The login program stored the credentials where the agent reads them: a new agent
        # process picks them up.
        done = isinstance(result, dict) and result.get("exitCode") == 0
        if done:
            await self.agents.restart_agent(agent)
        return done

    async def _env_var(self, agent: str, method: Mapping[str, Any], method_id: str) -> bool:
        wanted = env_vars(method)
        if not wanted or not self.editor.custom_mode:
            names = ", ".join(v["name"] for v in wanted) or "the variables it names"
            self.editor.show_message(
                ports.MESSAGE_WARNING,
                f"acpls: set {names} in the agent's env (setting `agent`), then try again.",
            )
            return False
        params = {
            "methodId": method_id,
            "agent": agent,
            "name": method.get("name") or method_id,
            "vars": wanted,
            **({"link": method["link"]} if isinstance(method.get("link"), str) else {}),
        }
        msg_id = f"acpls-authenv-{uuid.uuid4().hex[:12]}"
        result = await self.editor.request(AUTH_ENV, params, msg_id)
        values = result.get("values") if isinstance(result, dict) else None
        if not isinstance(values, dict):
            return False
        given = {k: v for k, v in values.items() if isinstance(k, str) and isinstance(v, str)}
        missing = [v["name"] for v in wanted if not v["optional"] and not given.get(v["name"])]
        if missing:
            self.editor.show_message(
                ports.MESSAGE_ERROR, f"acpls: sign-in needs {', '.join(missing)}"
            )
            return False
        secret = {v["name"] for v in wanted if v["secret"]}
        self.secrets.add({k: v for k, v in given.items() if k in secret or is_secret_name(k)})
        self.env_for(agent).update(given)
        await self.agents.restart_agent(agent)  # the agent reads its environment when it starts
        return await self._agent(await self.agents.agent(agent), method_id)
