# pyright: reportMissingImports=false
"""Tests for calc.py: `python -m pytest -q` runs them, and so does the demo agent."""

from calc import add, divide, multiply, subtract


def test_add() -> None:
    assert add(2, 3) == 5


def test_subtract() -> None:
    assert subtract(5, 3) == 2


def test_multiply() -> None:
    assert multiply(4, 2.5) == 10


def test_divide_by_zero() -> None:
    try:
        divide(1, 0)
    except ZeroDivisionError:
        return
    raise AssertionError("divide(1, 0) should raise ZeroDivisionError")
