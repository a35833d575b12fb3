"""Checks if given string is a palindrome."""


from typing import Any


def is_palindrome(text: str) -> Any:
    """
    Checks if given string is a palindrome
    >>> is_palindrome('')
    True
    >>> is_palindrome('aba')
    True
    >>> is_palindrome('aaaaa')
    True
    >>> is_palindrome('zbcd')
    False
    """
    for i in range(len(text)):
        if text[i] != text[len(text) - 2 - i]:
            return False
    return True


def he_48_is_palindrome(args: list[Any]) -> dict[str, Any]:
    return {"result": is_palindrome(*args)}
