"""Chat: streamed agent text, thoughts, plan and tool-call status in the chat buffer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agents import read_log

pytestmark = pytest.mark.nvim


def test_chat_shows_streamed_text_plan_and_tool_status(editor_factory):
    ed = editor_factory("v2_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt Say hello")
    ed.wait_turn_end()
    lines = ed.lua("local c = require('acpls.chat').list()[1]; return T.lines(c.buf)")
    text = "\n".join(lines)
    print(text)
    assert "Hello from the scripted agent." in text
    assert ed.errors() == []


def chat_text(ed, index: int = 1) -> str:
    return "\n".join(ed.lua("return T.lines(require('acpls.chat').list()[...].buf)", index))


def test_tool_call_is_updated_in_place_and_thought_folded(editor_factory):
    ed = editor_factory("v2_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    ed.nvim.command("Acpls prompt hello")
    ed.wait_turn_end()
    text = chat_text(ed)
    tool_lines = [line for line in text.splitlines() if "Read README.md ·" in line]
    assert tool_lines == ["✓ read · Read README.md · completed"]
    # The plan is at the top, before the conversation.
    assert text.index("## Plan") < text.index("## You")
    # The thought is folded in the chat window.
    folded = ed.lua(
        """
        local chat = require('acpls.chat').list()[1]
        local win = vim.fn.win_findbuf(chat.buf)[1]
        return vim.api.nvim_win_call(win, function()
          for l = 1, vim.fn.line('$') do
            if vim.fn.getline(l) == '> _Thinking_' then
              return {vim.fn.foldclosed(l), vim.fn.foldclosedend(l), l}
            end
          end
        end)
        """
    )
    start, end, line = folded
    assert start == line and end == line + 1


def test_selection_is_sent_as_context(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("xmap <buffer> <F5> <Plug>(acpls-send-selection)")
    ed.nvim.input("ggjVj<F5>")
    ed.wait("return #T.inputs == 1", what="the question input")
    assert ed.lua("return vim.api.nvim_get_mode().mode") == "n"
    ed.lua("T.answer_input(1, 'what does this do?')")
    ed.wait_turn_end()
    prompts = [m for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"]
    blocks = prompts[0]["params"]["prompt"]
    assert blocks[0] == {"type": "text", "text": "what does this do?"}
    uris = [
        (b.get("resource") or {}).get("uri") or b.get("uri")
        for b in blocks[1:]
        if b["type"] != "text"
    ]
    assert uris and all(u.startswith((ed.workspace / "calc.py").as_uri()) for u in uris)
    context_text = json.dumps(blocks[1:])
    assert "return a - b" in context_text


def test_range_prompt_sends_lines_as_context(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    # An unsaved change: the agent sees the buffer, not the disk.
    ed.nvim.command("call setline(6, '    return a ** b')")
    ed.nvim.command("5,6Acpls prompt explain")
    ed.wait_turn_end()
    prompts = [m for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"]
    context_text = json.dumps(prompts[0]["params"]["prompt"][1:])
    assert "return a ** b" in context_text


MODEL_OPTION = {
    "id": "model",
    "name": "Model",
    "type": "select",
    "category": "model",
    "currentValue": "fast",
    "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart"}],
}
MODES_SCRIPT = {
    "protocol": 1,
    "on_new_session": {
        "modes": {
            "currentModeId": "ask",
            "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
        },
        "configOptions": [MODEL_OPTION],
    },
    # The agent's answer keeps the option (so the model picker finds it after a change).
    "on_set_config_option": {"configOptions": [MODEL_OPTION]},
    "on_prompt": [
        {
            "update": {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "test", "description": "Run the tests"}],
            }
        },
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "ok"},
            }
        },
    ],
}


def test_mode_and_config_pickers_reach_the_agent(editor_factory):
    ed = editor_factory(MODES_SCRIPT)
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    ed.wait(
        "local c = require('acpls.chat').current(); return c and c.view.session.modes ~= nil",
        what="the modes",
    )
    ed.nvim.command("Acpls mode")
    sel = ed.wait_select()
    assert sel["labels"] == ["Ask (current)", "Code"]
    ed.lua("T.answer(..., 2)", sel["index"])
    ed.nvim.command("Acpls config")
    sel = ed.wait_select()
    assert sel["labels"] == ["Model: fast"]
    ed.lua("T.answer(..., 1)", sel["index"])
    sel = ed.wait_select()
    assert sel["labels"] == ["Fast (current)", "Smart"]
    ed.lua("T.answer(..., 2)", sel["index"])

    def sent(method: str) -> list[dict]:
        return [m["params"] for m in read_log(ed.agent_log) if m.get("method") == method]

    for _ in range(100):
        if sent("session/set_mode") and sent("session/set_config_option"):
            break
        ed.lua("vim.wait(50)")
    assert sent("session/set_mode")[0]["modeId"] == "code"
    option = sent("session/set_config_option")[0]
    assert option["configId"] == "model" and option["value"] == "smart"
    # The model picker goes straight to the values of the `model` option.
    ed.nvim.command("Acpls model")
    sel = ed.wait_select()
    assert [label.split(" ")[0] for label in sel["labels"]] == ["Fast", "Smart"]
    ed.lua("T.answer(..., 1)", sel["index"])
    for _ in range(100):
        if len(sent("session/set_config_option")) == 2:
            break
        ed.lua("vim.wait(50)")
    assert sent("session/set_config_option")[1]["value"] == "fast"
    # Slash commands from the agent complete in the prompt.
    ed.nvim.command("Acpls prompt hi")
    ed.wait_turn_end()
    words = ed.lua(
        "local c = require('acpls.chat').current();"
        "vim.api.nvim_set_current_buf(c.in_buf);"
        "return vim.tbl_map(function(i) return i.word end, require('acpls.chat').omnifunc(0, '/'))"
    )
    assert words == ["/test"]


def test_cancel_stops_the_turn(editor_factory):
    ed = editor_factory("v1_cancel")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt work")
    ed.wait(
        "local c = require('acpls.chat').list()[1]"
        " return c and table.concat(T.lines(c.buf), '\\n'):find('Long task') ~= nil",
        what="the long task",
    )
    ed.nvim.command("Acpls cancel")
    ends = ed.wait_turn_end()
    assert ends[0]["stopReason"] == "cancelled"
    assert any(m.get("method") == "session/cancel" for m in read_log(ed.agent_log))
    assert "✗ execute · Long task · failed" in chat_text(ed)


def test_each_chat_has_its_own_session(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt first")
    ed.wait_turn_end()
    ed.nvim.command("Acpls chat new")
    ed.nvim.input("second chat<C-s>")
    ed.wait_turn_end(2)
    chats = ed.lua("return require('acpls.chat').list()")
    assert len(chats) == 2
    assert chats[0]["sessionId"] != chats[1]["sessionId"]
    prompts = [m["params"] for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"]
    assert [p["sessionId"] for p in prompts] == [chats[0]["sessionId"], chats[1]["sessionId"]]
    assert "second chat" in chat_text(ed, 2)
    assert "second chat" not in chat_text(ed, 1)


def test_server_exit_is_shown_and_the_next_prompt_starts_again(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt first")
    ed.wait_turn_end()
    first = ed.lua("return require('acpls.chat').list()[1].sessionId")
    ed.nvim.command("Acpls stop")
    ed.wait(
        "return table.concat(T.lines(require('acpls.chat').list()[1].buf), '\\n')"
        ":find('acpls stopped') ~= nil",
        what="the stop shown in the chat",
    )
    ed.nvim.command("Acpls prompt second")
    ed.wait_turn_end(2)
    chats = ed.lua("return require('acpls.chat').list()")
    assert len(chats) == 1
    assert chats[0]["sessionId"] is not None
    assert "second" in chat_text(ed)
    assert first is not None


LOAD_SCRIPT = {
    "protocol": 1,
    "on_initialize": {
        "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}}
    },
    "on_list": {
        "sessions": [{"sessionId": "old-1", "cwd": "$cwd", "title": "Earlier work"}],
    },
    "on_load": [
        {
            "update": {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "text", "text": "what did we do?"},
            }
        },
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "We fixed subtract()."},
            }
        },
    ],
    "on_prompt": [
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "continuing"},
            }
        }
    ],
}


def test_load_an_earlier_session_into_a_chat(editor_factory):
    ed = editor_factory(LOAD_SCRIPT)
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls load")
    sel = ed.wait_select()
    assert sel["labels"] == ["Earlier work"]
    ed.lua("T.answer(..., 1)", sel["index"])
    ed.wait(
        "local c = require('acpls.chat').list()[1];"
        "return c and table.concat(T.lines(c.buf), '\\n'):find('session loaded') ~= nil",
        what="the session loaded",
    )
    text = chat_text(ed)
    assert text.index("what did we do?") < text.index("We fixed subtract().")
    assert "# Earlier work" in text
    # The next prompt in that chat continues the loaded session.
    ed.nvim.input("<Esc>")
    ed.nvim.command("Acpls prompt go on")
    ed.wait_turn_end()
    prompts = [m["params"] for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"]
    assert prompts[0]["sessionId"] == "old-1"
    assert "continuing" in chat_text(ed)


def test_code_action_prompt_gets_a_chat(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    client_id = ed.lua("return require('acpls').start()")
    ed.wait("local c = vim.lsp.get_client_by_id(...); return c and c.initialized", client_id)
    ed.lua(
        "vim.lsp.buf.code_action({apply = true,"
        " filter = function(a) return a.title:find('Ask the agent') ~= nil end,"
        " range = {start = {1, 0}, ['end'] = {2, 0}}})"
    )
    ed.wait(
        "local c = require('acpls.chat').list()[1];"
        "return c and table.concat(T.lines(c.buf), '\\n'):find('Hello') ~= nil",
        what="the agent's answer in a chat",
    )
    prompts = [m["params"] for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"]
    assert len(prompts) == 1
    assert "return a - b" in json.dumps(prompts[0]["prompt"])
    chats = ed.lua("return require('acpls.chat').list()")
    assert chats[0]["sessionId"] == prompts[0]["sessionId"]


def test_add_selection_then_write_the_prompt_in_the_chat(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("xmap <buffer> <F7> <Plug>(acpls-add-selection)")
    ed.nvim.input("5GVj<F7>")
    ed.wait("return vim.b.acpls_chat ~= nil and vim.bo.filetype == 'markdown'", what="the prompt")
    bar = ed.lua("return vim.wo.winbar")
    assert "context: calc.py:5-6" in bar
    ed.nvim.input("ihow does mul work?<C-s>")
    ed.wait_turn_end()
    prompts = [m["params"] for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"]
    blocks = prompts[0]["prompt"]
    assert blocks[0] == {"type": "text", "text": "how does mul work?"}
    assert "return a * b" in json.dumps(blocks[1:])
    # The context went with that prompt only.
    assert "context:" not in ed.lua("return vim.wo.winbar")


def test_a_wiped_chat_comes_back_with_its_transcript(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt first")
    ed.wait_turn_end()
    before = chat_text(ed)
    ed.lua("vim.api.nvim_buf_delete(require('acpls.chat').list()[1].buf, {force = true})")
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    after = chat_text(ed)
    assert after == before
    ed.nvim.command("Acpls prompt second")
    ed.wait_turn_end(2)
    text = chat_text(ed)
    assert text.startswith(before)
    assert "second" in text
    chats = ed.lua("return require('acpls.chat').list()")
    assert len(chats) == 1


THINKING = {"id": "thinking", "name": "Extended thinking", "type": "boolean", "currentValue": False}
TOGGLE_SCRIPT = {
    "protocol": 1,
    "on_new_session": {"configOptions": [MODEL_OPTION, THINKING]},
    # The agent answers with every option, as ACP says (here: thinking on).
    "on_set_config_option": {"configOptions": [MODEL_OPTION, {**THINKING, "currentValue": True}]},
}


def test_boolean_options_toggle(editor_factory):
    """A boolean config option flips when picked in :Acpls config (no second picker), and with
    :Acpls toggle {id}; the picker shows on/off, and :Acpls toggle completes the ids."""
    ed = editor_factory(TOGGLE_SCRIPT)
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    ed.wait(
        "local c = require('acpls.chat').current();"
        "return c and c.view.session.configOptions and #c.view.session.configOptions == 2",
        what="the config options",
    )

    def values() -> list[object]:
        return [
            m["params"]["value"]
            for m in read_log(ed.agent_log)
            if m.get("method") == "session/set_config_option"
        ]

    ed.nvim.command("Acpls config")
    sel = ed.wait_select()
    assert sel["labels"] == ["Model: fast", "Extended thinking: off"]
    ed.lua("T.answer(..., 2)", sel["index"])
    ed.wait(
        "return #vim.tbl_filter(function(n) return n.msg:find('Extended thinking on') end, T.notes) > 0"
    )
    assert values() == [True]
    assert ed.open_selects() == []
    sent = [m for m in read_log(ed.agent_log) if m.get("method") == "session/set_config_option"]
    assert sent[0]["params"]["type"] == "boolean"
    assert ed.lua("return vim.fn.getcompletion('Acpls toggle ', 'cmdline')") == ["thinking"]
    ed.nvim.command("Acpls toggle thinking")
    for _ in range(100):
        if len(values()) == 2:
            break
        ed.lua("vim.wait(50)")
    assert values() == [True, False]
    assert ed.errors() == []


def test_updates_past_the_orphan_bound_are_counted_and_the_chat_says_so(editor_factory):
    """Updates of a session nobody asked for wait while an acpls.newSession is in flight, up to
    5,000; later ones are not kept, and the chat that adopts the session says how many it lacks
    (they were once dropped silently)."""
    ed = editor_factory({"on_new_session": [{"sleep": 2}]})
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt hi")  # its acpls.newSession takes 2 s
    ed.lua(
        """
        local chat = require('acpls.chat')
        for _ = 1, 5003 do
          chat.on_session_update({sessionId = 'ghost', update = {sessionUpdate = 'message_chunk',
            role = 'agent', messageId = 'g', content = {type = 'text', text = 'x'}}},
            {client_id = 1})
        end
        """
    )
    assert ed.lua("return require('acpls.chat').by_session('ghost') == nil")
    text = ed.wait(
        "local c = require('acpls.chat').by_session('ghost')"
        " if not c then return nil end"
        " local t = table.concat(vim.api.nvim_buf_get_lines(c.out_buf, 0, -1, false), '\\n')"
        " if t:find('were not kept', 1, true) then return t end",
        what="the adopted chat with its note",
    )
    assert "x" * 5000 in text and "x" * 5001 not in text
    assert "3 later updates of this session arrived before its chat existed" in text
    assert ed.errors() == []


def long_load_script(turns: int) -> dict[str, Any]:
    """A stored session of `turns` question/answer pairs with a tool call each."""
    steps: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        steps += [
            {
                "update": {
                    "sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": f"question {turn}?"},
                }
            },
            *(
                {
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": f"answer {turn} part {p}. "},
                    }
                }
                for p in range(3)
            ),
            {
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": f"call-{turn}",
                    "title": f"Read step{turn}.py",
                    "kind": "read",
                    "status": "completed",
                }
            },
        ]
    script = {**LOAD_SCRIPT, "on_load": steps}
    script["on_list"] = {"sessions": [{"sessionId": "old-1", "cwd": "$cwd", "title": "Long"}]}
    return script


def test_a_long_load_arrives_in_batches_and_shows_every_message(editor_factory, tmp_path):
    """acpls sends a load's updates as `acpls/sessionUpdates` (the plugin declares it); the
    client hands each update to the chat in order, so the chat shows the whole conversation."""
    turns = 400
    script = tmp_path / "long.json"  # a file: too long for one command-line argument
    script.write_text(json.dumps(long_load_script(turns)))
    ed = editor_factory(str(script))
    ed.lua(
        "local client = require('acpls.client'); local orig = client.on_session_updates;"
        " _G.BATCHES = 0; client.on_session_updates = function(params, ctx)"
        " _G.BATCHES = _G.BATCHES + 1; return orig(params, ctx) end"
    )
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls load")
    sel = ed.wait_select()
    ed.lua("T.answer(..., 1)", sel["index"])
    ed.wait(
        "local c = require('acpls.chat').list()[1];"
        "return c and table.concat(T.lines(c.buf), '\\n'):find('session loaded') ~= nil",
        what="the session loaded",
    )
    text = chat_text(ed)
    at = [text.index(f"question {n}?") for n in range(1, turns + 1)]
    assert at == sorted(at)
    assert text.index(f"answer {turns} part 2.") > at[-1]
    assert f"Read step{turns}.py" in text
    # 1,200 updates (messages and tool calls) reached the chat in a few messages.
    assert 1 <= ed.lua("return _G.BATCHES") <= 20


def test_turn_end_autocommand_sees_the_turn_end_in_the_chat(editor_factory):
    """`User AcplsTurnEnd` runs once the chat shows the turn's end, even when the turn's last
    updates still waited to be drawn when its answer came (the demo's handler, which reads the
    chat, once missed the line): the turn's 300 tool calls arrive just before its answer."""
    calls = [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": f"call-{i}",
                "title": f"Read part {i}",
                "kind": "read",
                "status": "completed",
            }
        }
        for i in range(300)
    ]
    ed = editor_factory({"protocol": 1, "on_prompt": calls})
    ed.lua(
        """
        _G.seen_at_turn_end = nil
        vim.api.nvim_create_autocmd('User', {pattern = 'AcplsTurnEnd', once = true, callback = function()
          local text = table.concat(T.lines(require('acpls.chat').list()[1].buf), '\\n')
          _G.seen_at_turn_end = {
            ended = text:find('_turn ended: end_turn_', 1, true) ~= nil,
            last_call = text:find('Read part 299', 1, true) ~= nil,
          }
        end})
        """
    )
    ed.nvim.command("Acpls prompt hello")
    ed.wait_turn_end()
    seen = ed.lua(
        "vim.wait(20000, function() return _G.seen_at_turn_end ~= nil end, 10)"
        " return _G.seen_at_turn_end"
    )
    assert seen == {"ended": True, "last_call": True}


