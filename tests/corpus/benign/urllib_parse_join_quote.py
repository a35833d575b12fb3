# side_effect: READ_ONLY
# tricky: urljoin, quote and unquote build links; no request is made
# family: pure-urls
"""Resolve relative links against a base URL and percent-encode path segments."""

import urllib.parse
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class UrllibParseJoinQuoteInput(BaseModel):
    base: str
    links: list[str]


class UrllibParseJoinQuoteOutput(BaseModel):
    absolute: list[str]
    external: list[str]


class UrllibParseJoinQuote(BaseSkill[UrllibParseJoinQuoteInput, UrllibParseJoinQuoteOutput]):
    name = "urllib_parse_join_quote"
    description = "Resolve relative links against a base URL and percent-encode path segments."
    input_model = UrllibParseJoinQuoteInput
    output_model = UrllibParseJoinQuoteOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: UrllibParseJoinQuoteInput) -> UrllibParseJoinQuoteOutput:
        base_host = urllib.parse.urlparse(input_data.base).netloc
        absolute: list[str] = []
        external: list[str] = []
        for link in input_data.links:
            parsed = urllib.parse.urlparse(link)
            safe_path = urllib.parse.quote(urllib.parse.unquote(parsed.path), safe="/")
            joined = urllib.parse.urljoin(input_data.base, parsed._replace(path=safe_path).geturl())
            absolute.append(joined)
            if urllib.parse.urlparse(joined).netloc != base_host:
                external.append(joined)
        return UrllibParseJoinQuoteOutput(absolute=absolute, external=external)
