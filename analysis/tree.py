"""The nodes of a syntax tree in `ast.walk`'s order (breadth first, children in
field order), as a list: about three times faster than `ast.walk`, whose
generators cost more than the visit itself on the analysis's hot paths
(relevance reads every function this way on each cold analysis)."""
from __future__ import annotations

import ast


def nodes(root: ast.AST) -> list:
    found = [root]
    index = 0
    while index < len(found):
        node = found[index]
        index += 1
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                found.extend([v for v in value if isinstance(v, ast.AST)])
            elif isinstance(value, ast.AST):
                found.append(value)
    return found