# Every row's fold in the chat window against the view's blocks: thoughts and sub-agent calls are
# closed folds of exactly their rows, nothing else is folded.
FOLDS_MATCH_VIEW = """
local chat = require('acpls.chat').list()[1]
local win = vim.fn.bufwinid(chat.buf)
return vim.api.nvim_win_call(win, function()
  local view = require('acpls.chat').current().view
  local wrong, folds = {}, 0
  for row = 1, vim.fn.line('$') do
    local want = view:fold_level(row - 1)
    local level = vim.fn.foldlevel(row)
    local ok = (want == '0') == (level == 0)
    if want == '>1' then
      folds = folds + 1
      local last = row
      while view:fold_level(last) == '1' do
        last = last + 1
      end
      ok = ok and vim.fn.foldclosed(row) == row and vim.fn.foldclosedend(row) == last
    end
    if not ok and #wrong < 5 then
      table.insert(wrong, {row, want, level, vim.fn.foldclosed(row), vim.fn.getline(row)})
    end
  end
  return {wrong = wrong, folds = folds}
end)
"""


def test_folds_follow_blocks_that_grow_while_the_user_types(editor_factory):
    """Thoughts and sub-agent calls are folded even while the user types in the prompt (Neovim
    leaves a foldexpr's folds alone in Insert mode: the whole turn stayed unfolded), including
    folds whose block grows after the fold was made (a thought streamed in chunks, a sub-agent's
    calls added one by one), and again when the chat is shown anew."""

    def chunk(kind: str, text: str) -> dict:
        return {"update": {"sessionUpdate": kind, "content": {"type": "text", "text": text}}}

    def tool(call_id: str, **extra: object) -> dict:
        update = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": f"Task {call_id}"}
        return {"update": {**update, "kind": "read", "status": "in_progress", **extra}}

    meta = {"_meta": {"claudeCode": {"parentToolUseId": "task-1"}}}
    steps = [
        chunk("agent_thought_chunk", "planning"),
        chunk("agent_thought_chunk", "\nstep one"),
        chunk("agent_thought_chunk", "\nstep two\nstep three"),
        tool("task-1"),
        tool("child-1", **meta),
        chunk("agent_message_chunk", "working"),
        tool("child-2", **meta),
        {
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "child-1",
                "status": "completed",
            }
        },
        chunk("agent_message_chunk", " still\nworking"),
        tool("task-2", locations=[{"path": "/tmp/x", "line": 1}]),
        tool("child-3", _meta={"claudeCode": {"parentToolUseId": "task-2"}}),
        chunk("agent_thought_chunk", "again\nand again"),
    ]
    ed = editor_factory({"protocol": 1, "on_prompt": steps})
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    ed.nvim.command("Acpls prompt hello")
    ed.nvim.input("typing")  # the prompt is in Insert mode: the user types the next one
    ed.wait_turn_end()
    assert ed.lua("return vim.api.nvim_get_mode().mode") == "i"
    # The fold upkeep in the chat window left the prompt and what the user typed alone.
    assert ed.lua("return vim.api.nvim_get_current_line()") == "typing"
    assert ed.lua("return vim.bo.filetype == 'markdown' and vim.b.acpls_chat ~= nil")
    seen = ed.lua(FOLDS_MATCH_VIEW)
    assert seen == {"wrong": [], "folds": 4}, seen
    # The chat followed its end.
    assert ed.lua(
        "local c = require('acpls.chat').list()[1]; local w = vim.fn.bufwinid(c.buf)"
        " return vim.api.nvim_win_get_cursor(w)[1] == vim.api.nvim_buf_line_count(c.buf)"
    )
    # Shown again in a new window: the folds are made again.
    ed.nvim.input("<Esc>")
    ed.lua(
        "local c = require('acpls.chat').list()[1]; vim.api.nvim_win_close(vim.fn.bufwinid(c.buf), true)"
    )
    ed.nvim.command("Acpls chat")
    assert ed.lua(FOLDS_MATCH_VIEW) == {"wrong": [], "folds": 4}
    assert ed.errors() == []


