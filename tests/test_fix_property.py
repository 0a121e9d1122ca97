"""Property: for any wrapper/wrapped pair, `fix --write` leaves a file that is better, never broken.

Hypothesis draws the wrapped methods' signatures (positional-only, defaults, *args,
keyword-only, **kwargs, annotations, async) and the wrapper file's shape (indentation
unit, line endings, comments, decorators, docstrings, methods it already has). After
the fix: the file parses, `check` finds nothing fixable, a second fix changes nothing,
every original line is still there in order (import lines may be merged), and each new
method takes exactly the parameters of the method it delegates to.
"""

import ast
import io
import tempfile
import tokenize
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import plan as fixmod
from eaglelint.packs import select_interfaces

INTERFACE = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")
PARAM_NAMES = ("layer_ids", "embed", "head", "x", "scale", "mode", "items", "flag")
ANNOTATIONS = (None, "int", "Optional[List[int]]", "torch.Tensor", "Tuple[torch.Tensor, torch.Tensor]",
               '"torch.Tensor"', "Dict[str, int]")
DEFAULTS = ("None", "0", "-1", "'x'", "(1, 2)", "True", "torch.float16", "[\n            1,\n            2,\n        ]")
LM_HEAD = "from typing import Dict, List, Optional, Tuple\n\nimport torch\n\n\nclass TextModelForCausalLM:\n"


def _annotated(name: str, annotation: str | None, default: str | None = None) -> str:
    text = name + (f": {annotation}" if annotation else "")
    return text + (f"{' = ' if annotation else '='}{default}" if default is not None else "")


@st.composite
def signatures(draw) -> list[str]:
    """Parameters, `self` first, valid Python, of any shape the engine's methods could have."""
    names = draw(st.lists(st.sampled_from(PARAM_NAMES), unique=True, max_size=5))
    split = draw(st.integers(0, len(names)))
    positional, keyword_only = names[:split], names[split:]
    n_posonly = draw(st.integers(0, len(positional)))
    n_defaults = draw(st.integers(0, len(positional)))
    ann = st.sampled_from(ANNOTATIONS)
    parts = []
    for i, name in enumerate(positional):
        default = draw(st.sampled_from(DEFAULTS)) if i >= len(positional) - n_defaults else None
        parts.append(_annotated(name, draw(ann), default))
        if i + 1 == n_posonly:
            parts.append("/")
    vararg = draw(st.sampled_from((None, "args")))
    if vararg:
        parts.append("*" + _annotated(vararg, draw(st.sampled_from((None, "int")))))
    elif keyword_only:
        parts.append("*")
    for name in keyword_only:
        default = draw(st.sampled_from((None, *DEFAULTS)))
        parts.append(_annotated(name, draw(ann), default))
    if draw(st.booleans()):
        parts.append("**" + _annotated("kwargs", draw(st.sampled_from((None, "int")))))
    return ["self", *parts]


@st.composite
def wrapped_methods(draw) -> dict[str, str]:
    """method name -> its `def` line and body (4-space indented, inside the class)."""
    chosen = draw(st.lists(st.sampled_from(INTERFACE), min_size=1, max_size=3, unique=True))
    out = {}
    for name in chosen:
        returns = draw(st.sampled_from((None, "None", "Tuple[torch.Tensor, torch.Tensor]")))
        prefix = "async def" if draw(st.booleans()) and name != "get_embed_and_head" else "def"
        decorator = draw(st.sampled_from(("", "    @torch.no_grad()\n")))
        body = "        return self.embed, self.head\n" if name == "get_embed_and_head" else "        self.x = 1\n"
        arrow = f" -> {returns}" if returns else ""
        params = draw(signatures())
        if draw(st.booleans()):  # black's exploded shape, with a comment inside
            inner = "".join(f"        {p},{'  # why' if i == 1 else ''}\n" for i, p in enumerate(params))
            params_text = f"\n{inner}    "
        else:
            params_text = ", ".join(params)
        out[name] = f"{decorator}    {prefix} {name}({params_text}){arrow}:\n{body}"
    return out


