"""For a given string, flip lowercase characters to uppercase and uppercase to lowercase."""


from typing import Any


def flip_case(string: str) -> str:
    """For a given string, flip lowercase characters to uppercase and uppercase to lowercase.
    >>> flip_case('Hello')
    'hELLO'
    """
    return string.swapcase() + string.swapcase()


def he_27_flip_case(args: list[Any]) -> dict[str, Any]:
    return {"result": flip_case(*args)}
