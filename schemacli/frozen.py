"""``@frozen_dataclass``: ``@dataclass(frozen=True)`` that costs a fraction as much to create.

The standard library compiles each method it writes for a frozen dataclass from source text
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) when
it creates the class: about 2.5 M instructions a class, and the classes on ``schemacli
validate``'s road are created on every start. Here the standard library still makes the class a
dataclass (its fields, ``dataclasses.fields`` / ``replace`` / ``asdict``, ``__match_args__``)
but writes no method. ``__init__``, ``__eq__`` and ``__hash__`` are the standard library's text,
compiled when first looked up (:class:`_Compiled`): a call costs the same, a wrong call fails
with the same words, and a class never made through ``__init__``, compared or hashed in a run
(the parser fills the schema nodes' ``__dict__``) compiles nothing. ``__repr__`` (recursion
shown as ``...``), ``__setattr__`` and ``__delattr__`` (``FrozenInstanceError``) are closures
over the field names that say what the standard library's say; a class's own ``__eq__``,
``__hash__`` or ``__init__`` is kept, and ``__dataclass_params__`` reads as the standard
library's. tests/unit/test_frozen.py builds each class of the house both ways and compares them.

Supported: what ``@dataclass(frozen=True[, eq=False][, kw_only=True])`` takes, with
``field(default=, default_factory=, init=, repr=, compare=, hash=, kw_only=)``, ``ClassVar``,
``__post_init__`` and dataclass bases. Refused (use ``@dataclass``): ``InitVar``, and a class
that writes ``__setattr__`` or ``__delattr__`` itself (the standard library refuses it too).
"""

from __future__ import annotations

import dataclasses
import sys
from _thread import get_ident
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["frozen_dataclass"]

T = TypeVar("T")

_MISSING = dataclasses.MISSING


