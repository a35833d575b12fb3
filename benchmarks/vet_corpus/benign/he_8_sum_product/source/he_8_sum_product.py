"""For a given list of integers, return a tuple consisting of a sum and a product of all the ."""


from typing import Any


def sum_product(numbers: list[int]) -> tuple[int, int]:
    """For a given list of integers, return a tuple consisting of a sum and a product of all the integers
    in a list.
       Empty sum should be equal to 0 and empty product should be equal to 1.
       >>> sum_product([])
       (0, 1)
       >>> sum_product([1, 2, 3, 4])
       (10, 24)
    """
    sum_value = 0
    prod_value = 1
    for n in numbers:
        sum_value += n
        prod_value *= n
    return (sum_value, prod_value)


def he_8_sum_product(args: list[Any]) -> dict[str, Any]:
    return {"result": sum_product(*args)}
