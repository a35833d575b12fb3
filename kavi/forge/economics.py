"""What each trusted skill cost to forge and what it has been used for, and when it pays for itself.

Forge cost of NAME@N: every model call spent on the attempts after NAME@N-1's promoted attempt up to and including
NAME@N's (failed attempts count), the independent implementations those attempts asked for, and the research advice
calls on them; priced per model from configuration, in USD per million prompt and completion tokens. A model
without a configured price (the recorded model, unless someone prices it) costs 0 and is listed as unpriced.

Break-even uses = forge cost ÷ saving per use, rounded up. The saving per use is an estimate of what one model call
doing the task instead of the skill would cost: KAVI_SAVING_PER_USE_USD when set, else the builder model's price
for a call of ESTIMATE_PROMPT_TOKENS prompt and ESTIMATE_COMPLETION_TOKENS completion tokens. Running the skill is
counted as free (it runs locally); its time is reported beside.
"""

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kavi.home import KaviHome
from kavi.ledger.records import ForgeRecords
from kavi.prices import MAX_PRICE_ENTRIES, PRICES_ENV, SAVING_ENV, Price
from kavi.prices import model_name as _model_name
from kavi.prices import price_value as _price_value
from kavi.settings import KaviSettings, read_setting

PRICES_FILE = "prices.yaml"
ESTIMATE_PROMPT_TOKENS = 1000
ESTIMATE_COMPLETION_TOKENS = 500

DEFINITION = (f"break-even uses = forge cost ÷ saving per use (rounded up); the saving per use is an estimate of one "
              f"model call doing the task: {SAVING_ENV} if set, else the builder model's price for "
              f"{ESTIMATE_PROMPT_TOKENS} prompt + {ESTIMATE_COMPLETION_TOKENS} completion tokens; prices are USD per "
              f"million tokens from {PRICES_ENV} or {PRICES_FILE} in the home; an unpriced model costs 0")


def load_prices(home: KaviHome, configured: Mapping[str, Price] | None = None) -> dict[str, Price]:
    """The prices file in the home (`model: {prompt: X, completion: Y}`), overridden by KAVI_PRICES (`configured`,
    the settings' prices; None: the variable alone, read by kavi.settings)."""
    prices: dict[str, Price] = {}
    path: Path = home.root / PRICES_FILE
    if path.is_file():
        if path.stat().st_size > 1_000_000:
            raise ValueError(f"{path} is larger than 1 MB")
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as err:
            raise ValueError(f"{path} is not YAML: {str(err)[:200]}") from None
        if not isinstance(doc, dict) or len(doc) > MAX_PRICE_ENTRIES:
            raise ValueError(f"{path} must map model names to {{prompt: X, completion: Y}} (USD per million tokens)")
        for model, entry in doc.items():
            where = f"{path.name}: {str(model)[:80]}"
            if not isinstance(entry, dict) or "prompt" not in entry:
                raise ValueError(f"{where} must read {{prompt: X, completion: Y}}")
            prompt = _price_value(entry["prompt"], where)
            prices[_model_name(model, where)] = Price(prompt, _price_value(entry.get("completion", prompt), where))
    prices.update(read_setting("prices") if configured is None else configured)
    return prices


def saving_per_use(settings: KaviSettings | None = None) -> float | None:
    """KAVI_SAVING_PER_USE_USD (None when unset) of the settings, else the variable alone."""
    value: float | None = settings.saving_per_use_usd if settings is not None else read_setting("saving_per_use_usd")
    return value


@dataclass
class ModelSpend:
    model: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_ms: float = 0.0
    cost_usd: float = 0.0
    priced: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "wall_s": round(self.wall_ms / 1000, 3),
                "cost_usd": round(self.cost_usd, 6), "priced": self.priced}


@dataclass
class VersionEconomics:
    ref: str
    name: str
    version: int
    builder_model: str | None
    attempts: int
    failed_attempts: int
    forge_cost_usd: float
    forge_wall_s: float
    by_model: list[ModelSpend]
    executions: int
    executions_total_s: float
    executions_median_ms: float | None
    saving_per_use_usd: float
    saving_source: str
    break_even_uses: int | None
    uses_to_go: int | None
    unpriced_models: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "name": self.name, "version": self.version, "builder_model": self.builder_model,
                "attempts": self.attempts, "failed_attempts": self.failed_attempts,
                "forge_cost_usd": round(self.forge_cost_usd, 6), "forge_wall_s": round(self.forge_wall_s, 3),
                "by_model": [m.to_dict() for m in self.by_model], "executions": self.executions,
                "executions_total_s": round(self.executions_total_s, 3),
                "executions_median_ms": None if self.executions_median_ms is None else round(self.executions_median_ms,
                                                                                             3),
                "saving_per_use_usd": round(self.saving_per_use_usd, 6), "saving_source": self.saving_source,
                "break_even_uses": self.break_even_uses, "uses_to_go": self.uses_to_go,
                "unpriced_models": self.unpriced_models}


