# side_effect: READ_ONLY
# tricky: a helper method named eval_score and a variable named evaluated
"""A helper method named eval_score and a variable named evaluated."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class MethodNamedEvalScoreInput(BaseModel):
    text: str = ""


class MethodNamedEvalScoreOutput(BaseModel):
    result: str


class MethodNamedEvalScore(BaseSkill[MethodNamedEvalScoreInput, MethodNamedEvalScoreOutput]):
    name = "method_named_eval_score"
    description = "Corpus skill: a helper method named eval_score and a variable named evaluated."
    input_model = MethodNamedEvalScoreInput
    output_model = MethodNamedEvalScoreOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def eval_score(self, words: list[str]) -> float:
        evaluated = sum(len(w) for w in words)
        return evaluated / max(len(words), 1)

    def execute(self, input_data: MethodNamedEvalScoreInput) -> MethodNamedEvalScoreOutput:
        return MethodNamedEvalScoreOutput(result=f"{self.eval_score(input_data.text.split()):.2f}")
