# side_effect: NETWORK
# tricky: html.parser over text fetched through self.http.get_text
# family: handles
"""Fetch pages through the HTTP client and report their titles and links."""

from html.parser import HTMLParser
from urllib.parse import urljoin
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.links: list[str] = []
        self._title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._title = tag == "title"
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            self.links.append(href)

    def handle_data(self, data: str) -> None:
        if self._title:
            self.title += data
            self._title = False


class HttpHtmlTitleParserInput(BaseModel):
    urls: list[str]


class HttpHtmlTitleParserOutput(BaseModel):
    pages: dict[str, dict[str, str | int]]


class HttpHtmlTitleParser(BaseSkill[HttpHtmlTitleParserInput, HttpHtmlTitleParserOutput]):
    name = "http_html_title_parser"
    description = "Fetch pages through the HTTP client and report their titles and links."
    input_model = HttpHtmlTitleParserInput
    output_model = HttpHtmlTitleParserOutput
    side_effect_class = SideEffectClass.NETWORK

    def execute(self, input_data: HttpHtmlTitleParserInput) -> HttpHtmlTitleParserOutput:
        pages: dict[str, dict[str, str | int]] = {}
        for url in input_data.urls[:10]:
            parser = _Page()
            parser.feed(self.http.get_text(url))
            pages[url] = {"title": parser.title.strip(), "links": len({urljoin(url, h) for h in parser.links})}
        return HttpHtmlTitleParserOutput(pages=pages)
