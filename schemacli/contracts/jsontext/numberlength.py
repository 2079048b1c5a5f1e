"""How long a number in a schema may be: exactly as long as Apache Avro Java reads.

Jackson's ``StreamReadConstraints`` refuse a number of more than 1,000 digits: "Number value
length (1001) exceeds the maximum allowed (1000)". The digits of the integer part, the fraction
and the exponent count together (not the sign, the point or the ``e``), and an integer part of a
single ``0`` counts as none (Avro 1.12.0 itself decides the boundary cases in
``tests/oracle/test_differential.py``). Python reads such numbers (up to 4,300 digits, then it
raises ValueError), so the text is checked first: :func:`number_too_long`.
"""

from __future__ import annotations

import re

MAX_NUMBER_LENGTH = 1000  # Jackson's default StreamReadConstraints.maxNumberLength
_DIGITS = "0123456789"
# Bytes with every digit kept as "0" and everything else blanked; a number of more than 1,000
# digits has, in one of its three parts (integer, fraction, exponent), a run of at least 334.
_ONLY_DIGITS = bytes(ord("0") if chr(byte) in _DIGITS else ord(" ") for byte in range(256))
_LONGEST_PART_AT_LEAST = -(-(MAX_NUMBER_LENGTH + 1) // 3)  # 334
_DIGIT_RUN = b"0" * _LONGEST_PART_AT_LEAST
# A string (skipped: digits in it are not a number) or a number: integer part, fraction, exponent.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?([0-9]+)(?:\.([0-9]*))?(?:[eE][+-]?([0-9]*))?')

NUMBER_TOO_LONG_HINT = (
    "Write the number with at most 1,000 digits: no Avro type holds more (a long has at most "
    "19 digits, a double about 17 significant ones)."
)


class NumberTooLong(Exception):
    """A number with more digits than Java reads: how many, and where it starts."""

    def __init__(self, digits: int, position: int) -> None:
        super().__init__(
            f"a number of {digits} digits; Apache Avro Java (Jackson) reads at most "
            f"{MAX_NUMBER_LENGTH}"
        )
        self.digits, self.position = digits, position


def number_too_long(text: str) -> tuple[int, int] | None:
    """``(digits, position)`` of the first number in JSON ``text`` longer than Java reads."""
    if len(text) <= MAX_NUMBER_LENGTH:
        return None
    if _DIGIT_RUN not in text.encode("utf-8", "surrogatepass").translate(_ONLY_DIGITS):
        return None  # the usual case, at C speed: no run of digits as long as one part needs
    for match in _TOKEN.finditer(text):
        whole, fraction, exponent = match.groups()
        if whole is None:  # a string
            continue
        digits = (0 if whole == "0" else len(whole)) + len(fraction or "") + len(exponent or "")
        if digits > MAX_NUMBER_LENGTH:
            return digits, match.start()
    return None