# A chat of session s1 driven through its handler (no server): `feed(updates)` hands them to it,
# `drawn()` is true once the chat shows them, `win` is its transcript window.
DIRECT_CHAT = """
local chat = require('acpls.chat')
function _G.feed(updates)
  for _, u in ipairs(updates) do
    chat.on_session_update({ sessionId = 's1', update = u }, { client_id = 0 })
  end
  _G.drawn_now = false
  local win = vim.fn.bufwinid(chat.list()[1].buf)
  vim.api.nvim_win_call(win, function()
    chat.current():when_drawn(function() _G.drawn_now = true end)
  end)
  return win
end
function _G.thought(id, text)
  return { sessionUpdate = 'message_chunk', role = 'thought', messageId = id,
           content = { type = 'text', text = text } }
end
"""


def test_a_fold_the_user_opened_stays_open_while_its_thought_grows(plain_nvim):
    plain_nvim.exec_lua(DIRECT_CHAT)
    win = plain_nvim.exec_lua("return feed({thought('t1', 'one\\ntwo')})")
    plain_nvim.exec_lua("vim.wait(5000, function() return drawn_now end, 5)")
    fold_row = plain_nvim.exec_lua(
        "return vim.api.nvim_win_call(..., function()"
        " local r = vim.fn.search('^> _Thinking_$', 'w'); vim.cmd('normal! zo'); return r end)",
        win,
    )
    plain_nvim.exec_lua("feed({thought('t1', '\\nthree\\nfour'), thought('t2', 'x\\ny')})")
    plain_nvim.exec_lua("vim.wait(5000, function() return drawn_now end, 5)")
    seen = plain_nvim.exec_lua(
        """
        local win, row = ...
        return vim.api.nvim_win_call(win, function()
          local last = vim.fn.search('^> four$', 'w')
          local other = vim.fn.search('^> x$', 'w')
          return {level = vim.fn.foldlevel(last), closed = vim.fn.foldclosed(row),
                  other = vim.fn.foldclosed(other), last = last}
        end)
        """,
        win,
        fold_row,
    )
    # Still open, and reaching the thought's new last line; the new thought is closed.
    assert seen["level"] == 1 and seen["closed"] == -1 and seen["other"] == seen["last"] + 2, seen


