# side_effect: READ_ONLY
# tricky: nested comprehensions and a generator helper with yield
"""Nested comprehensions and a generator helper with yield."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def pairs(words: list[str]):
    for i, left in enumerate(words):
        for right in words[i + 1 :]:
            yield left, right


class ComprehensionsAndGeneratorsInput(BaseModel):
    text: str = ""


class ComprehensionsAndGeneratorsOutput(BaseModel):
    result: str


class ComprehensionsAndGenerators(BaseSkill[ComprehensionsAndGeneratorsInput, ComprehensionsAndGeneratorsOutput]):
    name = "comprehensions_and_generators"
    description = "Corpus skill: nested comprehensions and a generator helper with yield."
    input_model = ComprehensionsAndGeneratorsInput
    output_model = ComprehensionsAndGeneratorsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ComprehensionsAndGeneratorsInput) -> ComprehensionsAndGeneratorsOutput:
        words = input_data.text.split()
        index = {w: {i for i, x in enumerate(words) if x == w} for w in set(words)}
        matrix = [[len(a) * len(b) for b in words] for a in words]
        joined = sorted(f"{a}+{b}" for a, b in pairs(words))
        return ComprehensionsAndGeneratorsOutput(result=f"{len(index)} {sum(map(sum, matrix))} {joined[:2]}")
