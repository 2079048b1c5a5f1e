"""``@frozen_dataclass`` behaves as ``@dataclass(frozen=True)``: each class built both ways from
the same body (every class of the house that uses it, and classes made here for each feature it
takes) and compared on what a caller can see: fields, parameters, signature, docstring, repr,
equality, hash, frozenness, replace, asdict, copy, pickling and the words of a wrong call."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import inspect
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

import schemacli.frozen
from schemacli.frozen import frozen_dataclass

ROOT = Path(__file__).resolve().parents[2]


def stdlib_frozen(cls: Any = None, /, *, eq: bool = True, kw_only: bool = False) -> Any:
    """What ``frozen_dataclass`` stands for."""
    make = dataclasses.dataclass(frozen=True, eq=eq, kw_only=kw_only)
    return make if cls is None else make(cls)


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return ("value", call())
    except Exception as err:  # the words of the failure are part of the behaviour
        return ("raises", type(err).__name__, str(err))


def observed(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """Everything a caller can see of ``cls`` and of two instances made from ``values``."""
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    seen: dict[str, Any] = {
        "params": {
            k: getattr(params, k) for k in ("init", "repr", "eq", "order", "unsafe_hash", "frozen")
        },
        "fields": [
            (f.name, f.type, f.init, f.repr, f.compare, f.hash, f.kw_only, repr(f.default))
            for f in dataclasses.fields(cls)
        ],
        "match_args": getattr(cls, "__match_args__", None),
        "signature": str(inspect.signature(cls)),
        "doc": cls.__doc__,
        "hash": "none" if cls.__hash__ is None else cls.__hash__ is object.__hash__,
        "no_arguments": _outcome(lambda: repr(cls())) if values else None,
        "unknown_keyword": _outcome(lambda: repr(cls(**values, not_a_field=1))),
        "too_many": _outcome(lambda: repr(cls(*range(len(values) + 5)))),
    }
    made = _outcome(lambda: (cls(**values), cls(**values)))
    if made[0] != "value":
        seen["made"] = made
        return seen
    a, b = made[1]
    seen.update(
        repr=repr(a),
        equal=(a == b, a != b, a == a, a == object(), a.__eq__(object())),
        hashes=_outcome(lambda: (hash(a) == hash(b), hash(a) if seen["hash"] is False else 0)),
        replace=_outcome(lambda: (repr(dataclasses.replace(a)), dataclasses.replace(a) == a)),
        asdict=_outcome(lambda: repr(dataclasses.asdict(a))),
        copy=_outcome(lambda: (repr(copy.copy(a)), copy.copy(a) == a)),
        pickled=_outcome(lambda: (repr(back := pickle.loads(pickle.dumps(a))), back == a)),
    )
    for name in [f.name for f in dataclasses.fields(cls)] + ["not_a_field"]:
        seen[f"set {name}"] = _outcome(lambda name=name: setattr(a, name, 1))
        seen[f"del {name}"] = _outcome(lambda name=name: delattr(a, name))
    return seen


def values_for(cls: type) -> dict[str, Any]:
    """A value for every field ``__init__`` needs (those with defaults keep them)."""
    return {
        f.name: f"<{f.name}>"
        for f in dataclasses.fields(cls)
        if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }


# -- every class of the house


def house_modules() -> list[str]:
    names = []
    for path in sorted((ROOT / "schemacli").rglob("*.py")):
        if path.name != "frozen.py" and "frozen_dataclass" in path.read_text(encoding="utf-8"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def twin(module: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``module`` loaded again under another name with the standard library's dataclass in
    place of ``frozen_dataclass``."""
    real = importlib.import_module(module)
    name = f"_stdlib_twin_of_{module.replace('.', '_')}"
    spec = importlib.util.spec_from_file_location(name, real.__file__)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, loaded)  # pickle finds the twin's classes by name
    monkeypatch.setattr(schemacli.frozen, "frozen_dataclass", stdlib_frozen)
    spec.loader.exec_module(loaded)
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, name, loaded)
    return loaded


def test_the_house_uses_frozen_dataclass_on_validates_road():
    assert "schemacli.contracts.avro.schema" in house_modules()
    assert "schemacli.contracts.findings" in house_modules()


@pytest.mark.parametrize("module", house_modules())
def test_each_house_class_behaves_as_the_standard_librarys_frozen_dataclass(module, monkeypatch):
    ours = importlib.import_module(module)
    theirs = twin(module, monkeypatch)
    compared = 0
    for name, cls in vars(ours).items():
        if (
            not isinstance(cls, type)
            or cls.__module__ != module
            or "__dataclass_params__" not in vars(cls)
        ):
            continue
        other = getattr(theirs, name)
        values = values_for(cls)
        assert observed(cls, values) == observed(other, values), name
        compared += 1
    assert compared > 0


# -- each feature, on classes made here


def _plain(make: Any) -> type:
    @make
    class Plain:
        """A docstring."""

        a: int
        b: str = "b"
        c: tuple[int, ...] = dataclasses.field(default_factory=tuple)
        d: list[int] = dataclasses.field(default_factory=list, compare=False, repr=False)
        e: int = dataclasses.field(default=5, init=False)
        f: list[int] = dataclasses.field(default_factory=list, init=False)
        g: int = dataclasses.field(default=0, hash=False)
        h: int = dataclasses.field(default=0, compare=False, hash=True)
        shared: ClassVar[int] = 3

    return Plain


