"""From a supplied list of numbers (of length at least two) select and return two that are th."""


from typing import Any


def find_closest_elements(numbers: list[float]) -> tuple[float, float]:
    """From a supplied list of numbers (of length at least two) select and return two that are the closest
    to each
       other and return them in order (smaller number, larger number).
       >>> find_closest_elements([1.0, 2.0, 3.0, 4.0, 5.0, 2.2])
       (2.0, 2.2)
       >>> find_closest_elements([1.0, 2.0, 3.0, 4.0, 5.0, 2.0])
       (2.0, 2.0)
    """
    closest_pair = None
    distance = None
    for idx, elem in enumerate(numbers):
        for idx2, elem2 in enumerate(numbers):
            if idx != idx2:
                if distance is None:
                    distance = abs(elem - elem2)
                    closest_pair = tuple(sorted([elem, elem2]))
                else:
                    new_distance = abs(elem - elem2)
                    if new_distance < distance:
                        distance = new_distance
                        closest_pair = tuple(reversed([elem, elem2]))
    return closest_pair


def he_20_find_closest_elements(args: list[Any]) -> dict[str, Any]:
    return {"result": find_closest_elements(*args)}
