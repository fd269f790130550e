"""Which of `defaultConfig`'s values to set on a session, and why one cannot be (pure)."""

from __future__ import annotations

from acpls.translate.config_defaults import plan_defaults, select_values

MODEL = {
    "configId": "model",
    "type": "select",
    "currentValue": "fast",
    "options": [
        {"groupId": "a", "name": "A", "options": [{"value": "fast", "name": "F"}]},
        {"groupId": "b", "name": "B", "options": [{"value": "deep", "name": "D"}]},
    ],
}
FLAT = {"id": "effort", "type": "select", "currentValue": "low", "options": [{"value": "low"}]}
TOGGLE = {"configId": "thinking", "type": "boolean", "currentValue": True}


def test_grouped_and_flat_values_and_v1_ids():
    assert select_values(MODEL) == ["fast", "deep"]
    assert plan_defaults([FLAT], [("effort", "low")]) == ([], [])


def test_only_what_differs_is_set_in_the_settings_order():
    wanted = [("thinking", False), ("model", "deep"), ("effort", "low")]
    assert plan_defaults([MODEL, FLAT, TOGGLE], wanted) == (
        [("thinking", False), ("model", "deep")],
        [],
    )


def test_each_misfit_is_named():
    wanted = [("model", "huge"), ("model", True), ("thinking", "yes"), ("speed", "max")]
    to_set, problems = plan_defaults([MODEL, TOGGLE, "junk", {"name": "no id"}], wanted)
    assert to_set == []
    assert problems == [
        "model: 'huge' is not one of its values (fast, deep)",
        "model: takes one of its values, not True",
        "thinking: takes true or false, not 'yes'",
        "speed: the agent offers no such option (it offers model, thinking)",
    ]
    assert plan_defaults(None, [("x", "y")])[1] == [
        "x: the agent offers no such option (it offers none)"
    ]