def test_rows_only_appended_get_their_folds_without_running_the_event_loop(plain_nvim):
    """A long load writes rows at the end, tick after tick. Their folds are made without
    `normal!` or Ex command lines: reading keys or a command line polls the event loop, which
    ran the LSP client's reads and JSON decoding waiting then inside the tick, ahead of the
    user's keys. A timer due during each write tells whether the loop ran in it."""
    plain_nvim.exec_lua(DIRECT_CHAT)
    plain_nvim.exec_lua(
        "feed({thought('t0', 'a\\nb')}); vim.wait(5000, function() return drawn_now end, 5)"
    )
    seen = plain_nvim.exec_lua(
        """
        local chat = require('acpls.chat').current()
        local write, timer, polled, writes = chat._write, vim.uv.new_timer(), 0, 0
        chat._write = function(self, ...)
          timer:start(0, 0, function() polled = polled + 1 end)
          local due = vim.uv.hrtime() + 2e6
          while vim.uv.hrtime() < due do end -- the timer is due from here on
          write(self, ...)
          timer:stop()
          writes = writes + 1
        end
        local updates = {}
        for i = 1, 600 do
          updates[i] = thought('t' .. i, 'thinking ' .. i .. '\\nabout it')
        end
        feed(updates)
        vim.wait(20000, function() return drawn_now end, 5)
        chat._write = nil
        timer:close()
        return { polled = polled, writes = writes }
        """
    )
    assert seen["writes"] > 1 and seen["polled"] == 0, seen
    assert plain_nvim.exec_lua(FOLDS_MATCH_VIEW) == {"wrong": [], "folds": 601}


