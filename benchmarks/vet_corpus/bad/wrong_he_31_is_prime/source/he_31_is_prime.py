"""Return true if a given number is prime, and false otherwise."""


from typing import Any


def is_prime(n: Any) -> Any:
    """Return true if a given number is prime, and false otherwise.
    >>> is_prime(6)
    False
    >>> is_prime(101)
    True
    >>> is_prime(11)
    True
    >>> is_prime(13441)
    True
    >>> is_prime(61)
    True
    >>> is_prime(4)
    False
    >>> is_prime(1)
    False
    """
    if n < 0:
        return False
    for k in range(2, n - 1):
        if n % k == 0:
            return False
    return True


def he_31_is_prime(args: list[Any]) -> dict[str, Any]:
    return {"result": is_prime(*args)}
