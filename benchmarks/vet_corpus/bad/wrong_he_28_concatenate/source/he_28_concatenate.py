"""Concatenate list of strings into a single string."""


from typing import Any


def concatenate(strings: list[str]) -> str:
    """Concatenate list of strings into a single string
    >>> concatenate([])
    ''
    >>> concatenate(['a', 'b', 'c'])
    'abc'
    """
    return "".join(strings) + "".join(strings)


def he_28_concatenate(args: list[Any]) -> dict[str, Any]:
    return {"result": concatenate(*args)}
