# side_effect: READ_ONLY
# tricky: the model handle's reply parsed with json and ast.literal_eval as a fallback
# family: handles
"""Ask the configured model for a list of keywords and parse its reply, falling back to a heuristic."""

import ast
import json
import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


WORD = re.compile(r"[A-Za-z]{4,}")


class LlmJsonReplyParserInput(BaseModel):
    text: str


class LlmJsonReplyParserOutput(BaseModel):
    keywords: list[str]
    source: str


class LlmJsonReplyParser(BaseSkill[LlmJsonReplyParserInput, LlmJsonReplyParserOutput]):
    name = "llm_json_reply_parser"
    description = "Ask the configured model for a list of keywords and parse its reply, falling back to a heuristic."
    input_model = LlmJsonReplyParserInput
    output_model = LlmJsonReplyParserOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: LlmJsonReplyParserInput) -> LlmJsonReplyParserOutput:
        if self.llm.can_complete():
            reply = self.llm.complete(f"List 5 keywords of this text as a JSON array:\n{input_data.text}", max_tokens=64)
            for parse in (json.loads, ast.literal_eval):
                try:
                    value = parse(reply.strip())
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, list | tuple):
                    return LlmJsonReplyParserOutput(keywords=[str(v) for v in value][:5], source="model")
        words = sorted(set(WORD.findall(input_data.text.lower())), key=lambda w: (-len(w), w))
        return LlmJsonReplyParserOutput(keywords=words[:5], source="heuristic")
