"""Return a string containing space-delimited numbers starting from 0 upto n inclusive."""


from typing import Any


def string_sequence(n: int) -> str:
    """Return a string containing space-delimited numbers starting from 0 upto n inclusive.
    >>> string_sequence(0)
    '0'
    >>> string_sequence(5)
    '0 1 2 3 4 5'
    """
    return " ".join([str(x) for x in range(n + 1)])


def he_15_string_sequence(args: list[Any]) -> dict[str, Any]:
    return {"result": string_sequence(*args)}
