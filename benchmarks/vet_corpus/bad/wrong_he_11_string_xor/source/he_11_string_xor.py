"""Input are two strings a and b consisting only of 1s and 0s."""


from typing import Any


def string_xor(a: str, b: str) -> str:
    """Input are two strings a and b consisting only of 1s and 0s.
    Perform binary XOR on these inputs and return result also as a string.
    >>> string_xor('010', '110')
    '100'
    """

    def xor(i: Any, j: Any) -> Any:
        if i == j:
            return "0"

    return "".join((xor(x, y) for x, y in zip(a, b, strict=False)))


def he_11_string_xor(args: list[Any]) -> dict[str, Any]:
    return {"result": string_xor(*args)}
