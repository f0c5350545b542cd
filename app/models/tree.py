"""Fast walks over a model's module tree.

`nn.Module.modules()` and `.parameters()` walk the tree through nested generators, one level per nesting;
a 96-block Stack nests seven deep (Stack > ModuleList > Block > ModuleDict > unit > branch > Linear), so its
~1,450 modules and ~1,200 parameters cost about 1 ms and 10 ms that way, against a few tenths of a ms here.
Same order and same members as the torch methods (tests/test_models.py checks it).
"""

from __future__ import annotations

from torch import nn


def submodules(module: nn.Module) -> list[nn.Module]:
    """What `module.modules()` yields: the module and every submodule, each once, depth first in registration order."""
    found: dict[int, nn.Module] = {}
    stack = [module]
    while stack:
        current = stack.pop()
        if id(current) in found:
            continue
        found[id(current)] = current
        if current._modules:
            stack.extend(reversed([child for child in current._modules.values() if child is not None]))
    return list(found.values())


def parameters_with_owner(root: nn.Module, owners: list[nn.Module]) -> tuple[list[nn.Parameter], list[int]]:
    """Every parameter of `root`, as `root.parameters()` lists them, and for each the index in `owners` of the
    owner module it sits inside (-1 for none): one walk gives a model's parameter count and its units' parameters."""
    owner_of = {id(module): index for index, module in enumerate(owners)}
    parameters, indices, seen = [], [], set()
    stack = [(root, -1)]
    while stack:
        current, index = stack.pop()
        index = owner_of.get(id(current), index)
        for parameter in current._parameters.values():
            if parameter is not None and id(parameter) not in seen:
                seen.add(id(parameter))
                parameters.append(parameter)
                indices.append(index)
        if current._modules:
            stack.extend((child, index) for child in reversed(current._modules.values()) if child is not None)
    return parameters, indices
