"""Bounded parsing of untrusted YAML (proposal files) within kavi.proposals.bounds' bounds, and the safe loader of
the forge's own YAML files."""

import math
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.error import Mark

from kavi.proposals.bounds import PROPOSAL_BOUNDS, Bounds, BoundsError, check_text_size, check_tree, short_repr

# The forge's own YAML files (the policy, the capability map, the cassettes), not untrusted text (that goes through
# parse_yaml_bounded): libyaml's safe loader where PyYAML was built with it (the same safe subset, faster),
# else the pure-Python one.
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _at(mark: Mark | None) -> str:
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


_MERGE_TAG = "tag:yaml.org,2002:merge"


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader without anchors, aliases or merge keys, refusing duplicate keys, deep nesting and long numbers."""

    def __init__(self, stream: str, bounds: Bounds) -> None:
        super().__init__(stream)
        self._bounds = bounds
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent) or anchor is not None:
            kind = "alias *" if isinstance(event, yaml.AliasEvent) else "anchor &"
            raise BoundsError(f"YAML anchors and aliases are not allowed ({kind}{anchor}{_at(event.start_mark)})")
        container = isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent)
        if container:
            self._depth += 1
            if self._depth > self._bounds.max_depth:
                raise BoundsError(f"the document is nested deeper than {self._bounds.max_depth} levels"
                                  f"{_at(event.start_mark)}")
        try:
            node = super().compose_node(parent, index)
            if node is None:  # cannot happen: an event was peeked above
                raise ConstructorError(None, None, "expected a node", event.start_mark)
            return node
        finally:
            if container:
                self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):
            raise ConstructorError(None, None, "expected a mapping node", node.start_mark)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                raise BoundsError(f"YAML merge keys ('<<') are not allowed{_at(key_node.start_mark)}")
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in mapping
            except TypeError:
                raise ConstructorError("while constructing a mapping", node.start_mark, "found an unhashable key",
                                       key_node.start_mark) from None
            if duplicate:
                raise BoundsError(f"duplicate key {short_repr(key)}{_at(key_node.start_mark)}")
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def _bounded_int(self, node: yaml.ScalarNode) -> int:
        text = str(self.construct_scalar(node))
        digits = len(text.lstrip("+-").replace("_", ""))
        if digits > self._bounds.max_int_digits:
            raise BoundsError(f"an integer has {digits} digits; at most {self._bounds.max_int_digits} are allowed"
                              f"{_at(node.start_mark)}")
        return self.construct_yaml_int(node)

    def _finite_float(self, node: yaml.ScalarNode) -> float:
        value = self.construct_yaml_float(node)
        if not math.isfinite(value):
            raise BoundsError(f"{value} is not allowed: numbers must be finite{_at(node.start_mark)}")
        return value


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader._bounded_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader._finite_float)


def parse_yaml_bounded(text: str, bounds: Bounds = PROPOSAL_BOUNDS, what: str = "the text") -> Any:
    """yaml.safe_load within `bounds`; malformed YAML still raises yaml.YAMLError for the caller to word."""
    check_text_size(text, bounds, what)
    loader = _BoundedLoader(text, bounds)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    check_tree(data, bounds)
    return data
