"""Agent terminals: terminal buffers (nvim_open_term) that render split UTF-8 and colours intact."""

from __future__ import annotations

import base64
import json
import time

import pytest

pytestmark = pytest.mark.nvim

TERMINAL_LUA = """
local t = require('acpls.terminals').list()[1]
if not t then return nil end
local lines = vim.tbl_filter(function(l) return l ~= '' end, T.lines(t.buf))
return {buf = t.buf, buftype = vim.bo[t.buf].buftype, command = t.command, status = t.status,
        lines = lines, name = vim.api.nvim_buf_get_name(t.buf)}
"""


def test_v2_terminal_split_utf8_and_colour(editor_factory):
    ed = editor_factory("v2_terminal")
    ed.nvim.command(f"edit {ed.workspace / 'hello.txt'}")
    ed.nvim.command("Acpls prompt run the tests")
    ed.wait_turn_end()
    term = ed.wait(
        "local t = (function() " + TERMINAL_LUA + " end)()"
        " if t and t.status == 'exit 0' and #t.lines >= 2 then return t end",
        what="the terminal with its exit",
    )
    assert term["buftype"] == "terminal"
    assert term["command"] == "make test"
    # The ✓ was split across two base64 chunks; the escape sequences became colour, not text.
    assert term["lines"][0] == "✓ ok café"
    assert "[process exit 0]" in term["lines"][1]
    assert "exit 0" in term["name"]
    # Show it in a window and compare the screen cells: the ✓ is coloured, "café" is not.
    ed.lua("require('acpls.terminals').show(...)", "scripted-1", "term-1", True)
    ed.lua("vim.wait(100); vim.cmd('redraw')")
    row = ed.lua("return vim.fn.win_screenpos(0)[1]")
    col = ed.lua("return vim.fn.win_screenpos(0)[2]")
    tick = ed.lua("local r, c = ...; return vim.fn.screenattr(r, c)", row, col)
    plain = ed.lua("local r, c = ...; return vim.fn.screenattr(r, c)", row, col + 5)
    assert ed.lua("local r, c = ...; return vim.fn.screenstring(r, c)", row, col) == "✓"
    assert tick != plain
    # The chat shows the terminal's command and exit in the tool call.
    chat = "\n".join(ed.lua("return T.lines(require('acpls.chat').list()[1].buf)"))
    assert "terminal term-1: make test (exit 0)" in chat
    # <CR> on that line in the chat shows the terminal.
    ed.nvim.command("wincmd p")
    ed.lua(
        "local c = require('acpls.chat').list()[1];"
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(c.buf)[1])"
    )
    ed.nvim.command("call search('▣ terminal')")
    ed.nvim.input("<CR>")
    ed.wait("return vim.bo.buftype == 'terminal'", what="the terminal shown")
    assert ed.errors() == []


def test_v1_client_terminal_output_and_list(editor_factory):
    ed = editor_factory("v1_terminal")
    ed.nvim.command(f"edit {ed.workspace / 'hello.txt'}")
    ed.nvim.command("Acpls prompt print")
    ed.wait_turn_end()
    term = ed.wait(
        "local t = (function() " + TERMINAL_LUA + " end)()"
        " if t and #t.lines >= 1 and t.lines[1]:find('café') then return t end",
        what="the terminal output",
    )
    assert term["lines"][0] == "✓ ok café"
    assert term["buftype"] == "terminal"
    ed.nvim.command("Acpls terminals")
    sel = ed.wait_select()
    assert len(sel["labels"]) == 1
    assert "printf" in sel["labels"][0]
    ed.lua("T.answer(..., 1)", sel["index"])
    assert ed.lua("return vim.bo.buftype") == "terminal"


def test_reset_clears_the_terminal(plain_nvim):
    nvim = plain_nvim
    lines = nvim.exec_lua(
        """
        local terms = require('acpls.terminals')
        terms.on_output({sessionId = 's', terminalId = 't', text = 'old output\\r\\n'}, {})
        local before = terms.list()[1].buf
        terms.on_output({sessionId = 's', terminalId = 't', text = 'fresh\\n', reset = true}, {})
        terms.on_output({sessionId = 's', terminalId = 't', text = 'more\\n'}, {})
        vim.wait(100)
        local t = terms.list()[1]
        return {valid_old = vim.api.nvim_buf_is_valid(before), same = before == t.buf,
                lines = vim.tbl_filter(function(l) return l ~= '' end, T.lines(t.buf))}
        """
    )
    assert lines["valid_old"] is False
    assert lines["same"] is False
    assert lines["lines"] == ["fresh", "more"]


