"""Input to this function is a string containing multiple groups of nested parentheses."""


from typing import Any


def separate_paren_groups(paren_string: str) -> list[str]:
    """Input to this function is a string containing multiple groups of nested parentheses. Your goal is
    to
       separate those group into separate strings and return the list of those.
       Separate groups are balanced (each open brace is properly closed) and not nested within each
       other
       Ignore any spaces in the input string.
       >>> separate_paren_groups('( ) (( )) (( )( ))')
       ['()', '(())', '(()())']
    """
    result = []
    current_string = []
    current_depth = 0
    for c in paren_string:
        if c == "(":
            current_depth += 1
            current_string.append(c)
        elif c == ")":
            current_depth -= 1
            current_string.append(c)
            if current_depth == 0:
                result.append("".join(current_string))
                current_string.clear()
    return result


def he_1_separate_paren_groups(args: list[Any]) -> dict[str, Any]:
    return {"result": separate_paren_groups(*args)}
