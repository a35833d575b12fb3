# side_effect: READ_ONLY
# tricky: functools.partial, reduce and cmp_to_key used inside execute
# family: algorithms
"""Apply a pipeline of text operations and sort words with a custom comparison."""

import functools
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _dedupe(text: str, sep: str) -> str:
    seen: list[str] = []
    for word in text.split(sep):
        if word and word not in seen:
            seen.append(word)
    return sep.join(seen)


def _by_length_then_alpha(a: str, b: str) -> int:
    return (len(a) - len(b)) or (a > b) - (a < b)


class FunctoolsPartialPipelineInput(BaseModel):
    text: str
    steps: list[str]


class FunctoolsPartialPipelineOutput(BaseModel):
    result: str
    sorted_words: list[str]


class FunctoolsPartialPipeline(BaseSkill[FunctoolsPartialPipelineInput, FunctoolsPartialPipelineOutput]):
    name = "functools_partial_pipeline"
    description = "Apply a pipeline of text operations and sort words with a custom comparison."
    input_model = FunctoolsPartialPipelineInput
    output_model = FunctoolsPartialPipelineOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FunctoolsPartialPipelineInput) -> FunctoolsPartialPipelineOutput:
        operations = {"strip": str.strip, "lower": str.lower, "upper": str.upper,
                      "dedupe": functools.partial(_dedupe, sep=" ")}
        unknown = [s for s in input_data.steps if s not in operations]
        if unknown:
            raise ValueError(f"unknown steps: {unknown}")
        result = functools.reduce(lambda acc, step: operations[step](acc), input_data.steps, input_data.text)
        words = sorted(result.split(), key=functools.cmp_to_key(_by_length_then_alpha))
        return FunctoolsPartialPipelineOutput(result=result, sorted_words=words)