def test_enter_on_a_terminal_or_location_line_in_the_chat_opens_it(editor_factory):
    ed = editor_factory("v2_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    code_win = ed.nvim.current.window.handle
    ed.nvim.command("Acpls prompt hi")
    ed.wait_turn_end()
    ed.lua(
        "local c = require('acpls.chat').list()[1];"
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(c.buf)[1])"
    )
    chat_win = ed.nvim.current.window.handle
    # Follow showed the agent in a window beside the chat (the user was in calc.py's): Enter
    # opens the location in one of the code windows already there, never a new one.
    code_wins = [w for w in ed.lua("return vim.api.nvim_tabpage_list_wins(0)") if w != chat_win]
    assert code_win in code_wins
    ed.nvim.command("call search('→ ')")
    ed.nvim.input("<CR>")
    ed.wait("return vim.fn.expand('%:t') == 'README.md'", what="README.md opened")
    assert ed.nvim.current.window.handle in code_wins
    assert ed.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 1


def test_same_terminal_id_in_two_sessions_and_a_wiped_buffer(plain_nvim):
    result = plain_nvim.exec_lua(
        """
        local terms = require('acpls.terminals')
        terms.on_update({sessionId = 's1', terminalId = 't', command = 'ls'}, {})
        terms.on_update({sessionId = 's2', terminalId = 't', command = 'ls'}, {})
        local list = terms.list()
        local names = {vim.api.nvim_buf_get_name(list[1].buf), vim.api.nvim_buf_get_name(list[2].buf)}
        vim.api.nvim_buf_delete(list[1].buf, {force = true})
        terms.on_output({sessionId = 's1', terminalId = 't', text = 'after wipe\\n'}, {})
        vim.wait(100)
        local t = terms.list()[1]
        return {names = names, valid = vim.api.nvim_buf_is_valid(t.buf),
                lines = vim.tbl_filter(function(l) return l ~= '' end, T.lines(t.buf))}
        """
    )
    assert result["names"][0] == "acpls://terminal/t: ls [running]"
    assert result["names"][1] == "acpls://terminal/s2/t: ls [running]"
    assert result["valid"] is True
    assert result["lines"] == ["after wipe"]


def test_every_line_ending_form_starts_its_line_at_column_0(plain_nvim):
    """Bare LFs (a pipe), CR LFs (a pty) and both in one message: every line starts at column 0
    (a bare LF alone draws a staircase). Neovim's terminal adds the CRs (`force_crlf`), so the
    text is fed as it came: converting it in Lua as well cost ~8% of E1's CPU time."""
    result = plain_nvim.exec_lua(
        """
        local terms = require('acpls.terminals')
        local sent = {}
        local send = vim.api.nvim_chan_send
        vim.api.nvim_chan_send = function(chan, data) sent[#sent + 1] = data; return send(chan, data) end
        local function out(text) terms.on_output({sessionId = 's', terminalId = 't', text = text}, {}) end
        out('lf one\\nlf two\\n')
        out('crlf one\\r\\ncrlf two\\r\\n')
        out('mixed one\\r\\nmixed two\\nmixed three\\r\\n')
        out('\\nafter a blank\\r\\n')
        out('cr only\\rover\\n')
        vim.wait(5000, function() return terms.pending_bytes() == 0 end, 5)
        vim.wait(100)
        vim.api.nvim_chan_send = send
        return {sent = table.concat(sent),
                lines = vim.tbl_filter(function(l) return l ~= '' end, T.lines(terms.list()[1].buf))}
        """
    )
    assert result["sent"] == (
        "lf one\nlf two\ncrlf one\r\ncrlf two\r\nmixed one\r\nmixed two\nmixed three\r\n"
        "\nafter a blank\r\ncr only\rover\n"
    )
    assert result["lines"] == [
        "lf one",
        "lf two",
        "crlf one",
        "crlf two",
        "mixed one",
        "mixed two",
        "mixed three",
        "after a blank",
        "overnly",
    ]


