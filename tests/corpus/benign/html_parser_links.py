# side_effect: READ_ONLY
# tricky: subclasses html.parser.HTMLParser and feeds it a string
# family: text-formats
"""Collect the links and the title of an HTML page given as text."""

from html.parser import HTMLParser
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class _LinkCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.links.append(href)
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


class HtmlParserLinksInput(BaseModel):
    html_text: str


class HtmlParserLinksOutput(BaseModel):
    title: str
    links: list[str]


class HtmlParserLinks(BaseSkill[HtmlParserLinksInput, HtmlParserLinksOutput]):
    name = "html_parser_links"
    description = "Collect the links and the title of an HTML page given as text."
    input_model = HtmlParserLinksInput
    output_model = HtmlParserLinksOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: HtmlParserLinksInput) -> HtmlParserLinksOutput:
        parser = _LinkCollector()
        parser.feed(input_data.html_text)
        parser.close()
        return HtmlParserLinksOutput(title=parser.title.strip(), links=parser.links)
