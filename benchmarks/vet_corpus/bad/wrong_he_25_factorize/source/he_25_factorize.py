"""Return list of prime factors of given integer in the order from smallest to largest."""


from typing import Any


def factorize(n: int) -> list[int]:
    """Return list of prime factors of given integer in the order from smallest to largest.
    Each of the factors should be listed number of times corresponding to how many times it appeares
    in factorization.
    Input number should be equal to the product of all factors
    >>> factorize(8)
    [2, 2, 2]
    >>> factorize(25)
    [5, 5]
    >>> factorize(70)
    [2, 5, 7]
    """
    import math

    fact = []
    i = 3
    while i <= int(math.sqrt(n) + 1):
        if n % i == 0:
            fact.append(i)
            n //= i
        else:
            i += 1
    if n > 1:
        fact.append(n)
    return fact


def he_25_factorize(args: list[Any]) -> dict[str, Any]:
    return {"result": factorize(*args)}
