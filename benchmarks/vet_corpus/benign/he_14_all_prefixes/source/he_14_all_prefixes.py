"""Return list of all prefixes from shortest to longest of the input string."""


from typing import Any


def all_prefixes(string: str) -> list[str]:
    """Return list of all prefixes from shortest to longest of the input string
    >>> all_prefixes('abc')
    ['a', 'ab', 'abc']
    """
    result = []
    for i in range(len(string)):
        result.append(string[: i + 1])
    return result


def he_14_all_prefixes(args: list[Any]) -> dict[str, Any]:
    return {"result": all_prefixes(*args)}
