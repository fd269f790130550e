"""`textDocument/codeAction` answers: the pure actions of translate/prompt_actions.py and
translate/fix_actions.py as LSP code actions that run `acpls.prompt`."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from acpls.translate.fix_actions import fix_actions
from acpls.translate.prompt_actions import agent_comment_action, selection_action
from acpls.translate.uris import uri_to_path


def code_actions(
    params: types.CodeActionParams, text: str | None, converter: Any
) -> list[types.CodeAction]:
    """Every action for the range: ask about the selection, the @agent comment on its first line
    (when the document's `text` is known), and one fix per diagnostic the editor passed."""
    uri = params.text_document.uri
    actions: list[types.CodeAction] = []
    selection = selection_action(uri, converter.unstructure(params.range))
    if selection is not None:
        actions.append(_prompt_action(selection.title, selection.prompt))
    if text is not None:
        comment = agent_comment_action(uri, text, params.range.start.line)
        if comment is not None:
            actions.append(_prompt_action(comment.title, comment.prompt))
    return actions + _fix_actions(params, text, converter)


def _fix_actions(
    params: types.CodeActionParams, text: str | None, converter: Any
) -> list[types.CodeAction]:
    """ "Ask the agent to fix: …" for each diagnostic the editor passed, and "fix all"."""
    uri = params.text_document.uri
    diagnostics = params.context.diagnostics
    as_json = [converter.unstructure(d) for d in diagnostics]
    # CodeAction.diagnostics carries the editor's own diagnostics back.
    originals = {id(json): d for json, d in zip(as_json, diagnostics, strict=True)}
    try:
        name = uri_to_path(uri).rsplit("/", 1)[-1]
    except ValueError:
        name = uri
    line_count = len(text.splitlines()) if text is not None else None
    actions = []
    for fix in fix_actions(uri, name, as_json, line_count):
        action = _prompt_action(fix.title, fix.prompt)
        action.kind = types.CodeActionKind.QuickFix
        action.diagnostics = [originals[id(json)] for json in fix.diagnostics]
        actions.append(action)
    return actions


def _prompt_action(title: str, prompt: dict[str, Any]) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.Empty,
        command=types.Command(
            title=title,
            command="acpls.prompt",
            arguments=[{"text": prompt["text"], "context": prompt["context"]}],
        ),
    )
