"""Typed access to parsed JSON, every value carrying its path.

A wrong type anywhere becomes one ``InputError`` naming the field the way ``jq`` would, e.g.
``claims[3].selector.position.unit: expected a string``, so the user can find it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from snapshotter.errors import InputError

MAX_STRING_ID = 200  # the citation and answer id columns


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else "a number"


@dataclass(frozen=True)
class Field:
    """A JSON value and the path it was found at (``""`` is the whole document)."""

    value: Any
    path: str = ""

    def fail(self, problem: str) -> InputError:
        return InputError(f"{self.path or '(top level)'}: {problem}")

    def expected(self, what: str) -> InputError:
        return self.fail(f"expected {what}, got {describe(self.value)}")

    def child(self, key: str) -> Field:
        """The member ``key`` (``None`` when absent); the object itself must be an object."""
        obj = self.obj()
        path = f"{self.path}.{key}" if self.path else key
        return Field(obj.get(key), path)

    def has(self, key: str) -> bool:
        return isinstance(self.value, dict) and self.value.get(key) is not None

    def first(self, *keys: str) -> Field:
        """The first of ``keys`` present (camelCase REST and snake_case SDK dumps alike)."""
        for key in keys:
            if self.has(key):
                return self.child(key)
        return self.child(keys[0])

    def obj(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            raise self.expected("an object")
        return self.value

    def items(self) -> Iterator[Field]:
        if not isinstance(self.value, list):
            raise self.expected("a list")
        for index, value in enumerate(self.value):
            yield Field(value, f"{self.path}[{index}]")

    def optional_items(self) -> Iterator[Field]:
        return iter(()) if self.value is None else self.items()

    def text(self, *, empty: bool = False, longest: int | None = None) -> str:
        if not isinstance(self.value, str):
            raise self.expected("a string")
        if not empty and not self.value.strip():
            raise self.fail("expected a non-empty string")
        if longest is not None and len(self.value) > longest:
            raise self.fail(f"longer than {longest} characters")
        return self.value

    def optional_str(self, *, longest: int | None = None) -> str | None:
        return None if self.value is None else self.text(longest=longest)

    def integer(self, *, minimum: int = 0) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.expected("a whole number")
        if self.value < minimum:
            raise self.fail(f"must be at least {minimum}, got {self.value}")
        return self.value

    def optional_int(self, *, minimum: int = 0) -> int | None:
        return None if self.value is None else self.integer(minimum=minimum)

    def optional_obj(self) -> dict[str, Any] | None:
        return None if self.value is None else self.obj()
