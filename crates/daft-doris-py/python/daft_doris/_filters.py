"""Daft filter expressions into doris-sql's predicate IR (JSON-ready dicts).

The filter is split at its top-level ANDs; each conjunct that translates completely is
pushed, the rest stay with Daft (which re-applies the whole filter after the scan, so
pushing a subset is always safe). A conjunct is translated all or nothing: one node the IR
cannot express exactly keeps the whole conjunct in Daft.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

from daft.expressions import Expression
from daft.expressions.visitor import ExpressionVisitor

from daft_doris.errors import UnsupportedPredicateError

_COMPARE = {
    "equal": "eq",
    "not_equal": "not_eq",
    "less_than": "lt",
    "less_than_or_equal": "lt_eq",
    "greater_than": "gt",
    "greater_than_or_equal": "gt_eq",
    "eq_null_safe": "null_safe_eq",
}
_I64 = (-(2**63), 2**63 - 1)
_I128 = (-(2**127), 2**127 - 1)


def literal(value: Any) -> dict[str, Any]:
    """A Python value as an IR literal; raises for values SQL cannot express exactly."""
    if value is None:
        raise UnsupportedPredicateError("NULL comparisons stay in Daft")
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        if _I64[0] <= value <= _I64[1]:
            return {"type": "int64", "value": value}
        if _I128[0] <= value <= _I128[1]:
            return {"type": "large_int", "value": str(value)}
        raise UnsupportedPredicateError("integer out of range")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnsupportedPredicateError("non-finite float")
        return {"type": "float64", "value": value}
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise UnsupportedPredicateError("non-finite decimal")
        return {"type": "decimal", "value": format(value, "f")}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, bytes):
        return {"type": "binary", "value": value.hex()}
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            raise UnsupportedPredicateError("time-zone-aware datetime")
        text = value.isoformat(sep=" ", timespec="microseconds" if value.microsecond else "seconds")
        return {"type": "date_time", "value": text}
    if isinstance(value, datetime.date):
        return {"type": "date", "value": value.isoformat()}
    raise UnsupportedPredicateError(f"literal of type {type(value).__name__}")


class _ToIr(ExpressionVisitor[dict]):
    """One conjunct into IR; raises UnsupportedPredicateError on anything else."""

    def visit_col(self, name: str) -> dict:
        return {"kind": "column", "name": name}

    def visit_lit(self, value: Any) -> dict:
        return {"kind": "literal", "value": literal(value)}

    def visit_alias(self, expr: Expression, alias: str) -> dict:
        raise UnsupportedPredicateError("alias")

    def visit_cast(self, expr: Expression, dtype: Any) -> dict:
        raise UnsupportedPredicateError("cast")

    def visit_coalesce(self, args: list[Expression]) -> dict:
        raise UnsupportedPredicateError("coalesce")

    def _operand(self, expr: Expression) -> dict:
        node = self.visit(expr)
        if node["kind"] not in ("column", "literal", "arithmetic"):
            raise UnsupportedPredicateError("a predicate used as a value")
        return node

    def _column(self, expr: Expression) -> dict:
        node = self.visit(expr)
        if node["kind"] != "column":
            raise UnsupportedPredicateError("operand must be a column")
        return node

    def _text(self, expr: Expression) -> str:
        node = self.visit(expr)
        if node["kind"] != "literal" or node["value"]["type"] != "string":
            raise UnsupportedPredicateError("pattern must be a string literal")
        return node["value"]["value"]

    def visit_function(self, name: str, args: list[Any]) -> dict:
        if name in _COMPARE:
            left, right = (self._operand(a) for a in args)
            if left["kind"] == "literal" and right["kind"] == "literal":
                raise UnsupportedPredicateError("constant comparison")
            return {"kind": "compare", "op": _COMPARE[name], "left": left, "right": right}
        if name in ("and", "or"):
            return {"kind": name, "args": [self.visit(a) for a in args]}
        if name == "not":
            return {"kind": "not", "arg": self.visit(args[0])}
        if name in ("is_null", "not_null"):
            return {"kind": "is_null", "arg": self._column(args[0]), "negated": name == "not_null"}
        if name == "between":
            arg, low, high = (self._operand(a) for a in args)
            return {"kind": "between", "arg": arg, "low": low, "high": high}
        if name == "is_in":
            arg, items = args
            values = [self.visit(i) for i in items]
            if not values or any(v["kind"] != "literal" for v in values):
                raise UnsupportedPredicateError("IN needs a non-empty list of literals")
            return {
                "kind": "in_list",
                "arg": self._column(arg),
                "list": [v["value"] for v in values],
            }
        if name == "starts_with":
            return {"kind": "starts_with", "arg": self._column(args[0]), "prefix": self._text(args[1])}
        if name == "ends_with":
            return {"kind": "ends_with", "arg": self._column(args[0]), "suffix": self._text(args[1])}
        if name == "contains":
            return {"kind": "contains", "arg": self._column(args[0]), "substring": self._text(args[1])}
        raise UnsupportedPredicateError(f"function {name}")


def _conjuncts(expr: Expression) -> list[Expression]:
    """The top-level AND operands of a filter."""

    class Split(ExpressionVisitor[list]):
        def visit_col(self, name: str) -> list:
            return [expr_of[0]]

        def visit_lit(self, value: Any) -> list:
            return [expr_of[0]]

        def visit_alias(self, e: Expression, alias: str) -> list:
            return [expr_of[0]]

        def visit_cast(self, e: Expression, dtype: Any) -> list:
            return [expr_of[0]]

        def visit_coalesce(self, args: list[Expression]) -> list:
            return [expr_of[0]]

        def visit_function(self, name: str, args: list[Any]) -> list:
            if name == "and":
                out = []
                for a in args:
                    out.extend(_conjuncts(a))
                return out
            return [expr_of[0]]

    expr_of = [expr]
    return Split().visit(expr)


def to_ir(expr: Expression | None) -> tuple[dict | None, bool]:
    """The pushable part of a filter as IR, and whether that is the whole filter."""
    if expr is None:
        return None, True
    pushed = []
    complete = True
    for conjunct in _conjuncts(expr):
        try:
            pushed.append(_ToIr().visit(conjunct))
        except (UnsupportedPredicateError, ValueError, TypeError):
            complete = False
    if not pushed:
        return None, False
    ir = pushed[0] if len(pushed) == 1 else {"kind": "and", "args": pushed}
    return ir, complete


def required_columns(expr: Expression | None) -> set[str]:
    """Every column a filter reads."""
    if expr is None:
        return set()

    class Cols(ExpressionVisitor[set]):
        def visit_col(self, name: str) -> set:
            return {name}

        def visit_lit(self, value: Any) -> set:
            return set()

        def visit_alias(self, e: Expression, alias: str) -> set:
            return self.visit(e)

        def visit_cast(self, e: Expression, dtype: Any) -> set:
            return self.visit(e)

        def visit_coalesce(self, args: list[Expression]) -> set:
            return set().union(*(self.visit(a) for a in args))

        def visit_function(self, name: str, args: list[Any]) -> set:
            out: set[str] = set()
            for a in args:
                for item in a if isinstance(a, list) else [a]:
                    out |= self.visit(item)
            return out

    return Cols().visit(expr)
