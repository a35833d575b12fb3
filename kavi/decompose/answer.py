"""The model's decomposition answer, parsed strictly and checked against every bound before anything is recorded.

A decomposition is the forge asking the model to split a proposal it could not verify into 2-5 child proposals and
a composition. The answer is untrusted: its size, its JSON shape, every child (through the normal proposal
validation), each child's side-effect class (never wider than the parent's), each child's name (the proposal-name
rules, no collision with a proposal the ledger holds), the composition (kavi.decompose.composition), the
tree's depth and its total node budget are checked here. Any failure is one line, recorded as the decomposition's
failure; nothing of a refused answer reaches the ledger as a proposal.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from kavi.decompose.composition import validate_composition
from kavi.proposals.bounds import PROPOSAL_BOUNDS, BoundsError, parse_json_bounded
from kavi.proposals.model import Proposal, ProposalError, check_build_prompt, parse_proposal
from kavi.runtime.composition import Composition, CompositionError, parse_composition
from kavi.settings import DEFAULT_DECOMPOSE_ABOVE as DEFAULT_ABOVE
from kavi.settings import DEFAULT_DECOMPOSE_MAX_DEPTH as DEFAULT_MAX_DEPTH
from kavi.settings import DEFAULT_DECOMPOSE_MAX_NODES as DEFAULT_MAX_NODES
from kavi.settings import KaviSettings, load_settings
from kavi.skills.base import SideEffectClass

MIN_CHILDREN = 2
MAX_CHILDREN = 5
MAX_ANSWER_CHARS = 200_000
# The complexity (1..10) above which a proposal is decomposed before any attempt (DEFAULT_ABOVE, 8, with the
# settings). No shipped example is above 6, so the default decomposes only the most complex proposals (scale 9 and
# 10) up front.
__all__ = ["DEFAULT_ABOVE", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_NODES"]

CLASS_RANK = {
    SideEffectClass.READ_ONLY: 0,
    SideEffectClass.FILE_WRITE: 1,
    SideEffectClass.NETWORK: 2,
    SideEffectClass.SECRET_READ: 3,
}


class DecompositionError(ValueError):
    """A decomposition answer that was refused; the message is one line."""


@dataclass(frozen=True)
class DecomposeLimits:
    above: int = DEFAULT_ABOVE  # KAVI_DECOMPOSE_ABOVE: complexity (1..10) above which to decompose up front
    max_depth: int = DEFAULT_MAX_DEPTH  # KAVI_DECOMPOSE_MAX_DEPTH: children of a root are depth 1
    max_nodes: int = DEFAULT_MAX_NODES  # KAVI_DECOMPOSE_MAX_NODES: proposals in one tree, the root included

    @classmethod
    def from_settings(cls, settings: KaviSettings) -> "DecomposeLimits":
        return cls(above=settings.decompose_above, max_depth=settings.decompose_max_depth,
                   max_nodes=settings.decompose_max_nodes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "DecomposeLimits":
        """The limits of a mapping of variables (None: of the environment, read by kavi.settings)."""
        return cls.from_settings(load_settings(environ))


@dataclass(frozen=True)
class Decomposition:
    children: list[Proposal]
    composition: Composition

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.children]


def parse_decomposition(text: str, parent: Proposal, *, existing: Collection[str], depth: int, tree_nodes: int,
                        limits: DecomposeLimits) -> Decomposition:
    """Parse and check the answer for `parent`, which sits at `depth` (a root is 0) of a tree that holds
    `tree_nodes` proposals now. `existing` is every proposal name the ledger holds. DecompositionError if refused."""
    if depth + 1 > limits.max_depth:
        raise DecompositionError(f"{parent.name}: its children would be at depth {depth + 1}, beyond the maximum "
                                 f"depth {limits.max_depth} (KAVI_DECOMPOSE_MAX_DEPTH)")
    if len(text) > MAX_ANSWER_CHARS:
        raise DecompositionError(f"the answer holds {len(text)} characters; at most {MAX_ANSWER_CHARS} are allowed")
    try:
        data = parse_json_bounded(text.strip(), PROPOSAL_BOUNDS, "the decomposition answer")
    except BoundsError as err:
        raise DecompositionError(str(err)) from None
    except ValueError as err:
        raise DecompositionError(f"the answer is not JSON: {str(err).splitlines()[0][:200]}") from None
    if not isinstance(data, dict):
        raise DecompositionError(f"the answer must be a JSON object, got {type(data).__name__}")
    extra = set(data) - {"children", "composition", "notes"}
    if extra:
        raise DecompositionError(f"the answer has unknown keys: {', '.join(sorted(map(str, extra)))}")
    raw_children = data.get("children")
    if not isinstance(raw_children, list):
        raise DecompositionError("the answer needs `children`: a list of child proposals")
    if not MIN_CHILDREN <= len(raw_children) <= MAX_CHILDREN:
        raise DecompositionError(f"the answer has {len(raw_children)} children; a decomposition has "
                                 f"{MIN_CHILDREN} to {MAX_CHILDREN}")
    if tree_nodes + len(raw_children) > limits.max_nodes:
        total = tree_nodes + len(raw_children)
        raise DecompositionError(f"{len(raw_children)} more children would make the tree {total} "
                                 f"proposals, beyond the budget of {limits.max_nodes} (KAVI_DECOMPOSE_MAX_NODES)")
    children: list[Proposal] = []
    taken = set(existing)
    for i, raw in enumerate(raw_children):
        label = f"child {i}" + (f" ({raw.get('name')})" if isinstance(raw, dict) and isinstance(raw.get("name"), str)
                                else "")
        try:
            child = parse_proposal(raw, label)
            check_build_prompt(child, label)
        except ProposalError as err:
            raise DecompositionError(" ".join(str(err).split())[:600]) from None
        if CLASS_RANK[child.side_effect_class] > CLASS_RANK[parent.side_effect_class]:
            raise DecompositionError(f"{label}: side_effect_class {child.side_effect_class.value} is wider than the "
                                     f"parent's {parent.side_effect_class.value}")
        if set(child.required_secrets) - set(parent.required_secrets):
            raise DecompositionError(f"{label}: asks for secrets the parent does not declare: "
                                     f"{', '.join(sorted(set(child.required_secrets) - set(parent.required_secrets)))}")
        if child.name == parent.name or child.name in taken:
            raise DecompositionError(f"{label}: the name {child.name!r} is already a proposal")
        taken.add(child.name)
        children.append(child)
    try:
        comp = parse_composition(data.get("composition"))
        validate_composition(comp, parent, {c.name: c for c in children})
    except CompositionError as err:
        raise DecompositionError(str(err)) from None
    return Decomposition(children, comp)