@pytest.mark.parametrize("escape", ["\x1b[20l", "\x1bc"], ids=["mode off", "reset"])
def test_after_an_escape_sequence_bare_lfs_still_start_their_line_at_column_0(plain_nvim, escape):
    """Whatever mode the output puts the terminal in (new line mode off, `ESC [20l`; a reset,
    `ESC c`), the bare LFs after it still start their lines at column 0: Neovim adds their CRs
    before the emulator parses the bytes, so no terminal mode can undo it."""
    lines = plain_nvim.exec_lua(
        """
        local escape = ...
        local terms = require('acpls.terminals')
        local function out(text) terms.on_output({sessionId = 's', terminalId = 't', text = text}, {}) end
        out('plain one\\n')
        out(escape .. 'after one\\n')
        out('after two\\nafter three\\n')
        vim.wait(5000, function() return terms.pending_bytes() == 0 end, 5)
        vim.wait(100)
        return vim.tbl_filter(function(l) return l ~= '' end, T.lines(terms.list()[1].buf))
        """,
        escape,
    )
    assert lines[-3:] == ["after one", "after two", "after three"]


def test_output_past_the_pending_bound_is_skipped_with_a_note_and_the_rest_fed_whole(plain_nvim):
    """20 MB of pipe output (bare LFs) arriving faster than it is fed: the oldest is skipped down
    to half the 16 MB bound, a note says how much where it was, and everything after it reaches
    the terminal whole, in order, as it came, the exit line last."""
    result = plain_nvim.exec_lua(
        """
        local terms = require('acpls.terminals')
        local sent = {}
        local send = vim.api.nvim_chan_send
        vim.api.nvim_chan_send = function(chan, data) sent[#sent + 1] = data; return send(chan, data) end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'flood'}, {})
        local pad = ('x'):rep(87) .. '\\n'
        for m = 0, 19 do
          local rows = {}
          for i = m * 10000, m * 10000 + 9999 do rows[#rows + 1] = ('row %07d '):format(i) .. pad end
          terms.on_output({sessionId = 's', terminalId = 't', text = table.concat(rows)}, {})
        end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'flood',
                         exitStatus = {exitCode = 0}}, {})
        local done = vim.wait(60000, function() return terms.pending_bytes() == 0 end, 5)
        vim.api.nvim_chan_send = send
        local all = table.concat(sent)
        local note_at, note_end, skipped = all:find('acpls: (%d+) bytes of output skipped')
        local rest = all:sub(note_end + 1)
        local first = tonumber(rest:match('row (%d+)'))
        local n, last = 0, nil
        for row in rest:gmatch('row (%d+) ') do n = n + 1; last = tonumber(row) end
        return {done = done, note_at = note_at, skipped = tonumber(skipped), first = first,
                last = last, rows = n, tail = rest:sub(-40)}
        """
    )
    assert result["done"] is True
    assert result["note_at"] < 100
    assert result["skipped"] >= 8_000_000
    assert result["first"] == result["skipped"] // 100
    assert result["last"] == 199_999
    assert result["rows"] == result["last"] - result["first"] + 1
    assert "[process exit 0]" in result["tail"]


def test_a_2000_line_output_is_complete_in_a_pane_opened_live(editor_factory, tmp_path):
    """The `User AcplsTerminal` → `terminals.show` recipe opens a 12-row pane as the terminal
    starts while its output streams in; every line reaches the pane, in order, and the exit line
    comes after the last one (the pane used to be sized after its output landed and lost the rows
    the resize cut, issue 18)."""
    lines = [f"output line {i:04d}" for i in range(2000)]
    data = "".join(line + "\r\n" for line in lines).encode()
    steps: list[dict] = [
        {"update": {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "seq"}},
    ]
    for start in range(0, len(data), 4096):
        chunk = base64.b64encode(data[start : start + 4096]).decode()
        steps.append(
            {
                "update": {
                    "sessionUpdate": "terminal_output_chunk",
                    "terminalId": "t1",
                    "data": chunk,
                }
            }
        )
        steps.append({"sleep": 0.005})
    steps.append(
        {
            "update": {
                "sessionUpdate": "terminal_update",
                "terminalId": "t1",
                "exitStatus": {"exitCode": 0},
            }
        }
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"protocol": 2, "on_prompt": steps}))
    ed = editor_factory(script)
    ed.lua(
        "vim.api.nvim_create_autocmd('User', {pattern = 'AcplsTerminal', callback = function(ev)"
        " require('acpls.terminals').show(ev.data.sessionId, ev.data.terminalId) end})"
    )
    ed.nvim.command(f"edit {ed.workspace / 'hello.txt'}")
    ed.nvim.command("Acpls prompt run")
    ed.wait_turn_end(timeout=60)
    shown = ed.wait(
        "local t = require('acpls.terminals').list()[1]"
        " if not t or require('acpls.terminals').pending_bytes() > 0 then return nil end"
        " local lines = T.lines(t.buf)"
        " for _, l in ipairs(lines) do if l:find('process exit 0', 1, true) then"
        "   return {lines = lines, height = vim.api.nvim_win_get_height(vim.fn.win_findbuf(t.buf)[1])}"
        " end end",
        timeout=60,
        what="the whole output and the exit line in the pane",
    )
    # The pane is smaller than the window the terminal would otherwise have been sized for.
    assert shown["height"] <= 12
    text = [line for line in shown["lines"] if line != ""]
    assert text[:-1] == lines, "lines missing or out of order in the pane"
    assert text[-1] == "[process exit 0]"
    assert ed.errors() == []


