"""What a refused name gives a skill, as the rule that reports it, the reason and the allowed way.

The decisions are data (default_policy.yaml's `alternatives`, capability_map.yaml's `modules`); these helpers only
read them, so a message always says what to use instead.
"""

from kavi.policy.policy import Policy, Refusal


def attribute_refusal(policy: Policy, name: str) -> Refusal:
    """Why an attribute in the policy's `denied_attributes` is refused (frame, code and generator internals when the
    policy names nothing more specific)."""
    found = policy.alternatives.get(name)
    if found is not None and found.rule:
        return found
    return Refusal(rule="POL-INTROSPECTION", reason="frame, code or generator internals",
                   instead=policy.alternative("POL-INTROSPECTION"))


def module_refusal(policy: Policy, module: str, side_effect: str) -> Refusal:
    """Why importing (or reaching) `module` is refused for a skill of class `side_effect`."""
    entry = policy.module_entry(module)
    if entry is None:
        return Refusal(rule="POL-IMPORT", reason="a module the capability map does not list (or a private part of one)",
                       instead=policy.alternative("POL-IMPORT"))
    listed, e = entry
    if e.verdict == "needs":
        return Refusal(rule=e.rule, reason=f"{e.reason}: a capability of {e.needs} skills, only through its handle",
                       instead=e.instead)
    if e.verdict == "refused":
        return Refusal(rule=e.rule, reason=e.reason, instead=e.instead)
    return Refusal(rule="POL-IMPORT", reason=f"{listed!r} is not in this policy's imports for {side_effect} skills",
                   instead=policy.alternative("POL-IMPORT"))
