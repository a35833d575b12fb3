# side_effect: READ_ONLY
# tricky: a custom exception, raise from, try/except/else/finally
"""A custom exception, raise from, try/except/else/finally."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TooLong(ValueError):
    """Raised when the text is over the limit."""


class ExceptionsCustomInput(BaseModel):
    text: str = ""


class ExceptionsCustomOutput(BaseModel):
    result: str


class ExceptionsCustom(BaseSkill[ExceptionsCustomInput, ExceptionsCustomOutput]):
    name = "exceptions_custom"
    description = "Corpus skill: a custom exception, raise from, try/except/else/finally."
    input_model = ExceptionsCustomInput
    output_model = ExceptionsCustomOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ExceptionsCustomInput) -> ExceptionsCustomOutput:
        steps: list[str] = []
        try:
            if len(input_data.text) > 1000:
                raise TooLong("too long")
            value = int(input_data.text or "0")
        except ValueError as err:
            steps.append(type(err).__name__)
            value = -1
        else:
            steps.append("ok")
        finally:
            steps.append("done")
        return ExceptionsCustomOutput(result=f"{value} {steps}")