def test_output_is_fed_across_ticks_and_a_pane_shown_midway_keeps_every_line(plain_nvim):
    """One big `acpls/terminalOutput` is not fed in one go (the handler returns with output still
    waiting), the pane opened while it streams loses no row, and the exit line comes last."""
    result = plain_nvim.exec_lua(
        """
        -- Above Neovim's default scrollback (the default here): every line must be kept.
        require('acpls.config').set({ui = {terminal = {scrollback = 30000}}})
        local terms = require('acpls.terminals')
        local parts = {}
        for i = 0, 19999 do parts[#parts + 1] = ('line %05d\\r\\n'):format(i) end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'seq'}, {})
        terms.on_output({sessionId = 's', terminalId = 't', text = table.concat(parts)}, {})
        terms.on_update({sessionId = 's', terminalId = 't', command = 'seq',
                         exitStatus = {exitCode = 0}}, {})
        local waiting_after_handler = terms.pending_bytes()
        -- Let some of it through hidden, then show the pane mid-stream.
        vim.wait(5000, function() return terms.pending_bytes() < waiting_after_handler / 2 end, 1)
        local waiting_when_shown = terms.pending_bytes()
        terms.show('s', 't')
        local done = vim.wait(30000, function() return terms.pending_bytes() == 0 end, 5)
        vim.wait(200)
        local buf = terms.list()[1].buf
        return {waiting_after_handler = waiting_after_handler,
                waiting_when_shown = waiting_when_shown, done = done,
                lines = vim.tbl_filter(function(l) return l ~= '' end, T.lines(buf))}
        """
    )
    assert result["waiting_after_handler"] > 200_000
    assert result["waiting_when_shown"] > 0
    assert result["done"] is True
    lines = result["lines"]
    assert lines[-1] == "[process exit 0]"
    assert lines[:-1] == [f"line {i:05d}" for i in range(20_000)]


def test_many_output_messages_arriving_while_earlier_ones_are_fed_all_reach_the_pane(plain_nvim):
    """Messages keep coming while the pane is fed from the front of its queue (the queue once
    lost its tail there: 35,000 lines stopped at 25,645)."""
    result = plain_nvim.exec_lua(
        """
        require('acpls.config').set({ui = {terminal = {scrollback = 40000}}})
        local terms = require('acpls.terminals')
        terms.on_update({sessionId = 's', terminalId = 't', command = 'log'}, {})
        local n = 0
        for m = 1, 500 do
          local parts = {}
          for _ = 1, 70 do parts[#parts + 1] = ('row %06d\\n'):format(n); n = n + 1 end
          terms.on_output({sessionId = 's', terminalId = 't', text = table.concat(parts)}, {})
          if m % 7 == 0 then vim.wait(2) end
        end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'log',
                         exitStatus = {exitCode = 0}}, {})
        local done = vim.wait(60000, function() return terms.pending_bytes() == 0 end, 5)
        vim.wait(200)
        local lines = vim.api.nvim_buf_get_lines(terms.list()[1].buf, 0, -1, false)
        while lines[#lines] == '' do table.remove(lines) end
        return {done = done, lines = lines}
        """
    )
    assert result["done"] is True
    lines = result["lines"]
    assert lines[-1] == "[process exit 0]"
    assert lines[-2] == ""
    assert lines[:-2] == [f"row {i:06d}" for i in range(35_000)]