def test_a_window_the_user_moved_during_a_long_load_stays_and_one_at_the_end_follows(
    plain_nvim,
):
    """While updates wait the window at the end is moved there only now and then: one the user
    moved up meanwhile is left where the user put it; one left at the end ends at the end."""
    plain_nvim.exec_lua(DIRECT_CHAT)
    plain_nvim.exec_lua(
        "feed({thought('t0', 'a\\nb')}); vim.wait(5000, function() return drawn_now end, 5)"
    )
    # A second window on the chat, at its end like the first.
    wins = plain_nvim.exec_lua(
        "local buf = require('acpls.chat').list()[1].buf"
        " local w = vim.api.nvim_open_win(buf, false, {split = 'above', win = vim.fn.bufwinid(buf)})"
        " vim.api.nvim_win_set_cursor(w, {vim.api.nvim_buf_line_count(buf), 0})"
        " return vim.fn.win_findbuf(buf)"
    )
    assert len(wins) == 2
    moved, stays = wins
    plain_nvim.exec_lua(
        """
        local moved = ...
        local updates = {}
        for i = 1, 20000 do
          updates[i] = { sessionUpdate = 'message_chunk', role = 'agent', messageId = 'm' .. i,
                         content = { type = 'text', text = 'line ' .. i } }
        end
        feed(updates)
        -- After the first tick, with thousands still waiting, the user moves up.
        local ticks = require('acpls.chat').stats().ticks
        vim.wait(5000, function() return require('acpls.chat').stats().ticks > ticks end, 1)
        vim.api.nvim_win_set_cursor(moved, {2, 0})
        """,
        moved,
    )
    assert not plain_nvim.exec_lua("return drawn_now")  # the load was still going on
    plain_nvim.exec_lua("vim.wait(20000, function() return drawn_now end, 5)")
    count = plain_nvim.exec_lua(
        "return vim.api.nvim_buf_line_count(require('acpls.chat').list()[1].buf)"
    )
    assert plain_nvim.exec_lua("return vim.api.nvim_win_get_cursor(...)[1]", moved) == 2
    assert plain_nvim.exec_lua("return vim.api.nvim_win_get_cursor(...)[1]", stays) == count


def test_the_transcript_syntax_syncs_from_a_few_lines_back_even_when_loaded_again(plain_nvim):
    """A jump to the end of a long chat (following it while it loads) parses only ~30 lines for
    the markdown syntax's sync, not markdown's own 75 (each redraw there took 12-13 ms)."""
    plain_nvim.exec_lua(DIRECT_CHAT)
    plain_nvim.exec_lua("feed({thought('t1', 'one')})")
    sync = (
        "return vim.api.nvim_buf_call(require('acpls.chat').list()[1].buf, function()"
        " return vim.api.nvim_exec2('syntax sync', {output = true}).output end)"
    )
    assert "minimal 20, maximal 30 lines" in plain_nvim.exec_lua(sync)
    plain_nvim.exec_lua("vim.bo[require('acpls.chat').list()[1].buf].syntax = 'markdown'")
    assert "minimal 20, maximal 30 lines" in plain_nvim.exec_lua(sync)
