"""The capability-aware policy scanner: every import, name, attribute, call and import-time statement of a
skill module is checked against the policy and the skill's declared side-effect class.

What a module gives is decided by the capability map (capability_map.yaml, part of the policy): pure, mixed
(attribute by attribute), needing a side-effect class's handle, or refused; every refusal names the allowed way.
The rules live in families (kavi/policy/families: imports, strings, type positions, handles, names,
import time), each tested in tests/policy/test_<family>.py or the corpus tests.

Names are resolved, not matched: an alias or a re-bound name is followed to what it is bound to, an attribute
of an allowed module is followed to the object it really is (so `typing.sys` is `sys`), and a name that is
bound in more than one way is never trusted to be the builtin or the import it looks like.
"""


import ast
from collections.abc import Sequence

from kavi.policy.families.import_time import ImportTimeRules
from kavi.policy.policy import Policy, default_policy
from kavi.skills.base import SideEffectClass
from kavi.verdicts import Violation


class _Scanner(ImportTimeRules):
    """Every family of rules, in one visitor."""


def scan_source(
    source: str,
    side_effect: SideEffectClass,
    *,
    declared_secrets: Sequence[str] = (),
    policy: Policy | None = None,
) -> list[Violation]:
    """Every capability the module uses beyond its declared class. Raises SyntaxError on unparsable source."""
    tree = ast.parse(source)
    scanner = _Scanner(source, tree, side_effect, declared_secrets, policy or default_policy())
    scanner.check_module_body(tree)
    # Handle calls are marked before attribute checks see `self.<handle>`.
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            scanner._check_handle_call(node)
    scanner.visit(tree)
    return sorted(scanner.found, key=lambda v: (v.line, v.col, v.rule_id))
