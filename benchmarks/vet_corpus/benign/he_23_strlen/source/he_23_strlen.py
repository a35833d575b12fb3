"""Return length of given string."""


from typing import Any


def strlen(string: str) -> int:
    """Return length of given string
    >>> strlen('')
    0
    >>> strlen('abc')
    3
    """
    return len(string)


def he_23_strlen(args: list[Any]) -> dict[str, Any]:
    return {"result": strlen(*args)}
