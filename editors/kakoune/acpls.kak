# acpls for Kakoune with kakoune-lsp (version 17 or later, configured in kakrc).
#
# Put this file in your autoload directory, or `source` it in your kakrc after kakoune-lsp's
# `eval %sh{kak-lsp}` line.  acpls then runs beside each buffer's own language server, in generic
# LSP mode:
#   :acpls-prompt <question>   ask the agent; the selected lines go along as context when the
#                              selection is longer than one character
#   :acpls-transcript          show the conversation as it is written (a read-only *acpls* buffer)
#   :acpls-cancel              stop the agent's turn
#   :lsp-code-actions          on a selection: "Ask the agent about this selection…"; on a line
#                              with an `@agent <question>` comment: "Send to agent: <question>"
# Permission prompts ("Allow", "Reject", …) appear as kakoune-lsp menus.  kakoune-lsp does not
# support window/showDocument, so follow-along (opening the files the agent reads) does not happen.

declare-option -docstring %{acpls' entry in lsp_servers (TOML).  Change the agent here: a preset
(claude, gemini, codex, goose, opencode, demo) or an inline table {command = "...", args = [...]}.
The [acpls.settings.acpls] table is acpls' settings (see acpls' editors/protocol.md, section 1).} \
str acpls_lsp_server %{
[acpls]
root_globs = [".git", ".hg"]
settings_section = "acpls"
[acpls.settings.acpls]
agent = "claude"
follow = { enabled = true }
}

declare-option -docstring "filetypes whose buffers get acpls beside their own language server (a regex)" \
str acpls_filetypes 'c|cpp|css|go|html|java|javascript|json|kotlin|lua|makefile|markdown|python|ruby|rust|sh|sql|toml|typescript|yaml|zig'

declare-option -hidden str acpls_transcript_fifo

# After the default `lsp-filetype-*` hooks have set lsp_servers, add acpls once.
hook -group acpls global BufSetOption filetype=.* %{
    evaluate-commands %sh{
        printf '%s\n' "$kak_opt_filetype" | grep -Eqx "$kak_opt_acpls_filetypes" || exit 0
        case "$kak_opt_lsp_servers" in
            (*'[acpls]'*) ;;
            (*) printf '%s\n' 'set-option -add buffer lsp_servers %opt{acpls_lsp_server}' ;;
        esac
    }
}

define-command acpls-prompt -params 1.. -docstring %{acpls-prompt <question>: ask the agent
The lines of the main selection go along as context when it is longer than one character.} %{
    evaluate-commands %sh{
        json_string() {
            tab=$(printf '\t')
            printf '%s' "$1" | tr -d '\000-\010\013-\037' |
                sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e "s/$tab/\\\\t/g" |
                awk 'BEGIN { printf "\"" } NR > 1 { printf "\\n" } { printf "%s", $0 }
                     END { printf "\"" }'
        }
        file_uri() {
            printf '%s' "$1" | od -An -v -tx1 | tr -s ' \n' '\n\n' | awk '
                BEGIN { ORS = ""; print "file://"
                        for (i = 32; i < 127; i++) keep[sprintf("%02x", i)] = sprintf("%c", i) }
                $0 == "" { next }
                keep[$0] ~ /[A-Za-z0-9\/._~-]/ { print keep[$0]; next }
                { print "%" toupper($0) }'
        }
        text=$(json_string "$*")
        argument="{\"text\": $text"
        if [ "$kak_selection_length" -gt 1 ] && [ -f "$kak_buffile" ]; then
            # selection_desc is "anchor_line.col,cursor_line.col"; send whole lines, so byte
            # columns never need converting to LSP's UTF-16 ones.
            lines=$(printf '%s' "$kak_selection_desc" | awk -F'[.,]' '
                { a = $1; b = $3; if (a > b) { t = a; a = b; b = t }; print a - 1, b }')
            first=${lines% *}
            end=${lines#* }
            uri=$(json_string "$(file_uri "$kak_buffile")")
            argument="$argument, \"context\": [{\"uri\": $uri, \"range\": {\"start\": {\"line\": $first, \"character\": 0}, \"end\": {\"line\": $end, \"character\": 0}}}]"
        fi
        argument="[$argument}]"
        printf "lsp-execute-command acpls.prompt '%s'\n" "$(printf '%s' "$argument" | sed "s/'/''/g")"
    }
}

define-command acpls-cancel -docstring "acpls-cancel: stop the agent's turn" %{
    lsp-execute-command acpls.cancel '[{}]'
}

define-command acpls-transcript -docstring %{acpls-transcript: show the newest conversation
It is the transcript acpls writes under $XDG_STATE_HOME/acpls/transcripts/, followed as it grows.} %{
    # An earlier *acpls* buffer stops its follower when it goes (see the BufClose hook).
    try %{ delete-buffer *acpls* }
    evaluate-commands %sh{
        dir="${XDG_STATE_HOME:-$HOME/.local/state}/acpls/transcripts"
        file=$(ls -t "$dir"/*.md 2>/dev/null | head -n 1)
        if [ -z "$file" ]; then
            printf '%s\n' "fail 'acpls: no transcript yet in $dir: ask the agent something first'"
            exit
        fi
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/acpls-kak.XXXXXX") || exit
        mkfifo "$tmp/fifo" || exit
        # The transcript is append-only: follow it like `tail -f`, into a fifo buffer.
        ( tail -n +1 -f "$file" > "$tmp/fifo" 2>/dev/null & echo $! > "$tmp/pid" ) \
            > /dev/null 2>&1 < /dev/null
        printf "edit! -fifo '%s' -scroll *acpls*\n" "$tmp/fifo"
        printf "set-option buffer acpls_transcript_fifo '%s'\n" "$tmp/fifo"
    }
    set-option buffer filetype markdown
    set-option buffer readonly true
    hook -always -once buffer BufClose .* %{
        nop %sh{
            tmp=$(dirname "$kak_opt_acpls_transcript_fifo")
            kill "$(cat "$tmp/pid")" 2>/dev/null
            rm -rf "$tmp"
        }
    }
}
