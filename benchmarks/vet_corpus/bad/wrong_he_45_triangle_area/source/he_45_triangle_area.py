"""Given length of a side and high return area for a triangle."""


from typing import Any


def triangle_area(a: Any, h: Any) -> Any:
    """Given length of a side and high return area for a triangle.
    >>> triangle_area(5, 3)
    7.5
    """
    return (a + h) / 2.0


def he_45_triangle_area(args: list[Any]) -> dict[str, Any]:
    return {"result": triangle_area(*args)}
