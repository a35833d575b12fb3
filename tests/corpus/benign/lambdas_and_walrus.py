# side_effect: READ_ONLY
# tricky: lambdas and walrus inside execute, where they run only when called
"""Lambdas and walrus inside execute, where they run only when called."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class LambdasAndWalrusInput(BaseModel):
    text: str = ""


class LambdasAndWalrusOutput(BaseModel):
    result: str


class LambdasAndWalrus(BaseSkill[LambdasAndWalrusInput, LambdasAndWalrusOutput]):
    name = "lambdas_and_walrus"
    description = "Corpus skill: lambdas and walrus inside execute, where they run only when called."
    input_model = LambdasAndWalrusInput
    output_model = LambdasAndWalrusOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: LambdasAndWalrusInput) -> LambdasAndWalrusOutput:
        words = input_data.text.split()
        ranked = sorted(words, key=lambda w: (-len(w), w))
        if (n := len(ranked)) > 3:
            ranked = ranked[:3]
        return LambdasAndWalrusOutput(result=f"{n} {ranked}")
