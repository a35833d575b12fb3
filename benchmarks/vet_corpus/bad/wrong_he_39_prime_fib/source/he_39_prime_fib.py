"""prime_fib returns n-th number that is a Fibonacci number and it's also prime."""


from typing import Any


def prime_fib(n: int) -> Any:
    """
    prime_fib returns n-th number that is a Fibonacci number and it's also prime.
    >>> prime_fib(1)
    2
    >>> prime_fib(2)
    3
    >>> prime_fib(3)
    5
    >>> prime_fib(4)
    13
    >>> prime_fib(5)
    89
    """
    import math

    def is_prime(p: Any) -> Any:
        if p < 2:
            return False
        for k in range(2, max(int(math.sqrt(p)) + 1, p - 1)):
            if p % k == 0:
                return False
        return True

    f = [0, 1]
    while True:
        f.append(f[-1] + f[-2])
        if is_prime(f[-1]):
            n -= 1
        if n == 0:
            return f[-1]


def he_39_prime_fib(args: list[Any]) -> dict[str, Any]:
    return {"result": prime_fib(*args)}