def _undocumented(make: Any) -> type:
    @make
    class Undocumented:
        a: int
        b: int = 2

    return Undocumented


def _keywords(make: Any) -> type:
    @make(kw_only=True)
    class Keywords:
        """Keyword-only fields, one of them positional again."""

        a: int
        b: int = 1
        c: int = dataclasses.field(default=2, kw_only=False)

    return Keywords


def _identity(make: Any) -> type:
    @make(eq=False, kw_only=True)
    class Base:
        """Compared by identity."""

        kind: str
        extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    @make(eq=False, kw_only=True)
    class Sub(Base):
        """A subclass: more fields, still frozen."""

        size: int = 0

    return Sub


def _own_hash(make: Any) -> type:
    @make
    class OwnHash:
        """Its own hash, left as written."""

        a: int
        b: Any = None

        def __hash__(self) -> int:
            return hash(self.a)

    return OwnHash


def _own_eq(make: Any) -> type:
    @make
    class OwnEq:
        """Its own ==: dataclass writes only the hash."""

        a: int

        def __eq__(self, other: object) -> bool:
            return True

    return OwnEq


def _post_init(make: Any) -> type:
    @make
    class Checked:
        """Checks itself after __init__."""

        a: str

        def __post_init__(self) -> None:
            if self.a == "<a>":
                object.__setattr__(self, "a", "checked")

    return Checked


def _recursive(make: Any) -> type:
    @make
    class Node:
        """Holds a list that may hold the node itself."""

        children: list[Any]

    return Node


def _base_and_sub(make: Any) -> type:
    @make
    class Base:
        """A base."""

        a: int

    @make
    class Sub(Base):
        """A subclass adding a field with a default."""

        b: int = 2

    return Sub


FEATURES = {
    f.__name__.strip("_"): f
    for f in (
        _plain,
        _undocumented,
        _keywords,
        _identity,
        _own_hash,
        _own_eq,
        _post_init,
        _recursive,
        _base_and_sub,
    )
}


@pytest.mark.parametrize("feature", FEATURES)
def test_a_class_made_here_behaves_as_the_standard_librarys(feature):
    ours, theirs = FEATURES[feature](frozen_dataclass), FEATURES[feature](stdlib_frozen)
    values = values_for(ours)
    left, right = observed(ours, values), observed(theirs, values)
    for seen in (left, right):  # made in a function: pickling cannot find either class
        seen.pop("pickled", None)
    assert left == right


def test_a_recursive_value_is_shown_as_the_standard_library_shows_it():
    ours, theirs = _recursive(frozen_dataclass), _recursive(stdlib_frozen)
    a, b = ours([]), theirs([])
    a.children.append(a)
    b.children.append(b)
    assert repr(a) == repr(b) == "_recursive.<locals>.Node(children=[...])"


def test_what_the_standard_library_refuses_is_refused():
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @frozen_dataclass
        class Wrong:
            a: int = 0
            b: int

    @dataclasses.dataclass
    class Loose:
        a: int

    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen"):

        @frozen_dataclass
        class Frozen(Loose):
            b: int = 0

    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):

        @frozen_dataclass
        class Settable:
            a: int

            def __setattr__(self, name: str, value: Any) -> None: ...


def test_init_is_compiled_when_first_used_and_then_held_by_the_class():
    made = _plain(frozen_dataclass)
    assert not inspect.isfunction(vars(made)["__init__"])  # not compiled at creation
    with pytest.raises(TypeError) as ours:
        made()  # the first use is a wrong call: the same words as the standard library's
    with pytest.raises(TypeError) as theirs:
        _plain(stdlib_frozen)()
    assert str(ours.value) == str(theirs.value)
    assert inspect.isfunction(vars(made)["__init__"])
    assert made.__init__.__qualname__ == "_plain.<locals>.Plain.__init__"


def test_a_plain_subclass_made_first_compiles_its_bases_init():
    base = _base_and_sub(frozen_dataclass)

    class Plain(base):  # type: ignore[valid-type, misc]
        """Not a dataclass: inherits __init__."""

    assert repr(Plain(1, 3)).endswith(".<locals>.Plain(a=1, b=3)")
    assert "__init__" not in vars(Plain)
    assert inspect.isfunction(vars(base)["__init__"])


def _hashable(make: Any) -> type:
    @make
    class Hashable:
        """Two compared fields and one that is not."""

        a: int
        b: str
        c: list[int] = dataclasses.field(default_factory=list, compare=False)

    return Hashable


def test_eq_and_hash_are_compiled_when_first_used_and_give_the_standard_librarys_answers():
    ours, theirs = _hashable(frozen_dataclass), _hashable(stdlib_frozen)
    assert not inspect.isfunction(vars(ours)["__eq__"])
    assert not inspect.isfunction(vars(ours)["__hash__"])
    a, b = ours(1, "x", [3]), ours(1, "x", [4])  # c is not compared
    c, d = theirs(1, "x", [3]), theirs(1, "x", [4])
    assert (a == b, hash(a) == hash(b), hash(a)) == (c == d, hash(c) == hash(d), hash(c))
    assert inspect.isfunction(vars(ours)["__eq__"])
    assert inspect.isfunction(vars(ours)["__hash__"])
    assert {a, b} == {a}