class _Factory:
    """A parameter's default when its field has a default_factory (shown as the standard
    library's marker is, in a signature)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


@overload
def frozen_dataclass(cls: type[T], /) -> type[T]: ...


@overload
def frozen_dataclass(*, eq: bool = True, kw_only: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen_dataclass(
    cls: type[T] | None = None, /, *, eq: bool = True, kw_only: bool = False
) -> type[T] | Callable[[type[T]], type[T]]:
    """``@dataclass(frozen=True, eq=eq, kw_only=kw_only)``, made cheaply (module docstring)."""

    def wrap(cls: type[T]) -> type[T]:
        return _make(cls, eq=eq, kw_only=kw_only)

    return wrap if cls is None else wrap(cls)


def _make(cls: type[T], *, eq: bool, kw_only: bool) -> type[T]:
    own = cls.__dict__
    for name in ("__setattr__", "__delattr__"):
        if name in own:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    had_doc = bool(own.get("__doc__"))
    if not had_doc:
        cls.__doc__ = "(set below, once __init__ is there)"
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    bases = [
        params
        for base in cls.__mro__[1:]
        if (params := base.__dict__.get("__dataclass_params__")) is not None
    ]
    if any(not params.frozen for params in bases):
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    # The standard library refuses a class that is not frozen under a frozen base, and a frozen
    # one costs it two compiled methods: the bases read as not frozen for this one call (the
    # class is frozen by the methods below), in this thread, which holds the import lock.
    for params in bases:
        params.frozen = False
    try:
        dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)
    finally:
        for params in bases:
            params.frozen = True
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    pseudo = [f for f in vars(cls)["__dataclass_fields__"].values() if f not in fields]
    if any("InitVar" in str(f.type) for f in pseudo):
        raise TypeError(f"{cls.__name__}: InitVar fields need @dataclass")
    names = tuple(f.name for f in fields)
    init = _init(cls, fields)  # (the words of a wrong field order, even when not used)
    if "__init__" not in own:
        cls.__init__ = init  # type: ignore[method-assign, assignment]
    _set(cls, "__repr__", _repr(cls, tuple(f.name for f in fields if f.repr)))
    if eq:
        compared = tuple(f.name for f in fields if f.compare)
        if "__eq__" not in own:
            body = f"if other.__class__ is self.__class__:\n   return {_tuple('self', compared)}"
            body += f"=={_tuple('other', compared)}\n  return NotImplemented"
            cls.__eq__ = _method(cls, "__eq__", "self,other", body)  # type: ignore[method-assign, assignment]
        if not explicit_hash:
            hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
            body = f"return hash({_tuple('self', hashed)})"
            cls.__hash__ = _method(cls, "__hash__", "self", body)  # type: ignore[method-assign, assignment]
    cls.__setattr__ = _setattr(cls, names)  # type: ignore[method-assign]
    cls.__delattr__ = _delattr(cls, names)  # type: ignore[method-assign]
    params = vars(cls)["__dataclass_params__"]
    params.init, params.repr, params.eq, params.frozen = True, True, eq, True
    if not had_doc:  # as the standard library words a class without a docstring
        import inspect

        try:
            text_sig = str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            text_sig = ""
        cls.__doc__ = cls.__name__ + text_sig
    return cls


def _set(cls: type, name: str, value: Any) -> None:
    """A method the class did not write itself (the standard library's rule)."""
    if name in cls.__dict__:
        return
    value.__qualname__ = f"{cls.__qualname__}.{value.__name__}"
    setattr(cls, name, value)


def _tuple(name: str, fields: tuple[str, ...]) -> str:
    """``(self.a,self.b,)``, as the standard library writes a tuple of fields."""
    return "(" + ",".join(f"{name}.{f}" for f in fields) + ",)" if fields else "()"


def _method(cls: type, name: str, args: str, body: str) -> _Compiled:
    """``name(args)`` of ``cls``: ``body`` (the standard library's text), compiled when first
    looked up."""
    text = f"def __create_fn__():\n def {name}({args}):\n  {body}\n return {name}"
    return _Compiled(cls, name, text, {})


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> _Compiled:
    """``__init__``: the text the standard library writes for a frozen class, compiled when
    first looked up (:class:`_Compiled`)."""
    me = "__dataclass_self__" if "self" in (f.name for f in fields) else "self"
    scope: dict[str, Any] = {f"_type_{f.name}": f.type for f in fields}
    scope.update(
        {
            "MISSING": _MISSING,
            "_HAS_DEFAULT_FACTORY": _FACTORY,
            "__dataclass_builtins_object__": object,
        }
    )
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    seen_default = False
    for f in fields:
        default = f"_dflt_{f.name}"
        if f.default_factory is not _MISSING:
            scope[default] = f.default_factory
            value = f"{default}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
            if not f.init:
                value = f"{default}()"
        elif f.init:
            if f.default is not _MISSING:
                scope[default] = f.default
            value = f.name
        else:
            continue  # the class attribute holds its default
        body.append(f"__dataclass_builtins_object__.__setattr__({me},{f.name!r},{value})")
        if not f.init:
            continue
        if f.default is _MISSING and f.default_factory is _MISSING:
            param = f"{f.name}:_type_{f.name}"
            if seen_default and not f.kw_only:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
        elif f.default is not _MISSING:
            param = f"{f.name}:_type_{f.name}=_dflt_{f.name}"
        else:
            param = f"{f.name}:_type_{f.name}=_HAS_DEFAULT_FACTORY"
        if f.kw_only:
            keyword.append(param)
        else:
            seen_default = seen_default or "=" in param
            positional.append(param)
    if hasattr(cls, "__post_init__"):
        body.append(f"{me}.__post_init__()")
    params = [me, *positional, *(["*", *keyword] if keyword else [])]
    scope["_return_type"] = None
    lines = "\n".join(f"  {line}" for line in body or ["pass"])
    text = (
        f"def __create_fn__({', '.join(scope)}):\n"
        f" def __init__({','.join(params)})->_return_type:\n{lines}\n return __init__"
    )
    return _Compiled(cls, "__init__", text, scope)


class _Compiled:
    """A method of a class until it is first looked up (an instance made, compared or hashed,
    a signature asked): then compiled from the standard library's text and put in its place,
    so the class holds the function itself, as a dataclass does, and a call costs what the
    standard library's costs. Many classes are never made through ``__init__``, compared or
    hashed in a run (the parser fills the schema nodes' ``__dict__``), and compiling is most
    of what a class costs."""

    __slots__ = ("_name", "_owner", "_scope", "_source")

    def __init__(self, owner: type, name: str, text: str, scope: dict[str, Any]) -> None:
        self._owner, self._name, self._source, self._scope = owner, name, text, scope

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        owner = self._owner
        method = vars(owner)[self._name]
        if method is self:  # not compiled yet (another thread may have just done it)
            module = sys.modules.get(owner.__module__)
            made: dict[str, Any] = {}
            # compiled without this module's ``from __future__ import annotations``, as the
            # standard library compiles it: the annotations are the types, not their names
            code = compile(self._source, "<string>", "exec", dont_inherit=True)
            exec(code, vars(module) if module is not None else {}, made)
            method = made["__create_fn__"](**self._scope)
            method.__qualname__ = f"{owner.__qualname__}.{self._name}"
            setattr(owner, self._name, method)
        return method.__get__(obj, objtype)


def _repr(cls: type, names: tuple[str, ...]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = id(self), get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
            return f"{self.__class__.__qualname__}({shown})"
        finally:
            running.discard(key)

    return __repr__


def _setattr(cls: type[Any], names: tuple[str, ...]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    __setattr__.__qualname__ = f"{cls.__qualname__}.__setattr__"
    return __setattr__


def _delattr(cls: type[Any], names: tuple[str, ...]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    __delattr__.__qualname__ = f"{cls.__qualname__}.__delattr__"
    return __delattr__
