"""Names Java accepts and other readers refuse (``validate``'s warnings too): names outside
ASCII, a named type defined twice (identically), and a name found only through Java's fallback
to the null namespace. Each claim was checked against fastavro 1.13 and the ``avro`` package
1.12 (tests/unit/test_validate_claims.py, tests/unit/test_name_index.py).
"""

from __future__ import annotations

from schemacli.contracts.avro.loader import scan_names
from schemacli.contracts.avro.schema import EnumSchema, Field, NamedSchema
from schemacli.contracts.lint.rule import Category, Family, Fixable, Rule, Run
from schemacli.kinds import Kind

NON_ASCII_NAME = Rule(
    Kind.NON_ASCII_NAME,
    "non-ascii-name",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="names, namespaces and symbols in ASCII ([A-Za-z_][A-Za-z0-9_]*)",
    validate=True,
)
REDEFINED_NAME = Rule(
    Kind.REDEFINED_NAME,
    "redefined-name",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="a named type is defined once and then referred to by name",
    validate=True,
)
NULL_NAMESPACE_FALLBACK = Rule(
    Kind.NULL_NAMESPACE_FALLBACK,
    "null-namespace-fallback",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="a name resolves in its own namespace, not only by Java's fallback to the null one",
    validate=True,
)


def _non_ascii(name: str) -> bool:
    # The parser has already refused what Java refuses; what is left and not ASCII is a
    # Unicode letter or digit.
    return not name.isascii()


def _named(run: Run, node: NamedSchema) -> None:
    full = node.fullname
    defined_at: dict[str, str] = run.memo.setdefault("defined_at", {})
    if full not in defined_at:
        defined_at[full] = node.pointer
    elif run.on(Kind.REDEFINED_NAME):
        run.add(
            Kind.REDEFINED_NAME,
            run.loaded.location(node.pointer),
            f"{node.type} {full} is defined a second time (first at {defined_at[full] or '/'}); "
            "Java accepts an identical redefinition, but fastavro and the Python avro package "
            'refuse the schema ("redefined named type")',
            f'refer to the first definition by name: "type": "{full}"',
        )
    if run.on(Kind.NON_ASCII_NAME):
        _named_non_ascii(run, node)


def _named_non_ascii(run: Run, node: NamedSchema) -> None:
    doc = run.loaded.document
    if _non_ascii(node.simple_name):
        run.add(
            Kind.NON_ASCII_NAME,
            run.loaded.location(node.pointer + "/name"),
            f"{node.type} name {node.simple_name!r} is not ASCII; Java and fastavro accept it, "
            "but the Python avro package refuses it (InvalidName) and the Avro specification "
            "allows only [A-Za-z_][A-Za-z0-9_]*",
            "use ASCII letters, digits and _ (e.g. transliterate: Fahrtä -> Fahrtae)",
        )
    if node.namespace and _non_ascii(node.namespace.replace(".", "")):
        pointer = node.pointer + (
            "/namespace" if doc.pointer_exists(node.pointer + "/namespace") else "/name"
        )
        if doc.pointer_exists(pointer):
            run.add(
                Kind.NON_ASCII_NAME,
                run.loaded.location(pointer),
                f"namespace {node.namespace!r} is not ASCII; Java and fastavro accept it, but "
                "the Python avro package refuses it (InvalidName)",
                "use ASCII letters, digits, _ and dots in namespaces",
            )
    if isinstance(node, EnumSchema):
        for i, symbol in enumerate(node.symbols):
            if _non_ascii(symbol):
                run.add(
                    Kind.NON_ASCII_NAME,
                    run.loaded.location(f"{node.pointer}/symbols/{i}"),
                    f"enum symbol {symbol!r} is not ASCII; Java accepts it, but fastavro and "
                    "the Python avro package refuse the schema",
                    "use ASCII letters, digits and _ in symbols",
                )


def _field(run: Run, fld: Field) -> None:
    if run.on(Kind.NON_ASCII_NAME) and _non_ascii(fld.name):
        run.add(
            Kind.NON_ASCII_NAME,
            run.loaded.location(fld.pointer + "/name"),
            f"field name {fld.name!r} is not ASCII; Java, fastavro and the Python avro package "
            "accept it, but the Avro specification allows only [A-Za-z_][A-Za-z0-9_]* and "
            "readers that follow it strictly (and generated code) may not",
            "use ASCII letters, digits and _; keep the old name as an alias if it was in use",
        )


def _end(run: Run) -> None:
    """A short name used inside a namespace that resolves only as a name in the null namespace.

    Java looks ``Money`` up as ``com.acme.Money``, then as ``Money``; fastavro and the Python
    avro package look only for ``com.acme.Money`` and refuse the schema.
    """
    if not run.on(Kind.NULL_NAMESPACE_FALLBACK):
        return
    loaded = run.loaded
    _, uses = scan_names(loaded.value)
    for use in uses:
        if len(use.candidates) != 2:
            continue
        full, name = use.candidates
        if full not in loaded.names and name in loaded.names:
            run.add(
                Kind.NULL_NAMESPACE_FALLBACK,
                loaded.location(use.pointer),
                f"{name!r} is not {full!r}: Apache Avro Java finds it only by falling back to "
                f"the type {name!r} in the null namespace; fastavro and the Python avro package "
                f"look for {full!r} and refuse the schema",
                f"give {name} a namespace and refer to it by its full name (e.g. put it in "
                f"{full.rsplit('.', 1)[0]} and write {full!r})",
            )


FAMILY = Family(
    (NON_ASCII_NAME, REDEFINED_NAME, NULL_NAMESPACE_FALLBACK),
    named=_named,
    field=_field,
    end=_end,
)