def _spend(by: dict[str, ModelSpend], prices: Mapping[str, Price], model: str | None, prompt: int | None,
           completion: int | None, latency_ms: float | None) -> float:
    name = model or "(unknown)"
    spend = by.setdefault(name, ModelSpend(name))
    price = prices.get(name)
    cost = price.cost(prompt, completion) if price else 0.0
    spend.calls += 1
    spend.prompt_tokens += prompt or 0
    spend.completion_tokens += completion or 0
    spend.wall_ms += latency_ms or 0.0
    spend.cost_usd += cost
    spend.priced = spend.priced and price is not None
    return cost


def economics(records: ForgeRecords, home: KaviHome, name: str | None = None,
              settings: KaviSettings | None = None) -> list[VersionEconomics]:
    """Per trusted version (of NAME): forge cost by model, executions, break-even (see the module docstring)."""
    prices = load_prices(home, None if settings is None else settings.prices)
    fixed_saving = saving_per_use(settings)
    trusted = records.trusted_versions(name)
    out: list[VersionEconomics] = []
    with records.ledger.connect() as con:
        promoted = {str(r[0]): (str(r[1]), int(r[2])) for r in con.execute(
            "SELECT p.build_id, p.proposal_name, b.attempt_number FROM promotions p JOIN builds b "
            "ON b.build_id = p.build_id").fetchall()}
        for t in trusted:
            this_attempt = promoted.get(t.build_id, (t.name, 0))[1]
            earlier = [a for (n, a) in promoted.values() if n == t.name and a < this_attempt]
            low = max(earlier) if earlier else 0
            builds = con.execute(
                "SELECT build_id, model, status, prompt_tokens, completion_tokens, latency_ms FROM builds "
                "WHERE proposal_name = ? AND attempt_number > ? AND attempt_number <= ? ORDER BY attempt_number",
                [t.name, low, this_attempt]).fetchall()
            ids = [str(b[0]) for b in builds]
            by: dict[str, ModelSpend] = {}
            total = 0.0
            for b in builds:
                if b[1] is not None:
                    total += _spend(by, prices, b[1], b[3], b[4], b[5])
            extra: list[Any] = []
            if ids:
                marks = ", ".join("?" for _ in ids)
                extra += con.execute(f"SELECT model, prompt_tokens, completion_tokens, latency_ms FROM independents "
                                     f"WHERE requested_by_build IN ({marks})", ids).fetchall()
                extra += con.execute(f"SELECT model, prompt_tokens, completion_tokens, latency_ms FROM model_calls "
                                     f"WHERE build_id IN ({marks})", ids).fetchall()
            for m, p, c, lat in extra:
                total += _spend(by, prices, m, p, c, lat)
            runs = [float(r[0] or 0.0) for r in con.execute(
                "SELECT duration_ms FROM executions WHERE skill_name = ? AND (skill_version = ? OR (skill_version IS "
                "NULL AND source_hash = ?))", [t.name, t.version, t.source_sha256]).fetchall()]
            builder = next((str(b[1]) for b in builds if str(b[0]) == t.build_id), None)
            if fixed_saving is not None:
                saving, source = fixed_saving, SAVING_ENV
            else:
                price = prices.get(builder or "")
                saving = price.cost(ESTIMATE_PROMPT_TOKENS, ESTIMATE_COMPLETION_TOKENS) if price else 0.0
                source = (f"estimate: {builder} for {ESTIMATE_PROMPT_TOKENS}+{ESTIMATE_COMPLETION_TOKENS} tokens"
                          if price else f"no estimate: {builder or 'the builder model'} has no price and "
                                        f"{SAVING_ENV} is unset")
            if total == 0:
                even: int | None = 0
            elif saving > 0:
                even = math.ceil(total / saving)
            else:
                even = None
            out.append(VersionEconomics(
                t.ref, t.name, t.version, builder, len(builds), sum(1 for b in builds if str(b[0]) != t.build_id),
                total, sum(s.wall_ms for s in by.values()) / 1000, sorted(by.values(), key=lambda s: s.model),
                len(runs), sum(runs) / 1000, statistics.median(runs) if runs else None, saving, source, even,
                None if even is None else max(0, even - len(runs)),
                sorted(s.model for s in by.values() if not s.priced)))
    return out

