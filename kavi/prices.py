"""Model prices in USD per million tokens (KAVI_PRICES, KAVI_SAVING_PER_USE_USD), and their parsers."""

import math
from dataclasses import dataclass
from typing import Any

from kavi.settings_parsers import ConfigError, parse_float

PRICES_ENV = "KAVI_PRICES"
SAVING_ENV = "KAVI_SAVING_PER_USE_USD"
MAX_PRICE = 1_000_000.0  # USD per million tokens: anything above is a typo
MAX_MODEL_NAME = 200
MAX_PRICE_ENTRIES = 500


@dataclass(frozen=True)
class Price:
    prompt_per_m: float
    completion_per_m: float

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float:
        return ((prompt_tokens or 0) * self.prompt_per_m + (completion_tokens or 0) * self.completion_per_m) / 1e6


def price_value(text: Any, where: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value < 0 or value > MAX_PRICE:
        raise ValueError(f"{where}: a price must be a number from 0 to {MAX_PRICE:g} (USD per million tokens)")
    return value


def model_name(name: Any, where: str) -> str:
    text = str(name).strip()
    if not text or len(text) > MAX_MODEL_NAME or any(ord(c) < 32 for c in text):
        raise ValueError(f"{where}: a model name must be 1 to {MAX_MODEL_NAME} printable characters")
    return text


def parse_prices(raw: str) -> dict[str, Price]:
    """KAVI_PRICES: `model=PROMPT/COMPLETION,...` in USD per million tokens (one number: both)."""
    prices: dict[str, Price] = {}
    entries = [e.strip() for e in raw.split(",") if e.strip()]
    if len(entries) > MAX_PRICE_ENTRIES:
        raise ValueError(f"{PRICES_ENV} lists {len(entries)} prices; at most {MAX_PRICE_ENTRIES}")
    for entry in entries:
        model, sep, value = entry.rpartition("=")
        where = f"{PRICES_ENV} entry {entry[:80]!r}"
        if not sep:
            raise ValueError(f"{where} must read model=PROMPT/COMPLETION (USD per million tokens), "
                             f"e.g. {PRICES_ENV}=gpt-4o=2.5/10")
        p, _, c = value.partition("/")
        prompt = price_value(p, where)
        prices[model_name(model, where)] = Price(prompt, price_value(c, where) if c else prompt)
    return prices


def parse_saving(raw: str) -> float:
    value = parse_float(SAVING_ENV, raw, allow_minimum=True, example="0.002")
    try:
        return price_value(value, SAVING_ENV)
    except ValueError as err:
        raise ConfigError(str(err)) from None
