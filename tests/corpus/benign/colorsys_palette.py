# side_effect: READ_ONLY
# tricky: colorsys.rgb_to_hls/hls_to_rgb conversions
# family: numbers
"""Build a palette of lighter and darker shades of a hex colour."""

import colorsys
import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


HEX = re.compile(r"^#?([0-9a-fA-F]{6})$")


class ColorsysPaletteInput(BaseModel):
    color: str
    steps: int = 2


class ColorsysPaletteOutput(BaseModel):
    shades: list[str]
    hue_degrees: float


class ColorsysPalette(BaseSkill[ColorsysPaletteInput, ColorsysPaletteOutput]):
    name = "colorsys_palette"
    description = "Build a palette of lighter and darker shades of a hex colour."
    input_model = ColorsysPaletteInput
    output_model = ColorsysPaletteOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ColorsysPaletteInput) -> ColorsysPaletteOutput:
        m = HEX.match(input_data.color.strip())
        if not m:
            raise ValueError("colour must be #rrggbb")
        r, g, b = (int(m[1][i:i + 2], 16) / 255 for i in (0, 2, 4))
        h, lightness, s = colorsys.rgb_to_hls(r, g, b)
        shades = []
        steps = max(1, min(input_data.steps, 10))
        for i in range(-steps, steps + 1):
            level = min(1.0, max(0.0, lightness + i * 0.1))
            rr, gg, bb = colorsys.hls_to_rgb(h, level, s)
            shades.append("#" + "".join(f"{round(c * 255):02x}" for c in (rr, gg, bb)))
        return ColorsysPaletteOutput(shades=shades, hue_degrees=round(h * 360, 2))
