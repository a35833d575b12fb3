"""Task types: the side-effect class and a complexity band, the unit the learner keeps posteriors for."""

from kavi.skills.base import SideEffectClass

SIMPLE_BELOW = 0.34
COMPLEX_FROM = 0.67


def complexity_band(complexity: float) -> str:
    if complexity < SIMPLE_BELOW:
        return "simple"
    if complexity < COMPLEX_FROM:
        return "moderate"
    return "complex"


def task_type(side_effect_class: SideEffectClass, complexity: float) -> str:
    return f"{side_effect_class.value}/{complexity_band(complexity)}"
