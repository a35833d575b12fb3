# side_effect: READ_ONLY
# tricky: shlex.quote and a shlex.shlex lexer over a string, for display only
# family: text-formats
"""Tokenise a key=value line with shell-like quoting and show each token quoted."""

import shlex
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ShlexQuoteTokensInput(BaseModel):
    line: str


class ShlexQuoteTokensOutput(BaseModel):
    pairs: dict[str, str]
    display: list[str]


class ShlexQuoteTokens(BaseSkill[ShlexQuoteTokensInput, ShlexQuoteTokensOutput]):
    name = "shlex_quote_tokens"
    description = "Tokenise a key=value line with shell-like quoting and show each token quoted."
    input_model = ShlexQuoteTokensInput
    output_model = ShlexQuoteTokensOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ShlexQuoteTokensInput) -> ShlexQuoteTokensOutput:
        lexer = shlex.shlex(input_data.line, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        pairs: dict[str, str] = {}
        for token in lexer:
            key, sep, value = token.partition("=")
            if sep:
                pairs[key] = value
        return ShlexQuoteTokensOutput(pairs=pairs, display=[f"{k}={shlex.quote(v)}" for k, v in pairs.items()])
