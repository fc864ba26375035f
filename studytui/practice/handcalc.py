"""Hand arithmetic: the plain expressions a problem's `by_hand` and `calc.answer` are written in.

An expression is numbers, names, + - * / ** ( ), comparisons (< <= > >= == !=), `and`/`or`/`not`
and the functions min, max, ceil, floor, sqrt, log2, abs. A number may carry a unit as people
write it, `64MiB`, `1us`, `2.2TFLOP`, `3.35TB/s`: it is read in SI units (64 x 2^20 bytes). Nothing
else is accepted (no attributes, no subscripts, no other calls): the expression is parsed with
`ast` and walked, never `eval`ed.

A formula may be a short program: steps `name = expression` separated by `;`, then the result,
as a worked solution is written ('w = ceil(256 / 32); floor(64 / w)').

`literals` lists the numbers a formula is written with, for the check that every number in a
hand formula is one the question states.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from typing import Callable, Mapping

from studytui.core.errors import UsageError
from studytui.core.tuples import Tuple

FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min, "max": max, "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt, "log2": math.log2, "abs": abs,
}

# Units a number may carry inside an expression, longest first so that 'GiB' wins over 'B'.
_UNIT_FACTORS: dict[str, float] = {
    "TFLOP/s": 1e12, "PFLOP/s": 1e15, "GFLOP/s": 1e9, "TB/s": 1e12, "GB/s": 1e9, "MB/s": 1e6,
    "PFLOP": 1e15, "TFLOP": 1e12, "GFLOP": 1e9, "MFLOP": 1e6,
    "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40,
    "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
    "ms": 1e-3, "us": 1e-6, "ns": 1e-9,
}
# Patterns as text, compiled by `re` on first use and kept in its cache: importing this module
# compiles nothing (the unit pattern alone took 0.6 ms; issue 27).
_UNIT_RE = (
    r"(?<![\w.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s?("
    + "|".join(re.escape(u) for u in sorted(_UNIT_FACTORS, key=len, reverse=True))
    + r")(?![\w/])"
)


class HandError(UsageError):
    """An expression that is not plain arithmetic, or that names something undefined."""


class Literal(Tuple):
    """A number as written in an expression. (A named tuple: cheaper to create at import than a
    frozen dataclass, see practice/model.py.)"""

    value: float
    exponent: bool  # the exponent of a power of 2 or 10 (2**30): a unit constant, not a stated number


def _with_units(text: str) -> str:
    """'64MiB' -> '(64*1073741824/1024)'-style SI products the parser can read."""

    def repl(m: re.Match[str]) -> str:
        factor = _UNIT_FACTORS[m.group(2)]
        return f"({m.group(1)}*{factor!r})"

    return re.sub(_UNIT_RE, repl, text)


def parse(text: str) -> ast.Expression:
    """The checked tree of one expression. Trees are shared (never change one): `studytui check`
    reads the same few hundred formulas for every seed of every problem."""
    return _parse(str(text))


@functools.lru_cache(maxsize=4096)  # bounded: an answer a learner types is an expression too
def _parse(text: str) -> ast.Expression:
    source = _with_units(" ".join(text.split()))
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise HandError(f"{text!r} is not an arithmetic expression") from None
    _check(tree.body, text)
    return tree


_ALLOWED = (
    ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.Name, ast.Constant, ast.Load, ast.IfExp,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq,
)


def _check(node: ast.AST, text: str) -> None:
    for sub in ast.walk(node):
        if not isinstance(sub, _ALLOWED):
            raise HandError(f"{text!r}: {type(sub).__name__} is not allowed (numbers, names, + - * / ** and min/max/ceil/floor/sqrt/log2)")
        if isinstance(sub, ast.Constant) and (isinstance(sub.value, bool) or not isinstance(sub.value, (int, float, str))):
            raise HandError(f"{text!r}: {sub.value!r} is not a number")
        if isinstance(sub, ast.Call):
            if not isinstance(sub.func, ast.Name) or sub.func.id not in FUNCTIONS or sub.keywords:
                raise HandError(f"{text!r}: only {', '.join(FUNCTIONS)} may be called")


_STEP = r"^\s*([A-Za-z_]\w*)\s*=(?!=)(.*)$"  # (with re.S)


def steps(text: str) -> list[tuple[str, str]]:
    """A formula's steps: (name, expression) for each `name = expression`, ('', expression) last."""
    parts = [part for part in str(text).split(";") if part.strip()]
    if not parts:
        raise HandError(f"{text!r} is empty")
    out: list[tuple[str, str]] = []
    for i, part in enumerate(parts):
        m = re.match(_STEP, part, re.S)
        if i < len(parts) - 1:
            if not m:
                raise HandError(f"{part.strip()!r}: every step before the last is 'name = expression'")
            out.append((m.group(1), m.group(2)))
        else:
            if m:
                raise HandError(f"{part.strip()!r}: the last step is the result, an expression")
            out.append(("", part))
    return out