@st.composite
def wrapper_files(draw, wrapped: list[str]) -> tuple[str, str]:
    """(wrapper file text, the line ending used first) in a random shape."""
    unit = draw(st.sampled_from(("  ", "    ", "\t")))
    has = draw(st.lists(st.sampled_from(wrapped), unique=True, max_size=len(wrapped) - 1))
    maybe = st.booleans()
    lines = []
    if draw(maybe):
        lines += ['"""A wrapper module, drawn by hypothesis."""', ""]
    lines += ["from typing import Optional"] if draw(maybe) else []
    lines += ["from lm import TextModelForCausalLM", "", "", "def register(cls):", f"{unit}return cls", "", ""]
    if draw(maybe):
        lines.append("@register")
    lines.append(draw(st.sampled_from(("class Wrapper:", "class Wrapper(object):  # a comment"))))
    if draw(maybe):
        lines.append(f'{unit}"""The wrapper."""')
    if draw(maybe):
        lines.append(f"{unit}# a comment before __init__")
    lines += [f"{unit}def __init__(self, config):", f"{unit * 2}self.language_model = TextModelForCausalLM(config)"]
    for name in has:
        lines += ["", f"{unit}def {name}(self, *args, **kwargs):", f"{unit * 2}return None"]
    extras = draw(st.lists(st.sampled_from(("decorated", "nested", "comment_tail", "property")), max_size=3))
    for extra in extras:
        if extra == "decorated":
            lines += ["", f"{unit}@staticmethod", f"{unit}def helper(x):", f"{unit * 2}return x  # trailing"]
        elif extra == "nested":
            lines += ["", f"{unit}def forward(self, x):", f"{unit * 2}def inner(y):", f"{unit * 3}return y",
                      f"{unit * 2}return inner(x)"]
        elif extra == "comment_tail":
            lines += [f"{unit * 2}# a comment ending the body", f"{unit}# and one at class level"]
        else:
            lines += ["", f"{unit}@property", f"{unit}def size(self):", f"{unit * 2}return 1"]
    tail = draw(st.sampled_from(("", "# a module comment after the class", "EntryClass = Wrapper")))
    if tail:
        lines += ["", "", tail]
    endings = draw(st.sampled_from(("\n", "\r\n", "\r", "mixed")))
    per_line = [draw(st.sampled_from(("\n", "\r\n"))) if endings == "mixed" else endings for _ in lines]
    text = "".join(line + end for line, end in zip(lines, per_line, strict=True))
    if draw(maybe):
        text = text.rstrip("\r\n")  # no newline at the end of the file
    return text, per_line[0]


def _check(root: Path, project: Project):
    return check_files(sorted(root.glob("*.py")), CheckOptions(tuple(select_interfaces(None))), project).findings


def _fix(root: Path) -> fixmod.FixPlan:
    project = Project()
    plan = fixmod.plan_fixes(_check(root, project), project, roots=[root])
    for file_fix in plan.files:
        fixmod.write_fix(file_fix)
    return plan


def _kept_in_order(old: str, new: str) -> bool:
    remaining = iter(new.splitlines(keepends=True))
    old_lines = old.splitlines(keepends=True)
    for i, line in enumerate(old_lines):
        if line.lstrip().startswith(("from ", "import ")):
            continue  # an import line may be merged with new names
        last = i == len(old_lines) - 1
        if not any(c == line or (last and c.rstrip("\r\n") == line) for c in remaining):
            return False
    return True


def _arguments(tree: ast.Module, cls: str) -> dict[str, str]:
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return {f.name: ast.dump(f.args) for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}


@st.composite
def pairs(draw) -> tuple[str, str]:
    methods = draw(wrapped_methods())
    lm = LM_HEAD + "\n".join(methods.values())
    wrapper, _ = draw(wrapper_files(list(methods)))
    return lm, wrapper


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs())
def test_fix_leaves_a_parsing_file_with_nothing_fixable_and_every_line_kept(pair):
    lm, wrapper = pair
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "lm.py").write_bytes(lm.encode())
        (root / "wrapper.py").write_bytes(wrapper.encode())
        provided = _arguments(ast.parse(lm), "TextModelForCausalLM")
        already = _arguments(ast.parse(wrapper), "Wrapper")
        plan = _fix(root)
        added = [w.name for w in plan.files[0].writes if w.kind == "method"]
        assert added == [m for m in INTERFACE if m in provided and m not in already]
        raw = (root / "wrapper.py").read_bytes()
        new = raw.decode(tokenize.detect_encoding(io.BytesIO(raw).readline)[0])
        tree = ast.parse(new)
        assert not [f for f in _check(root, Project()) if f.fixable], new
        assert _fix(root).files == []  # a second fix is a no-op
        assert (root / "wrapper.py").read_bytes() == raw
        assert _kept_in_order(wrapper, new), new
        delegates = _arguments(tree, "Wrapper")
        for name, args in provided.items():
            if name not in already:
                assert delegates[name] == args, (name, new)
