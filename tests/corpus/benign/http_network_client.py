# side_effect: NETWORK
# tricky: a NETWORK skill using the HTTP client it is given
"""A NETWORK skill using the HTTP client it is given."""

import json
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HttpNetworkClientInput(BaseModel):
    text: str = ""


class HttpNetworkClientOutput(BaseModel):
    result: str


class HttpNetworkClient(BaseSkill[HttpNetworkClientInput, HttpNetworkClientOutput]):
    name = "http_network_client"
    description = "Corpus skill: a NETWORK skill using the HTTP client it is given."
    input_model = HttpNetworkClientInput
    output_model = HttpNetworkClientOutput
    side_effect_class = SideEffectClass.NETWORK

    def execute(self, input_data: HttpNetworkClientInput) -> HttpNetworkClientOutput:
        data = self.http.get_json("https://api.example.org/search", params={"q": input_data.text})
        page = self.http.get_text("https://example.org/robots.txt")
        return HttpNetworkClientOutput(result=json.dumps({"hits": data, "robots": len(page)}))
