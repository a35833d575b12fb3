# side_effect: NETWORK
# tricky: urllib.parse.urlencode/quote build the URL; the HTTP handle does the fetching
# family: handles
"""Search an API with a properly encoded query through the HTTP client."""

from urllib.parse import quote, urlencode
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


API = "https://api.example.org/v1/search"


class HttpQueryUrlencodeInput(BaseModel):
    query: str
    page: int = 1


class HttpQueryUrlencodeOutput(BaseModel):
    url: str
    item_count: int


class HttpQueryUrlencode(BaseSkill[HttpQueryUrlencodeInput, HttpQueryUrlencodeOutput]):
    name = "http_query_urlencode"
    description = "Search an API with a properly encoded query through the HTTP client."
    input_model = HttpQueryUrlencodeInput
    output_model = HttpQueryUrlencodeOutput
    side_effect_class = SideEffectClass.NETWORK

    def execute(self, input_data: HttpQueryUrlencodeInput) -> HttpQueryUrlencodeOutput:
        url = f"{API}/{quote(input_data.query.strip(), safe='')}?" + urlencode({"page": max(1, input_data.page)})
        data = self.http.get_json(url)
        items = data.get("items", []) if isinstance(data, dict) else []
        return HttpQueryUrlencodeOutput(url=url, item_count=len(items))