def test_a_burst_of_output_messages_queues_one_feeding_tick_at_a_time(plain_nvim):
    """Messages arriving the way the LSP client delivers them (each scheduled from a libuv
    callback) never stack feeding ticks in Neovim's event queue: one waits at most, so the
    user's own requests are not queued behind a hundred budgets of feeding (RPC round trips of a
    second while a stream showed, issue 18 E3). Every line still arrives, the exit line last."""
    nvim = plain_nvim
    nvim.exec_lua(
        """
        local terms = require('acpls.terminals')
        _G.BURST = {waiting = 0, most = 0, sent = 0}
        local schedule = vim.schedule
        vim.schedule = function(fn)
          local src = debug.getinfo(fn, 'S').source
          if not src:find('terminals.lua', 1, true) then return schedule(fn) end
          BURST.waiting = BURST.waiting + 1
          BURST.most = math.max(BURST.most, BURST.waiting)
          return schedule(function() BURST.waiting = BURST.waiting - 1; fn() end)
        end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'log'}, {})
        terms.show('s', 't')
        local n = 0
        local feeder = vim.uv.new_timer()
        feeder:start(0, 1, function()
          BURST.sent = BURST.sent + 1
          local parts = {}
          for _ = 1, 600 do parts[#parts + 1] = ('row %06d\\n'):format(n); n = n + 1 end
          local text = table.concat(parts)
          schedule(function()
            terms.on_output({sessionId = 's', terminalId = 't', text = text}, {})
          end)
          if BURST.sent == 120 then
            feeder:stop()
            schedule(function()
              terms.on_update({sessionId = 's', terminalId = 't', command = 'log',
                               exitStatus = {exitCode = 0}}, {})
              BURST.ended = true
            end)
          end
        end)
        """
    )
    deadline = time.monotonic() + 120
    while not nvim.exec_lua(
        "return BURST.ended and require('acpls.terminals').pending_bytes() == 0"
    ):
        assert time.monotonic() < deadline, "the output never finished feeding"
        time.sleep(0.05)
    time.sleep(0.3)
    result = nvim.exec_lua(
        """
        local terms = require('acpls.terminals')
        local lines = vim.api.nvim_buf_get_lines(terms.list()[1].buf, 0, -1, false)
        while lines[#lines] == '' do table.remove(lines) end
        return {most = BURST.most, stats = terms.stats(), tail = vim.list_slice(lines, #lines - 5)}
        """
    )
    assert result["most"] == 1, result
    assert result["stats"]["queued"] == result["stats"]["ticks"]
    # The last row, then the exit line (wrapped at the screen's width), which says that rows
    # above the scrollback were dropped.
    tail = result["tail"]
    exit_at = next(i for i, line in enumerate(tail) if line.startswith("[process exit 0"))
    assert tail[exit_at - 2] == f"row {120 * 600 - 1:06d}"
    assert "lines above the last 10000 were dropped" in "".join(tail[exit_at:])


def test_a_hidden_pane_is_fed_in_bigger_slices_than_a_shown_one(plain_nvim):
    """Output for a pane nobody sees is joined into slices four times as big (fewer
    `nvim_chan_send` calls for the same feeding budget); once the pane is shown, its slices are
    small again so that a key waits behind little parsing (issue 18: the plugin coalesces while
    the pane is hidden). Every line still arrives, in order."""
    result = plain_nvim.exec_lua(
        """
        require('acpls.config').set({ui = {terminal = {scrollback = 40000}}})
        local terms = require('acpls.terminals')
        local sends = {}
        local send = vim.api.nvim_chan_send
        vim.api.nvim_chan_send = function(chan, data)
          sends[#sends + 1] = {shown = #vim.fn.win_findbuf(terms.list()[1].buf) > 0, n = #data}
          return send(chan, data)
        end
        local function batch(from)
          local parts = {}
          for i = from, from + 9999 do parts[#parts + 1] = ('line %05d\\r\\n'):format(i) end
          return table.concat(parts)
        end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'log'}, {})
        -- Many small messages, as acpls sends them.
        local text = batch(0)
        for at = 1, #text, 2000 do
          terms.on_output({sessionId = 's', terminalId = 't', text = text:sub(at, at + 1999)}, {})
        end
        local hidden_done = vim.wait(30000, function() return terms.pending_bytes() == 0 end, 5)
        terms.show('s', 't')
        vim.wait(100)
        text = batch(10000)
        for at = 1, #text, 2000 do
          terms.on_output({sessionId = 's', terminalId = 't', text = text:sub(at, at + 1999)}, {})
        end
        local shown_done = vim.wait(30000, function() return terms.pending_bytes() == 0 end, 5)
        vim.api.nvim_chan_send = send
        vim.wait(200)
        local lines = vim.tbl_filter(function(l) return l ~= '' end, T.lines(terms.list()[1].buf))
        local hidden, shown = {}, {}
        for _, s in ipairs(sends) do
          table.insert(s.shown and shown or hidden, s.n)
        end
        return {hidden_done = hidden_done, shown_done = shown_done, hidden = hidden,
                shown = shown, lines = lines}
        """
    )
    assert result["hidden_done"] is True and result["shown_done"] is True
    hidden, shown = result["hidden"], result["shown"]
    total = 20_000 * len("line 00000\r\n")
    assert sum(hidden) + sum(shown) == total
    # 120,000 bytes each way: two sends hidden (one full 64 KiB slice), eight shown.
    assert max(hidden) > 32 * 1024 and len(hidden) <= 3, hidden
    assert max(shown) <= 16 * 1024 and len(shown) >= 7, shown
    assert result["lines"] == [f"line {i:05d}" for i in range(20_000)]


