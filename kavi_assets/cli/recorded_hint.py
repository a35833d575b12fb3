"""The one line that says the recorded model cannot forge a person's own proposal, and how to configure a model."""

from kavi.llm.client import NOT_CONFIGURED_FIX

__all__ = ["NOT_CONFIGURED_FIX", "recorded_model_note"]


def recorded_model_note(name: str) -> str | None:
    """The line for a proposal the recorded model has no recording of, when no endpoint is configured; else None."""
    from kavi.llm.recorded import default_cassette_dir, load_cassettes
    from kavi.settings import read_setting

    if read_setting("llm_base_url"):
        return None
    if name in load_cassettes(default_cassette_dir()).by_skill:
        return None
    return f"{name}: {NOT_CONFIGURED_FIX}"
