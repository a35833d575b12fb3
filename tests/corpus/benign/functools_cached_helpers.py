# side_effect: READ_ONLY
# tricky: functools caching decorators on module-level helpers
"""Functools caching decorators on module-level helpers."""

import functools
from functools import cache
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@functools.lru_cache(maxsize=128)
def syllables(word: str) -> int:
    return max(1, sum(1 for ch in word if ch in "aeiouy"))


@cache
def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class FunctoolsCachedHelpersInput(BaseModel):
    text: str = ""


class FunctoolsCachedHelpersOutput(BaseModel):
    result: str


class FunctoolsCachedHelpers(BaseSkill[FunctoolsCachedHelpersInput, FunctoolsCachedHelpersOutput]):
    name = "functools_cached_helpers"
    description = "Corpus skill: functools caching decorators on module-level helpers."
    input_model = FunctoolsCachedHelpersInput
    output_model = FunctoolsCachedHelpersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FunctoolsCachedHelpersInput) -> FunctoolsCachedHelpersOutput:
        total = sum(syllables(w) for w in input_data.text.split())
        return FunctoolsCachedHelpersOutput(result=f"{total} {fib(min(total, 30))}")