def test_a_running_pane_past_its_scrollback_says_so_in_its_name_then_in_its_exit_line(
    plain_nvim,
):
    """Neovim drops a terminal's rows above 'scrollback' without a word: while the command
    still runs the pane's name says `top trimmed`, and the exit line says how many are kept."""
    result = plain_nvim.exec_lua(
        """
        require('acpls.config').set({ui = {terminal = {scrollback = 100}}})
        local terms = require('acpls.terminals')
        terms.on_update({sessionId = 's', terminalId = 't', command = 'log'}, {})
        terms.show('s', 't')
        local function feed(from, to)
          local parts = {}
          for i = from, to do parts[#parts + 1] = ('row %04d\\r\\n'):format(i) end
          terms.on_output({sessionId = 's', terminalId = 't', text = table.concat(parts)}, {})
          vim.wait(10000, function() return terms.pending_bytes() == 0 end, 5)
        end
        local buf = terms.list()[1].buf
        feed(1, 50)
        local name_within = vim.api.nvim_buf_get_name(buf)
        feed(51, 1000)
        local name_past = vim.api.nvim_buf_get_name(buf)
        terms.on_update({sessionId = 's', terminalId = 't', command = 'log',
                         exitStatus = {exitCode = 0}}, {})
        vim.wait(10000, function() return terms.pending_bytes() == 0 end, 5)
        vim.wait(200)
        local lines = vim.tbl_filter(function(l) return l ~= '' end, T.lines(buf))
        return {name_within = name_within, name_past = name_past, lines = lines,
                name_end = vim.api.nvim_buf_get_name(buf)}
        """
    )
    assert result["name_within"].endswith("log [running]")
    assert result["name_past"].endswith("log [running, top trimmed]")
    assert result["name_end"].endswith("log [exit 0, top trimmed]")
    lines = result["lines"]
    assert "row 0001" not in lines
    exit_at = next(i for i, line in enumerate(lines) if line.startswith("[process exit 0"))
    assert lines[exit_at - 1] == "row 1000"
    assert "lines above the last 100 were dropped" in "".join(lines[exit_at:])


