# side_effect: READ_ONLY
# tricky: urllib.parse.urlsplit/parse_qs/urlencode; urllib.request is never imported
# family: pure-urls
"""Parse a URL, drop tracking parameters and rebuild it."""

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


TRACKING = frozenset({"utm_source", "utm_medium", "utm_campaign", "ref", "fbclid", "gclid"})


class UrllibParseQueryParamsInput(BaseModel):
    url: str


class UrllibParseQueryParamsOutput(BaseModel):
    clean_url: str
    host: str
    params: dict[str, list[str]]


class UrllibParseQueryParams(BaseSkill[UrllibParseQueryParamsInput, UrllibParseQueryParamsOutput]):
    name = "urllib_parse_query_params"
    description = "Parse a URL, drop tracking parameters and rebuild it."
    input_model = UrllibParseQueryParamsInput
    output_model = UrllibParseQueryParamsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: UrllibParseQueryParamsInput) -> UrllibParseQueryParamsOutput:
        parts = urlsplit(input_data.url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"unsupported scheme {parts.scheme!r}")
        kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in TRACKING]
        params: dict[str, list[str]] = {}
        for key, value in kept:
            params.setdefault(key, []).append(value)
        clean = urlunsplit((parts.scheme, parts.netloc.lower(), parts.path, urlencode(kept), ""))
        return UrllibParseQueryParamsOutput(clean_url=clean, host=parts.hostname or "", params=params)