def names(text: str) -> set[str]:
    """The names a formula uses from outside (not the functions it calls, not its own steps)."""
    return set(_names(str(text)))


@functools.lru_cache(maxsize=4096)
def _names(text: str) -> frozenset[str]:
    used: set[str] = set()
    defined: set[str] = set()
    for name, expr in steps(text):
        tree = parse(expr)
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called} - defined
        if name:
            defined.add(name)
    return frozenset(used)


def literals(text: str) -> list[Literal]:
    """The numbers written in a formula (after units are read: '64MiB' gives 64 and 2^20)."""
    return [lit for _, expr in steps(text) for lit in _literals(expr)]


@functools.lru_cache(maxsize=4096)
def _literals(text: str) -> tuple[Literal, ...]:
    tree = parse(text)
    exponents: set[int] = set()
    unit_factors: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            if isinstance(n.left, ast.Constant) and n.left.value in (2, 10):
                exponents.add(id(n.right))
                if isinstance(n.right, ast.UnaryOp) and isinstance(n.right.operand, ast.Constant):
                    exponents.add(id(n.right.operand))
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and isinstance(n.right, ast.Constant):
            if isinstance(n.right.value, float) and n.right.value in _UNIT_FACTORS.values():
                unit_factors.add(id(n.right))
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            if id(n) in unit_factors:
                continue
            out.append(Literal(float(n.value), id(n) in exponents))
    return tuple(out)


def evaluate(text: str, env: Mapping[str, float | str | bool]) -> float | bool | str:
    """The value of a formula with `env` for its names. HandError for anything not arithmetic."""
    scope = dict(env)
    value: float | bool | str = 0.0
    for name, expr in steps(text):
        tree = parse(expr)
        try:
            value = _eval(tree.body, scope, expr)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:
            raise HandError(f"{expr.strip()!r}: {exc}") from None
        if name:
            scope[name] = value
    return value


def _eval(node: ast.AST, env: Mapping[str, float | str | bool], text: str) -> float | bool | str:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float, str)):  # (bool is an int; _check refuses the rest)
            return node.value
        raise HandError(f"{text!r}: {node.value!r} is not a number")
    if isinstance(node, ast.Name):
        if node.id not in env:
            known = ", ".join(sorted(env)) or "none"
            raise HandError(f"{text!r}: '{node.id}' is not defined (known: {known})")
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env, text)
        if isinstance(node.op, ast.Not):
            return not operand
        number = _num(operand, text)
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.BinOp):
        left, right = _num(_eval(node.left, env, text), text), _num(_eval(node.right, env, text), text)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
        return float(left**right)
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, env, text) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left_value = _eval(node.left, env, text)
        for op, comparator in zip(node.ops, node.comparators):
            right_value = _eval(comparator, env, text)
            if isinstance(op, (ast.Eq, ast.NotEq)):
                same = left_value == right_value
                ok = same if isinstance(op, ast.Eq) else not same
            else:
                a, b = _num(left_value, text), _num(right_value, text)
                ok = {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b}[type(op)]
            if not ok:
                return False
            left_value = right_value
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, env, text) else node.orelse, env, text)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_num(_eval(a, env, text), text) for a in node.args]
        return float(FUNCTIONS[node.func.id](*args))
    raise HandError(f"{text!r}: {type(node).__name__} is not allowed")


def _num(value: float | bool | str, text: str) -> float:
    if isinstance(value, bool) or isinstance(value, str):
        raise HandError(f"{text!r}: {value!r} is not a number")
    return float(value)