def test_output_beyond_what_the_pane_can_take_is_skipped_with_a_note_where_it_was(plain_nvim):
    """Output waiting to be fed past 16 MB (a flood faster than Neovim's emulator) is skipped,
    oldest first, and the pane says how many bytes where they were; what follows is fed whole."""
    result = plain_nvim.exec_lua(
        """
        local terms = require('acpls.terminals')
        local fed = {}
        local send = vim.api.nvim_chan_send
        -- Record what the pane is fed, without Neovim's emulator parsing 8 MB.
        vim.api.nvim_chan_send = function(_, data) fed[#fed + 1] = data end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'flood'}, {})
        local old = ('o'):rep(1023) .. '\\n'
        local new = ('n'):rep(1023) .. '\\n'
        -- Two messages in one go (before any feeding tick): 9 MiB, then 8 MiB.
        terms.on_output({sessionId = 's', terminalId = 't', text = old:rep(9 * 1024)}, {})
        terms.on_output({sessionId = 's', terminalId = 't', text = new:rep(8 * 1024)}, {})
        vim.wait(30000, function() return terms.pending_bytes() == 0 end, 5)
        vim.api.nvim_chan_send = send
        local all = table.concat(fed)
        local note_at = all:find('acpls: ', 1, true)
        local note_end = note_at and all:find('\\n', note_at, true) or #all
        return {note = note_at and all:sub(note_at, note_end) or '(no note)',
                rest = #all - note_end, old_fed = all:find(('o'):rep(64), 1, true) ~= nil,
                tail_ok = all:sub(-1024) == new}
        """
    )
    # The first message's bytes as acpls sent them.
    skipped = 9 * 1024 * 1024
    assert (
        f"acpls: {skipped} bytes of output skipped: more than the pane could show"
        in (result["note"])
    )
    assert result["old_fed"] is False, "nothing of the skipped message was fed"
    assert result["rest"] == 8 * 1024 * 1024, "the later message was fed whole"
    assert result["tail_ok"] is True


def test_a_pane_shrunk_and_grown_again_keeps_every_row(plain_nvim):
    """Resizes never drop rows (issue 18): rows a smaller pane cannot show go to its scrollback
    and come back when it grows. (Resizing while output streams is a Neovim 0.11 bug, also with
    its own :terminal: see doc/acpls.txt, acpls-terminals.)"""
    nvim = plain_nvim
    nvim.command("set lines=50 columns=100")
    result = nvim.exec_lua(
        """
        local terms = require('acpls.terminals')
        local function rows()
          return vim.tbl_filter(function(l) return l ~= '' end, T.lines(terms.list()[1].buf))
        end
        local function settle() vim.cmd('redraw'); vim.wait(100); vim.cmd('redraw') end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'seq'}, {})
        local win = terms.show('s', 't')
        vim.api.nvim_win_set_height(win, 30)
        local parts = {}
        for i = 1, 100 do parts[#parts + 1] = ('line %03d\\n'):format(i) end
        terms.on_output({sessionId = 's', terminalId = 't', text = table.concat(parts)}, {})
        vim.wait(5000, function() return terms.pending_bytes() == 0 end, 5)
        settle()
        local before = rows()
        vim.api.nvim_win_set_height(win, 5)
        settle()
        local shrunk = rows()
        vim.api.nvim_win_set_height(win, 40)
        settle()
        return {before = before, shrunk = shrunk, grown = rows()}
        """
    )
    expected = [f"line {i:03d}" for i in range(1, 101)]
    assert result["before"] == expected
    assert result["shrunk"] == expected
    assert result["grown"] == expected


def test_a_character_cut_between_two_slices_reaches_the_pane_whole(plain_nvim):
    """A long piece is fed in slices; a slice that ended inside a UTF-8 character made the pane
    show `�` for it (a 35k-line log with a non-ASCII character a line: one wrong line in the
    retained tail, every run). Every line holds two-, three- and four-byte characters at shifting
    offsets, so some slice boundary falls inside each width."""
    result = plain_nvim.exec_lua(
        """
        require('acpls.config').set({ui = {terminal = {scrollback = 30000}}})
        local terms = require('acpls.terminals')
        local parts = {}
        for i = 0, 9999 do
          parts[#parts + 1] = ('%s é ✓ 𝄞 %05d\\r\\n'):format(('x'):rep(i % 7), i)
        end
        terms.on_update({sessionId = 's', terminalId = 't', command = 'log'}, {})
        terms.on_output({sessionId = 's', terminalId = 't', text = table.concat(parts)}, {})
        terms.on_update({sessionId = 's', terminalId = 't', command = 'log',
                         exitStatus = {exitCode = 0}}, {})
        local done = vim.wait(30000, function() return terms.pending_bytes() == 0 end, 5)
        vim.wait(200)
        local buf = terms.list()[1].buf
        return {done = done, lines = vim.tbl_filter(function(l) return l ~= '' end, T.lines(buf))}
        """
    )
    assert result["done"] is True
    lines = result["lines"]
    assert lines[-1] == "[process exit 0]"
    wanted = [f"{'x' * (i % 7)} é ✓ 𝄞 {i:05d}".lstrip() for i in range(10_000)]
    broken = [
        (got, want) for got, want in zip(lines[:-1], wanted, strict=True) if got.strip() != want
    ]
    assert broken == [], broken[:3]
