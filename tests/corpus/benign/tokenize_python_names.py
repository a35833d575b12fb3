# side_effect: READ_ONLY
# tricky: tokenize.generate_tokens over io.StringIO(...).readline (tokenize.open reads files)
# family: literal-parsing
"""Count the names, strings and comments in a Python snippet."""

import collections
import io
import tokenize
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TokenizePythonNamesInput(BaseModel):
    source: str


class TokenizePythonNamesOutput(BaseModel):
    names: list[str]
    counts: dict[str, int]


class TokenizePythonNames(BaseSkill[TokenizePythonNamesInput, TokenizePythonNamesOutput]):
    name = "tokenize_python_names"
    description = "Count the names, strings and comments in a Python snippet."
    input_model = TokenizePythonNamesInput
    output_model = TokenizePythonNamesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TokenizePythonNamesInput) -> TokenizePythonNamesOutput:
        counts: collections.Counter[str] = collections.Counter()
        names: list[str] = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(input_data.source).readline):
                counts[tokenize.tok_name[tok.type]] += 1
                if tok.type == tokenize.NAME and tok.string not in names:
                    names.append(tok.string)
        except (tokenize.TokenError, SyntaxError) as err:
            raise ValueError(f"cannot tokenize: {err}") from err
        return TokenizePythonNamesOutput(names=names, counts=dict(counts))
