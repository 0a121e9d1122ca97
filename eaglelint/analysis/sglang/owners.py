"""Owner classes: a model that owns its LM head and holds its decoder itself.

Why a shape of its own: SGLang's engine calls `set_eagle3_layers_to_capture` and
`get_embed_and_head` on the served model whatever its shape. An ordinary
`*ForCausalLM`, or a multimodal model such as Qwen3-VL (`self.model =
language_model_cls(...)`, `self.lm_head = ...`, its own `self.logits_processor(...)`),
must write them itself; there is nothing to delegate to. Whether it can is decided
by its decoder: one whose forward collects aux hidden states through
`layers_to_capture` (as Qwen2Model and LlamaModel do) only needs the members that
the same decoder family's own `*ForCausalLM` (its sibling) already writes.

This module only describes; `checks/owner.py` turns it into findings, `fix/owner.py` into
edits, `support` into the support matrix, so all three agree.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..capture.wrapper_attrs import DEFAULT_HELD_ATTR
from ..python.exprs import expression_refs
from ..python.project import CHECK_RESOLVER
from ..python.resolve import ClassEntity, InstanceEntity, Member, Resolver, Unknown
from ..python.summary import LazyClasses
from ..syntax.class_body import class_node
from ..syntax.refs import Ref
from ..syntax.scope import nodes_of
from ..syntax.sources import SourceError, split_lines
from .capture_chain import CAPTURE_HOOK, CaptureChainAnalysis
from .served import HEAD, LOGITS

if TYPE_CHECKING:
    from ..python.project import Project

OWNER_MEMBERS = (CAPTURE_HOOK, "get_embed_and_head")  # what an owner writes itself, in this order
# Attributes that may hold an owner's decoder (a pre-filter: what the attribute holds decides).
# `model` holds a decoder in an owner and a whole language model in a wrapper (`_owner` tells
# them apart); `language_model` holds a whole language model in most wrappers, and a decoder
# (layers, no head) in an owner such as Gemma-4's, which is an owner only where every class
# it may hold there is resolved and is such a decoder.
DECODER_ATTRS = ("model", DEFAULT_HELD_ATTR)
# the engine's argument asking a forward for embeddings (model_runner passes it False to generate)
EMBEDDING_ARG = "get_embedding"


def _is_pooled(call: ast.Call) -> bool:
    """`EmbeddingPoolerOutput(...)` or `self.pooler(...)`: SGLang's pooled (embedding) result."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.endswith("PoolerOutput") or name == "pooler"


# a class whose text has no `self.model` cannot assign it: a lazy summary leaves it unparsed
ASSIGNS_DECODER = re.compile(r"self\s*\.\s*(?:" + "|".join(DECODER_ATTRS) + r")\b")
_PARAMETER = re.compile(r"parameter '(\w+)'")

@dataclass(frozen=True)
class Decoder:
    cls: ClassEntity
    collects: bool | None  # None: eaglelint cannot tell
    why: str  # how it collects, or why not, with file:line


@dataclass(frozen=True)
class Owner:
    cls: ClassEntity  # the class that assigns the head and the decoder
    attr: str  # the decoder attribute
    line: int  # of the decoder assignment
    decoders: tuple[Decoder, ...]
    unresolved: tuple[str, ...]  # why some value of self.<attr> could not be resolved
    parameter: str | None = None  # the decoder is this parameter's default: a subclass may pass another
    head: bool = True  # assigns self.lm_head (else it ties the head to the embedding some other way)

    @property
    def collects(self) -> bool | None:
        """True when every decoder it may hold collects aux hidden states."""
        if self.unresolved or not self.decoders:
            return None
        states = {d.collects for d in self.decoders}
        return False if False in states else None if None in states else True


@dataclass(frozen=True)
class Sibling:
    cls: ClassEntity  # e.g. Qwen3ForCausalLM for a Qwen3Model decoder
    attr: str  # its own decoder attribute
    member: Member  # where it gets the member (itself or a base)


def self_attrs(node: ast.AST) -> set[str]:
    """`X` of every `self.X` read or written under node."""
    return {n.attr for n in nodes_of(node)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"}


def mentions_aux(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and "aux" in n.id) or (isinstance(n, ast.Attribute) and "aux" in n.attr)
               for n in nodes_of(node))


def _names(ref: Ref, name: str) -> bool:
    return ref.name == name or any(_names(a, name) for a in ref.args)


