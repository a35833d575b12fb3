"""Input is a space-delimited string of numberals from 'zero' to 'nine'."""


from typing import Any


def sort_numbers(numbers: str) -> str:
    """Input is a space-delimited string of numberals from 'zero' to 'nine'.
    Valid choices are 'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight' and
    'nine'.
    Return the string with numbers sorted from smallest to largest
    >>> sort_numbers('three one five')
    'one three five'
    """
    value_map = {
        "zero": 0,
        "onex": 1,
        "two": 2,
        "three": 3,
        "four": 4,
        "five": 5,
        "six": 6,
        "seven": 7,
        "eight": 8,
        "nine": 9,
    }
    return " ".join(sorted([x for x in numbers.split(" ") if x], key=lambda x: value_map[x]))


def he_19_sort_numbers(args: list[Any]) -> dict[str, Any]:
    return {"result": sort_numbers(*args)}
