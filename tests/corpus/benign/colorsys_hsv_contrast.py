# side_effect: READ_ONLY
# tricky: colorsys.rgb_to_hsv plus a WCAG contrast computation
# family: numbers
"""Compute the contrast ratio of two colours and their HSV values."""

import colorsys
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


class ColorsysHsvContrastInput(BaseModel):
    foreground: tuple[int, int, int]
    background: tuple[int, int, int]


class ColorsysHsvContrastOutput(BaseModel):
    ratio: float
    passes_aa: bool
    hsv: list[list[float]]


class ColorsysHsvContrast(BaseSkill[ColorsysHsvContrastInput, ColorsysHsvContrastOutput]):
    name = "colorsys_hsv_contrast"
    description = "Compute the contrast ratio of two colours and their HSV values."
    input_model = ColorsysHsvContrastInput
    output_model = ColorsysHsvContrastOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ColorsysHsvContrastInput) -> ColorsysHsvContrastOutput:
        l1, l2 = sorted((_luminance(input_data.foreground), _luminance(input_data.background)), reverse=True)
        ratio = (l1 + 0.05) / (l2 + 0.05)
        hsv = [[round(v, 4) for v in colorsys.rgb_to_hsv(*(c / 255 for c in rgb))]
               for rgb in (input_data.foreground, input_data.background)]
        return ColorsysHsvContrastOutput(ratio=round(ratio, 2), passes_aa=ratio >= 4.5, hsv=hsv)
