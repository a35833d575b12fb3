"""You're given a list of deposit and withdrawal operations on a bank account that starts wit."""


from typing import Any


def below_zero(operations: list[int]) -> bool:
    """You're given a list of deposit and withdrawal operations on a bank account that starts with
    zero balance. Your task is to detect if at any point the balance of account fallls below zero,
    and
    at that point function should return True. Otherwise it should return False.
    >>> below_zero([1, 2, 3])
    False
    >>> below_zero([1, 2, -4, 5])
    True
    """
    balance = 0
    for op in operations:
        balance += op
        if balance <= 0:
            return True
    return False


def he_3_below_zero(args: list[Any]) -> dict[str, Any]:
    return {"result": below_zero(*args)}