Method = ast.FunctionDef | ast.AsyncFunctionDef
# the kinds of node `ast.parse` gives a position (a line and column, and where it ends)
LOCATED = (ast.expr, ast.stmt, ast.excepthandler, ast.arg, ast.keyword, ast.alias, ast.pattern)


def _shift(tree: Method, lines: int, columns: int) -> None:
    """Positions of a method parsed from its own dedented lines, made those of the file."""
    for node in nodes_of(tree):
        if isinstance(node, LOCATED):
            node.lineno += lines
            node.end_lineno = (node.end_lineno or node.lineno) + lines
            node.col_offset += columns
            node.end_col_offset = (node.end_col_offset or 0) + columns


class OwnerAnalysis:
    """Owner shapes, decoders and siblings, read from summaries plus single methods.

    A method's syntax tree is parsed from its own lines only (the summary says where
    it is), with the file's positions: judging a decoder, or planning an owner's fix,
    must not cost a second parse of a large module.
    """

    def __init__(self, resolver: Resolver):
        self.resolver = resolver
        self._lines: dict[str, list[str] | None] = {}
        # (method tree, (lines, columns) still to add to its positions, or None once added)
        self._nodes: dict[tuple[ClassEntity, str], tuple[Method | None, tuple[int, int] | None]] = {}
        self._decoders: dict[ClassEntity, Decoder] = {}
        self._chains: CaptureChainAnalysis | None = None

    # -- single methods ----------------------------------------------------
    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            mod = self.resolver.module(path)
            try:  # a lazily read module has split its lines already: the same text's
                shared = mod.classes.lines() if mod is not None and isinstance(mod.classes, LazyClasses) else None
                if shared is None:
                    shared = split_lines(self.resolver.project.source(path).text)
                self._lines[path] = shared
            except SourceError:
                self._lines[path] = None
        return self._lines[path]

    def method_node(self, cls: ClassEntity, name: str, positions: bool = False) -> Method | None:
        """The syntax tree of `cls.name` as defined in cls itself, or None; with `positions`,
        its line and column numbers are those of the file (what an edit needs)."""
        key = (cls, name)
        if key not in self._nodes:
            self._nodes[key] = self._parse_method(cls, name)
        node, offsets = self._nodes[key]
        if positions and offsets is not None and node is not None:
            _shift(node, *offsets)
            self._nodes[key] = (node, None)
        return node

    def _parse_method(self, cls: ClassEntity, name: str) -> tuple[Method | None, tuple[int, int] | None]:
        info = self.resolver.info(cls)
        fn, lines = info.methods.get(name), self.lines(cls.path)
        if fn is None or lines is None:
            return None, None
        held = self._held_method(cls, name, fn.line)
        if held is not None:  # its class was parsed in this run: the same text, already parsed
            return held, None
        end = min((m.line for m in info.methods.values() if m.line > fn.line), default=info.end_line + 1)
        chunk = lines[fn.line - 1:end - 1]
        while chunk and chunk[-1].lstrip().startswith(("@", "#", "\n", "\r")) or chunk and not chunk[-1].strip():
            chunk.pop()  # the next method's decorators and the blank lines before them
        # an indented method parses as it stands under a stand-in class header on the line above:
        # the file's own positions, with no dedent and no shift to pay
        indented = fn.line > 1 and chunk[0][:1] in (" ", "\t")
        offsets: tuple[int, int] | None = None if indented else (fn.line - 1, 0)
        tree: ast.AST
        try:
            tree = ast.parse("\n" * (fn.line - 2) + "class _:\n" + "".join(chunk) if indented else "".join(chunk))
        except (SyntaxError, ValueError, RecursionError):
            try:  # e.g. a string literal less indented than the method: parse the file
                whole = self.resolver.project.tree(cls.path)  # shared: only read below
            except (SourceError, RecursionError):
                return None, None
            tree = class_node(whole, cls.qualname) or ast.Module(body=[], type_ignores=[])
            offsets = None  # the file's own positions already
        node = next((n for n in nodes_of(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == name), None)
        return node, offsets

    def _held_method(self, cls: ClassEntity, name: str, line: int) -> Method | None:
        """`cls.name` out of the tree of cls's top-level class, where this run parsed that class."""
        mod = self.resolver.module(cls.path)
        top, *inner = cls.qualname.split(".")
        node: ast.AST | None = mod.classes.tree(top) if mod is not None and isinstance(mod.classes, LazyClasses) \
            else None
        for part in inner:
            node = next((n for n in getattr(node, "body", ()) if isinstance(n, ast.ClassDef) and n.name == part), None)
        return next((n for n in getattr(node, "body", ()) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == name and line in (n.lineno, *(d.lineno for d in n.decorator_list))), None)

    # -- shapes ------------------------------------------------------------
    def owner(self, cls: ClassEntity) -> Owner | None:
        """The owner shape of cls (assigned in cls or a base), or None if it has none: it must
        assign the logits processor and a decoder attribute somewhere in its MRO."""
        resolver = self.resolver
        mro = resolver.mro(cls)
        if not any(resolver.assigns(c, LOGITS) for c in mro):
            return None
        head = any(resolver.assigns(c, HEAD) for c in mro)
        for c in mro:
            info = resolver.info(c)
            for attr in DECODER_ATTRS:
                if attr in info.self_assigns:
                    owner = self._owner(c, attr, cls)
                    if attr != DECODER_ATTRS[0] and not (owner and self._holds_decoders_only(owner)):
                        continue  # a wrapper's language model, or one eaglelint cannot tell from it
                    return replace(owner, head=head) if owner else None
        return None

    def _holds_decoders_only(self, owner: Owner) -> bool:
        """Every class the attribute may hold is resolved, and each is a decoder (layers, no head)."""
        return bool(owner.decoders) and not owner.unresolved and not owner.parameter \
            and all(self.chains.is_decoder(d.cls) for d in owner.decoders)

    def _owner(self, cls: ClassEntity, attr: str, instance: ClassEntity) -> Owner | None:
        """cls's self.<attr>, in an instance of `instance` (a subclass may pass another class)."""
        classes: list[ClassEntity] = []
        reasons: list[str] = []
        params: list[str] = []
        assigns = self.resolver.info(cls).self_assigns[attr]
        for assign in assigns:
            for value in assign.values:
                for ent in self._values(cls, value, assign.line, params, instance):
                    if isinstance(ent, InstanceEntity) and ent.cls not in classes:
                        classes.append(ent.cls)
                    elif isinstance(ent, Unknown):
                        reasons.append(ent.reason)
        if any(self.is_full_model(c) for c in classes):
            return None  # holds a whole language model: a wrapper, not an owner
        decoders = tuple(self.decoder(c) for c in classes)
        return Owner(cls, attr, assigns[0].line, decoders, tuple(dict.fromkeys(reasons)),
                     params[0] if params else None)

    def _values(self, cls: ClassEntity, value: Ref, line: int, params: list[str], instance: ClassEntity) -> list:
        """What a value may denote; a method parameter stands for its default (resolve.py: __init__'s)."""
        out = []
        for ent in self.resolver.evaluate(value, cls.path, instance):
            match = _PARAMETER.fullmatch(ent.reason) if isinstance(ent, Unknown) else None
            default = self._default(cls, line, match.group(1)) if match else None
            if match and default:
                params.append(match.group(1))
            out += self.resolver.evaluate(Ref("call", args=(default,)), cls.path, cls) if default else [ent]
        return out

    def _default(self, cls: ClassEntity, line: int, name: str) -> Ref | None:
        methods = [m for m in self.resolver.info(cls).methods.values() if m.line <= line]
        method = max(methods, key=lambda m: m.line, default=None)
        param = next((p for p in method.params if p.name == name), None) if method else None
        if param is None or param.default is None:
            return None
        try:
            refs = expression_refs(ast.parse(param.default.strip(), mode="eval").body, None)
        except SyntaxError:
            return None
        return refs[0] if len(refs) == 1 and refs[0].kind in ("name", "attr") else None

    def is_full_model(self, cls: ClassEntity) -> bool:
        """A language model with its own head (a `*ForCausalLM`), not a bare decoder. A class
        that holds layers and no head is a decoder whatever its name (0.5.21's
        `qwen3_5.Qwen3_5ForCausalLM`, held as `self.model` by qwen3_5_text.py's class of the
        same name, which owns the head). Bases are read only for a class without a forward of
        its own (a decoder defines one)."""
        resolver = self.resolver
        if resolver.assigns(cls, LOGITS):
            return True
        if self.chains.is_decoder(cls):
            return False
        if cls.qualname.endswith("ForCausalLM"):
            return True
        return not resolver.defines(cls, "forward") and any(resolver.assigns(c, LOGITS) for c in resolver.mro(cls))

    def decoder(self, cls: ClassEntity) -> Decoder:
        """Whether cls's forward collects aux hidden states: the capture chain's reading
        (capture_chain.py), so that owners, the chain and `support` mean one thing. A list read
        in the layer loop and returned is a capture path whatever it is called (DSpark's
        `dspark_layers_to_capture` too): whether an EAGLE-3 member can drive it is decided by
        the member read off the decoder and the chain that runs it (fix/owner.py)."""
        if cls not in self._decoders:
            capture = self.chains.decoder(cls)
            self._decoders[cls] = Decoder(cls, capture.collects, capture.why)
        return self._decoders[cls]

    @property
    def chains(self) -> CaptureChainAnalysis:
        if self._chains is None:
            self._chains = CaptureChainAnalysis(self.resolver, self)
        return self._chains

    def forward(self, cls: ClassEntity) -> tuple[ClassEntity, Method] | None:
        """The forward that runs for cls, with the class that defines it."""
        for c in self.resolver.mro(cls):
            if self.resolver.defines(c, "forward"):
                node = self.method_node(c, "forward")
                return (c, node) if node is not None else None
        return None

    def serves_embeddings(self, cls: ClassEntity) -> str | None:
        """Why the forward that runs for cls cannot generate, or None: it asserts the engine's
        `get_embedding` argument (a generation batch passes False), or it returns a pooler's
        output (`EmbeddingPoolerOutput(...)`, `self.pooler(...)` where `__init__` builds a
        `Pooler(...)`) on a path without a logits processor call."""
        found = self.forward(cls)
        if found is None:
            return None
        owner, fn = found
        params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        where = f"{owner.qualname}.forward ({os.path.basename(owner.path)}:{fn.lineno})"
        for node in nodes_of(fn):
            if isinstance(node, ast.Assert) and isinstance(node.test, ast.Name) and node.test.id in params \
                    and node.test.id == EMBEDDING_ARG:
                return f"{where} asserts {EMBEDDING_ARG}: it serves embeddings only"
        if self.computes_logits(cls):
            return None
        for node in nodes_of(fn):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and _is_pooled(node.value):
                return f"{where} returns a pooler's output"
        return None

    def computes_logits(self, cls: ClassEntity) -> bool:
        """Its own forward calls `self.logits_processor(...)`: it owns the head's use too."""
        found = self.forward(cls)
        return found is not None and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == LOGITS
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "self" for n in nodes_of(found[1]))

    def sibling(self, owner: Owner, decoder: ClassEntity, member: str) -> Sibling | None:
        """The class of the decoder's family that holds it (or a base of it) and has `member`:
        searched in the module of each class of the decoder's MRO, nearest first,
        `*ForCausalLM` classes first."""
        resolver = self.resolver
        for base in resolver.mro(decoder):
            mod = resolver.module(base.path)
            if mod is None:
                continue
            short = base.qualname.rsplit(".", 1)[-1]
            holders = [c.name for c in mod.classes_matching(ASSIGNS_DECODER)]
            for name in sorted(holders, key=lambda n: not n.endswith("ForCausalLM")):
                cand = ClassEntity(base.path, name)
                for attr in DECODER_ATTRS:
                    for assign in mod.classes[name].self_assigns.get(attr, []):
                        if not any(_names(v, short) for v in assign.values) or cand == owner.cls \
                                or owner.cls in resolver.mro(cand) or cand in resolver.mro(owner.cls):
                            continue
                        held = [e for v in assign.values for e in resolver.evaluate(v, cand.path, cand)]
                        member_at = resolver.find_member(cand, member)
                        if InstanceEntity(base) in held and member_at is not None and member_at.function:
                            return Sibling(cand, attr, member_at)
        return None


def owner_analysis(resolver: Resolver) -> OwnerAnalysis:
    """The one OwnerAnalysis of a resolver, with its capture chain (`.chains`): their caches
    (method trees, decoders, chains) hold plain facts of the code, so every check of a run
    shares them instead of reading each decoder's forward again."""
    found = resolver.memos.get("owner.analysis")
    if found is None:
        found = resolver.memos["owner.analysis"] = OwnerAnalysis(resolver)
    return found


def checked_analysis(project: Project) -> OwnerAnalysis:
    """The owner analysis (with its capture chain) of the check run that read the project's
    files: what a stage after the check (`support`) reads instead of resolving the same
    classes again. Where no check read them (its result came from the run cache), or a file
    has turned out not to parse since (errors grow), one is made and kept on the project."""
    checked = project.analyses.get(CHECK_RESOLVER)
    if checked is not None and checked[0] == len(project.errors):
        return owner_analysis(checked[1])
    held = project.analyses.get("owners")
    if held is None or held[0] != len(project.errors):
        held = project.analyses["owners"] = (len(project.errors), owner_analysis(Resolver(project)))
    return held[1]
