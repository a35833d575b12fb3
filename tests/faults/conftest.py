"""Fixtures of the fault suite (the helpers live in fault_support)."""

from fault_support import stub_ctx, stub_endpoint

__all__ = ["stub_ctx", "stub_endpoint"]
