"""Slotted classes with a dataclass's ``repr``, equality and hash, without its import cost.

A dataclass compiles the source of its methods when its module is imported: ~0.3 ms a
class, ~20 ms at the start of every lint that loads every reader (issue 19).  These bases
give the same methods once, computed over the class's ``__slots__`` (its fields), so
that a class costs what any class costs (~5 µs).  A class lists its fields in
``__slots__``, annotates them (``Final`` where the dataclass was frozen: mypy then keeps
them unchanged) and writes its ``__init__``; its instances pickle as any slotted object.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar, TypeVar

P = TypeVar("P", bound="Plain")


def _slots(cls: type) -> list[str]:
    return [name for base in reversed(cls.__mro__) for name in base.__dict__.get("__slots__", ())]


def _fields(cls: Any) -> tuple[str, ...]:
    slots = _slots(cls)
    code = getattr(cls.__init__, "__code__", None)
    params = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount] if code is not None else ()
    return tuple([name for name in params if name in slots] + [name for name in slots if name not in params])


class Plain:
    """Identity equality and hash (a dataclass's ``eq=False``), ``Name(field=value, ...)``
    as ``repr``.  ``_fields``: the slots of the class and its bases, in the order of
    ``__init__``'s parameters (a dataclass's field order; ``__slots__`` is sorted), the
    others after; a class may set it to leave a slot out of ``repr`` and comparisons
    (a dataclass's ``field(compare=False, repr=False)``)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _values: ClassVar[Any]  # the fields' values of an instance, as one tuple

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_fields" not in cls.__dict__:
            cls._fields = _fields(cls)
        names = cls._fields
        if len(names) == 1:
            one = attrgetter(names[0])
            cls._values = staticmethod(lambda instance: (one(instance),))
        else:
            cls._values = staticmethod(attrgetter(*names) if names else lambda _: ())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"


class Value(Plain):
    """Equal when of the same class with equal fields, hashed on them: a frozen dataclass."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) == self._values(other))

    def __hash__(self) -> int:
        return hash(self._values(self))


class Mutable(Plain):
    """Equal when of the same class with equal fields, and unhashable (it changes): a
    dataclass's default."""

    __slots__ = ()
    __hash__: ClassVar[None]  # type: ignore[assignment]  # (Python sets it: __eq__ without __hash__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values(self) == self._values(other))


def replace(instance: P, **changes: Any) -> P:
    """A copy of ``instance`` with ``changes`` (``dataclasses.replace``): every slot is a
    parameter of the class's ``__init__``, under its own name."""
    return type(instance)(**{name: getattr(instance, name) for name in _slots(type(instance))} | changes)
