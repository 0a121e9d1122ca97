"""The members an owner class lacks, written the way its decoder family's sibling writes them.

Why copy the sibling: `Qwen3ForCausalLM.set_eagle3_layers_to_capture` already knows
what a `Qwen3Model` needs (which layers, the +1 shift, the pipeline-parallel early
return); an owner holding a `Qwen3Model` subclass needs exactly that. The copy is
only made when it is sure to work in its new class: every `self.X` it uses exists
there, every global it reads can be imported, and, for the capture hook, the
owner's forward then handles the aux hidden states as the sibling's does (flag set
in `__init__`, the decoder's tuple unpacked, the aux states passed to its own
`self.logits_processor(...)`), so that EGL020-EGL023 hold after the fix. Anything
else raises NotFixable with the reason, and the finding is EGL041.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..analysis.python.normal_path import NormalPath
from ..analysis.python.presence import has_member
from ..analysis.python.project import Project
from ..analysis.python.resolve import ClassEntity, Resolver
from ..analysis.sglang.capture_chain import DecoderCapture, plus
from ..analysis.sglang.owners import (
    CAPTURE_HOOK,
    LOGITS,
    Owner,
    OwnerAnalysis,
    Sibling,
    mentions_aux,
    self_attrs,
)
from ..analysis.syntax.sources import SourceError
from ..findings import Finding, Fix, ImportNeed, Written
from ..packs import load_normal_truths
from .edits import Edit, EditableFile, NotFixable, after_body
from .imports import ImportPlan
from .intent import OwnerMember

FLAG = "capture_aux_hidden_states"
AUX = "aux_hidden_states"


@dataclass
class ClassPlan:
    qualname: str
    siblings: dict[str, Sibling] = field(default_factory=dict)
    methods: list[tuple[str, list[str]]] = field(default_factory=list)  # member, lines (no line endings)
    edits: list[Edit] = field(default_factory=list)  # what the capture hook needs of __init__ and forward
    edited: list[str] = field(default_factory=list)  # the methods `edits` change, in the order first changed
    # member -> the global names its copy reads -> the module to import each from
    names: dict[str, dict[str, Path]] = field(default_factory=dict)
    end: int = 0  # 0-based line index after the class body: where the methods go
    contracts: dict[str, str] = field(default_factory=dict)  # member -> how it was read off the decoder
    refusals: dict[str, str] = field(default_factory=dict)  # member -> why it cannot be written (the rest can)


def lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def plan_class(analysis: OwnerAnalysis, owner: Owner, missing: tuple[str, ...]) -> ClassPlan:
    """What to write into the owner's class; NotFixable says why it cannot be written.

    Read from the summary and single methods, so that `check` can tell EGL040 from
    EGL041 without parsing the file again. Made once per owner and members for an analysis:
    the check hands the plan to the fix planner with its findings (fix/intent.py `OwnerMember`)."""
    plans = analysis.resolver.memos.setdefault("owner.plans", {})
    key = (owner, missing)
    if key not in plans:
        try:
            plans[key] = _plan_class(analysis, owner, missing)
        except NotFixable as exc:
            plans[key] = exc
    found = plans[key]
    if isinstance(found, NotFixable):
        raise NotFixable(str(found))
    return found


def _plan_class(analysis: OwnerAnalysis, owner: Owner, missing: tuple[str, ...]) -> ClassPlan:
    resolver = analysis.resolver
    info = resolver.info(owner.cls)
    lines = analysis.lines(owner.cls.path)
    if lines is None or not info.methods:
        raise NotFixable(f"the body of {info.name} cannot be read for editing")
    if len(owner.decoders) != 1:
        raise NotFixable(f"self.{owner.attr} may hold several classes; write the members by hand")
    decoder = owner.decoders[0].cls
    indent = lead(lines[min(m.line for m in info.methods.values()) - 1])
    plan = ClassPlan(info.name, end=after_body(lines, info.end_line, indent))
    imports = ImportPlan(resolver.module(owner.cls.path), resolver.project, Path(owner.cls.path))
    assigning = analysis.owner(owner.cls)
    if missing == (CAPTURE_HOOK,) and assigning is not None and assigning.cls != owner.cls \
            and assigning.decoders == owner.decoders and resolver.defines(owner.cls, "forward") \
            and _base_fixed(analysis, assigning.cls):
        # it inherits the member the same run writes into its base: only its own forward to change
        _aux_path(analysis, owner, lines, plan)
        plan.contracts[CAPTURE_HOOK] = f"its own forward, for the member {assigning.cls.qualname} gets"
        return plan
    if owner.collects is False and missing == (CAPTURE_HOOK,):  # a subclass shielded from its base's member
        plan.methods.append((CAPTURE_HOOK, _refusing(analysis, owner, indent)))
        plan.contracts[CAPTURE_HOOK] = f"{owner.decoders[0].why}: a member that raises AttributeError"
        return plan
    for member in missing:
        sibling = analysis.sibling(owner, decoder, member)
        names = plan.names.setdefault(member, {})
        never = unverifiable(analysis, owner) if member == CAPTURE_HOOK else None
        if never:  # no member works there: none is copied or read off the decoder
            plan.refusals[member] = never
            continue
        try:
            if sibling is None:
                raise NotFixable(f"no class in the scanned tree holds {decoder.qualname} (or a base of it) as "
                                 f"self.{owner.attr} and defines {member} to copy from")
            plan.methods.append((member, _copy(analysis, owner, sibling, member, indent, imports, names)))
            plan.siblings[member] = sibling
        except NotFixable as copied:
            names.clear()
            try:  # no sibling to copy, or its copy cannot work here: the decoder's own contract
                text, how = contract_member(analysis, owner, member, indent)
            except NotFixable as read:
                plan.refusals[member] = str(read) if sibling is None else f"{read}; and {copied}"
                continue
            plan.methods.append((member, text))
            plan.contracts[member] = how
    if CAPTURE_HOOK in missing and CAPTURE_HOOK not in plan.refusals:
        try:
            _aux_path(analysis, owner, lines, plan)
        except NotFixable as exc:
            plan.refusals[CAPTURE_HOOK] = str(exc)
            plan.methods = [(m, text) for m, text in plan.methods if m != CAPTURE_HOOK]
    if not plan.methods:
        raise NotFixable("; ".join(dict.fromkeys(plan.refusals.values())))
    return plan


def _copy(analysis: OwnerAnalysis, owner: Owner, sibling: Sibling, member: str, indent: str,
          imports: ImportPlan, names: dict[str, Path]) -> list[str]:
    """The sibling's method text at the owner's indentation, its decoder attribute renamed."""
    resolver = analysis.resolver
    source = sibling.member.owner
    fn = analysis.method_node(source, member)
    lines = analysis.lines(source.path)
    info = resolver.info(source).methods[member]
    if fn is None or lines is None:
        raise NotFixable(f"{source.qualname}.{member} cannot be read")
    where = f"{source.qualname}.{member} ({Path(source.path).name}:{info.line})"
    if info.decorators or any(isinstance(n, ast.Name) and n.id == "super" for n in ast.walk(fn)):
        raise NotFixable(f"{where} is decorated or calls super(); copy it by hand")
    for attr in sorted(self_attrs(fn) - {sibling.attr, FLAG}):
        if not has_member(resolver, owner.cls, attr):
            raise NotFixable(f"{where} uses self.{attr}, which {resolver.info(owner.cls).name} does not have")
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for name in sorted({n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} - params - stored):
        if hasattr(builtins, name):
            continue
        if not imports.can_provide(name, Path(source.path)):
            raise NotFixable(f"{where} reads {name}, which cannot be imported into {Path(owner.cls.path).name}")
        names[name] = Path(source.path)
    text = lines[info.line - 1: info.line - 1 + (fn.end_lineno or fn.lineno) - fn.lineno + 1]
    base = lead(text[0])
    out = []
    for line in text:
        body = line.rstrip("\r\n")
        if not body.strip():
            out.append("")
        elif body.startswith(base) and ("\t" in lead(body)) == ("\t" in indent):
            out.append(indent + body[len(base):])
        else:
            raise NotFixable(f"{where} is indented in a way that cannot be moved safely; copy it by hand")
    if sibling.attr != owner.attr:
        pattern = re.compile(rf"\bself\.{re.escape(sibling.attr)}\b")
        out = [pattern.sub(f"self.{owner.attr}", line) for line in out]
    return out


def contract_member(analysis: OwnerAnalysis, owner: Owner, member: str, indent: str) -> tuple[list[str], str]:
    """A member read off the decoder itself, not copied: the list its capture test reads, the
    shift its placement asks for (a capture before layer i runs holds layer i - 1's output: the
    engine's id k is written k + 1; after it, k), the default layers for None, the served flag
    where the class can set it, and the pipeline guard where it has a pipeline group to ask. The
    capture member is then run by the capture chain, as the engine calls it, before it is
    offered: it must mark the layers the engine names, with the shift the decoder needs."""
    if member == "get_embed_and_head":
        return _embed_and_head(analysis, owner, indent)
    resolver, chains = analysis.resolver, analysis.chains
    decoder = owner.decoders[0].cls
    capture = chains.decoder(decoder)
    step, held = _step(indent), f"self.{owner.attr}"
    if not capture.collects:
        raise NotFixable(capture.why)
    switches = [g for g in sorted(capture.gates) if _off_switch(resolver, decoder, g)]
    if len(capture.attrs) > 1 or len(switches) != len(capture.gates):
        read = ", ".join([f"self.{a}" for a in sorted(capture.attrs | capture.gates)]
                         + [f"per-layer flag {f}" for f in sorted(capture.flags)])
        raise NotFixable(f"{capture.test or capture.place} decides what it captures by {read}; eaglelint writes "
                         "a member only for a decoder that reads one list of layer ids or per-layer flags its "
                         "own method sets (and switches it sets to False itself)")
    shift = capture.shift
    if shift is None and capture.sites:
        differ = capture.site_shifts
        why = f": the engine's id k would be written {' or '.join(plus('k', s) for s in differ)}, by path" \
            if len(differ) > 1 else ""
        raise NotFixable(f"{capture.place} {capture.placement_text}{why}; eaglelint writes a member only for a "
                         "decoder whose captures all ask one shift of the engine's ids")
    if shift is None:
        raise NotFixable(f"{capture.test or capture.place} does not show where it captures against the layer "
                         "call (before it: the engine's id k is written k + 1; after it: k)")
    if not any(resolver.assigns(c, "layers") for c in resolver.mro(decoder)):
        raise NotFixable(f"{decoder.qualname} holds no self.layers to count the default layers from")
    head = [f"{indent}def set_eagle3_layers_to_capture(self, layer_ids=None):"]
    if has_member(resolver, owner.cls, "pp_group") and not _unpacks_on_last_rank_only(analysis, owner):
        head += [f"{indent}{step}if not self.pp_group.is_last_rank:", f"{indent}{step}{step}return"]
    head += [f"{indent}{step}if layer_ids is None:",
             f"{indent}{step}{step}num_layers = {_layer_count(capture, held)}",
             f"{indent}{step}{step}layer_ids = [1, num_layers // 2 - 1, num_layers - 4]"]
    if resolver.find_member(owner.cls, FLAG) is None:  # a property forwards the decoder's state itself
        head.append(f"{indent}{step}self.{FLAG} = True")
    head += [f"{indent}{step}{held}.{gate} = True" for gate in switches]
    how = f"{capture.test or capture.place} {capture.placement_text}: the engine's id k is written as " \
          f"{plus('k', shift)}"
    if not capture.flags:
        attr = next(iter(capture.attrs))
        body = [*head, f"{indent}{step}{held}.{attr} = {_ids(shift)}"]
        how = f"{how}, to self.{attr}"
        _verify(analysis, owner, body, how)
        return body, how
    # per-layer flags: the decoder's own method that sets them, handed the ids as it wants them
    why = "no method of the decoder sets them"
    for name in _flag_setters(analysis, decoder, capture.flags):
        for given in dict.fromkeys((shift, 0)):
            body = [*head, f"{indent}{step}{held}.{name}({_ids(given)})"]
            try:
                _verify(analysis, owner, body, f"{how}, through {decoder.qualname}.{name}")
            except NotFixable as exc:
                why = str(exc)
                continue
            return body, f"{how}, through {decoder.qualname}.{name}"
    flags = ", ".join(sorted(capture.flags))
    raise NotFixable(f"{capture.test or capture.place} reads the per-layer flag {flags}, and {why}")


def _embed_and_head(analysis: OwnerAnalysis, owner: Owner, indent: str) -> tuple[list[str], str]:
    """get_embed_and_head: the embedding the decoder's forward runs on the tokens, and the owner's head."""
    decoder = owner.decoders[0].cls
    step, held = _step(indent), f"self.{owner.attr}"
    embed = _embedding(analysis, decoder)
    if embed is None:
        raise NotFixable(f"which attribute of {decoder.qualname} embeds the tokens cannot be read off its forward")
    if not owner.head:
        raise NotFixable(f"{analysis.resolver.info(owner.cls).name} assigns no self.lm_head to return")
    return [f"{indent}def get_embed_and_head(self):",
            f"{indent}{step}return {held}.{embed}.weight, self.lm_head.weight"], \
        f"the embedding {held}.{embed} that {decoder.qualname}.forward runs on the tokens, and self.lm_head"


def _layer_count(capture: DecoderCapture, held: str) -> str:
    """How many layers the engine's ids number: the decoder's, times the repeats it runs them."""
    count = f"len({held}.layers)"
    if capture.repeats is None:
        return count
    if not capture.repeats.startswith("self.") or not _reads_self_only(capture.repeats):
        raise NotFixable(f"{capture.test or capture.place} numbers the layers across {capture.repeats} repeats, "
                         "which the owner cannot read")
    return f"{count} * {held}.{capture.repeats[len('self.'):]}"


def _reads_self_only(text: str) -> bool:
    """`self.config.num_loops`: attributes of self, nothing else to evaluate."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _ids(shift: int) -> str:
    """The engine's ids as the decoder's list wants them: `layer_ids`, `[val + 1 for val in layer_ids]`."""
    return "layer_ids" if not shift else f"[{plus('val', shift)} for val in layer_ids]"


def _step(indent: str) -> str:
    """One level of indentation, in the kind the class body uses."""
    return "\t" if indent.startswith("\t") else "    "


def _flag_setters(analysis: OwnerAnalysis, decoder: ClassEntity, flags: frozenset[str]) -> list[str]:
    """Methods of the decoder (nearest class first) that take one argument and write every flag on
    its layers (`self.layers[i]._is_layer_to_capture = True`, `setattr(layer, "flag", True)`)."""
    out: list[str] = []
    resolver = analysis.resolver
    for c in resolver.mro(decoder):
        for name, info in resolver.info(c).methods.items():
            if name in out or name.startswith("__") or name == "forward" or len(info.params) != 2:
                continue
            fn = analysis.method_node(c, name)
            text = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)} | {
                n.value for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str)} \
                if fn is not None else set()
            if flags <= text:
                out.append(name)
    return out


# SGLang's per-layer recurrent (Mamba / linear-attention) cache, read by a model's own layer: the
# layer writes its state itself, and only the attention backend's forward keeps the per-draft-token
# states a target-verify pass needs (hybrid_linear_attn_backend.py); JetNemotron's JetBlock (0.5.9-0.5.23)
RECURRENT_CACHE_READS = (".mamba2_layer_cache(",)


def unverifiable(analysis: OwnerAnalysis, owner: Owner) -> str | None:
    """Why no capture member can make EAGLE-3 work on the owner, or None: where the drafts'
    tokens cannot be verified, a copied member fails no less than one read off the decoder.
    The check (EGL041's words), the fix and `support` (not supported) ask this one test."""
    if len(owner.decoders) != 1:
        return None
    outside = _state_outside_verify(analysis, owner, owner.decoders[0].cls)
    if outside:
        return (f"its layers update their recurrent state themselves ({outside} reads the per-layer cache "
                "the attention backend keeps), outside the backend's target-verify pass: the drafts' "
                "tokens cannot be verified, whatever the member captures")
    return None


def _state_outside_verify(analysis: OwnerAnalysis, owner: Owner, decoder: ClassEntity) -> str | None:
    """Where the owner's module (which may hand the decoder its layer class: JetNemotron gives
    Qwen2Model its own), the decoder's or its layer classes' reads the recurrent cache itself
    (file:line), or None."""
    layers = analysis.chains.layer_classes(decoder)
    found = analysis.resolver.memos.setdefault("owner.recurrent", {})
    for path in dict.fromkeys([owner.cls.path, decoder.path, *(c.path for c in layers)]):
        if path not in found:
            found[path] = None
            try:
                raw = analysis.resolver.project.raw(path)
            except SourceError:
                continue
            at = min((i for call in RECURRENT_CACHE_READS if (i := raw.find(call.encode())) >= 0), default=-1)
            if at >= 0:
                line = raw.count(b"\n", 0, at) + 1
                found[path] = f"{Path(path).name}:{line}"
        if found[path]:
            return found[path]
    return None


def _refusing(analysis: OwnerAnalysis, owner: Owner, indent: str) -> list[str]:
    """A capture member that says why this class cannot capture, raising what the engine's call
    raises on a class without one."""
    step = _step(indent)
    name = analysis.resolver.info(owner.cls).name
    decoder = owner.decoders[0].cls.qualname.rsplit(".", 1)[-1]
    return [f"{indent}def set_eagle3_layers_to_capture(self, layer_ids=None):",
            f"{indent}{step}raise AttributeError(",
            f'{indent}{step}{step}"{name} holds {decoder}, "',
            f'{indent}{step}{step}"whose forward collects no aux hidden states"',
            f"{indent}{step})"]


def _off_switch(resolver: Resolver, decoder: ClassEntity, gate: str) -> bool:
    """The decoder's own attribute that only it sets, and only to False or None (its capture is off
    until a member turns it on), with no member of that name: the capture member may set it True."""
    values = [v for c in resolver.mro(decoder) for a in resolver.info(c).self_assigns.get(gate, ()) for v in a.values]
    return bool(values) and resolver.find_member(decoder, gate) is None and all(
        v.kind == "const" and v.name in ("False", "None") for v in values)


def _embedding(analysis: OwnerAnalysis, decoder: ClassEntity) -> str | None:
    """The attribute the decoder's forward calls on the token ids (`self.embed_tokens(input_ids)`)."""
    found = analysis.forward(decoder)
    if found is None:
        return None
    cls, fn = found
    params = [a.arg for a in fn.args.args][1:]
    if not params:
        return None
    names = {n.func.attr for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and _is_self(n.func, n.func.attr) and len(n.args) == 1 and isinstance(n.args[0], ast.Name)
             and n.args[0].id == params[0]}
    if len(names) != 1:
        return None
    name = next(iter(names))
    return name if any(name in analysis.resolver.info(c).self_assigns for c in analysis.resolver.mro(cls)) else None


def _verify(analysis: OwnerAnalysis, owner: Owner, body: list[str], how: str) -> None:
    """Runs the written member with the capture chain, with ids and with None: it must mark the
    list the decoder reads, with the shift it needs, and nothing it cannot follow."""
    chains = analysis.chains
    capture = chains.decoder(owner.decoders[0].cls)
    tree = ast.parse("\n".join(line.strip("\n") for line in _dedent(body)))
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    for none in (False, True):
        effect = chains.run_member(owner.cls, fn, none)
        marks = [w for w in effect.writes if w.path[:1] == (owner.attr,) and not w.empty
                 and (w.name in capture.flags if w.per_layer else w.path == (owner.attr,) and w.name in capture.attrs)]
        gated = all(any(w.path == (owner.attr,) and w.name == g and not w.empty for w in effect.writes)
                    for g in capture.gates)
        # a flag set in a loop over a list the method wrote from the ids has no offset of its own: the list's
        known = [w.offset for w in (marks if capture.attrs else effect.writes)
                 if w.offset is not None and w.path[:1] == (owner.attr,) and not w.empty]
        if effect.unknown or effect.raises or effect.none_fails or not marks or not gated or not none and (
                not known or any(offset != capture.shift for offset in known)):
            why = "; ".join(effect.unknown) or "it does not mark the layers the engine names"
            raise NotFixable(f"the member read off the decoder ({how}) does not pass the capture chain: {why}")


def _dedent(lines: list[str]) -> list[str]:
    cut = len(lead(lines[0]))
    return [line[cut:] for line in lines]


def flag_initialised(analysis: OwnerAnalysis, owner: Owner) -> bool:
    """Some class of the owner's MRO sets the flag in __init__ (or has it as a class attribute)."""
    resolver = analysis.resolver
    for c in resolver.mro(owner.cls):
        info = resolver.info(c)
        if FLAG in info.attrs or FLAG in info.methods:
            return True
        init = info.methods.get("__init__")
        if init is not None and FLAG in info.self_assigns:
            end = min((f.line for f in info.methods.values() if f.line > init.line), default=info.end_line + 1)
            if any(init.line <= a.line < end for a in info.self_assigns[FLAG]):
                return True
    return False


def _is_self(node: ast.AST, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == "self"


def _aux_path(analysis: OwnerAnalysis, owner: Owner, lines: list[str], plan: ClassPlan) -> None:
    """The edits to __init__ and forward that make the owner handle the decoder's (hidden, aux)
    tuple, added to `plan` with the methods they change; NotFixable leaves `plan` as it was."""
    edits, edited = _aux_edits(analysis, owner, lines)
    plan.edits += edits
    plan.edited += [m for m in edited if m not in plan.edited]


def _aux_edits(analysis: OwnerAnalysis, owner: Owner, lines: list[str]) -> tuple[list[Edit], list[str]]:
    edits: list[Edit] = []
    edited: list[str] = []
    own = analysis.resolver.info(owner.cls).methods
    if not flag_initialised(analysis, owner):
        init = analysis.method_node(owner.cls, "__init__", positions=True) if "__init__" in own else None
        if init is None or any(isinstance(n, ast.Return) for n in ast.walk(init)):
            raise NotFixable(f"cannot tell where __init__ ends to set self.{FLAG} = False; set it by hand")
        at = init.body[-1].end_lineno or init.body[-1].lineno
        edits.append(Edit(at, at, (f"{lead(lines[init.body[0].lineno - 1])}self.{FLAG} = False",)))
        edited.append("__init__")
    found = analysis.forward(owner.cls)
    forward = analysis.method_node(owner.cls, "forward", positions=True) if "forward" in own else None
    if found is None:
        raise NotFixable("its forward cannot be read")
    runs = forward or found[1]
    calls = [n for n in ast.walk(runs) if isinstance(n, ast.Call) and _is_self(n.func, LOGITS)]
    tests = any(_is_self(n, FLAG) or _tuple_test(n) for n in ast.walk(runs))
    unpacks = tests and bool(_aux_unpacks(runs))
    todo = [c for c in calls if not any(mentions_aux(a) for a in [*c.args, *c.keywords])]
    if unpacks and not todo:
        return edits, edited
    if forward is None:
        if _base_fixed(analysis, found[0]):
            return edits, edited  # the base that defines it gets the same edit in this run
        raise NotFixable(f"its forward is inherited from {found[0].qualname}; change that forward by hand")
    if not unpacks and any(isinstance(n, ast.Name) and n.id == AUX for n in ast.walk(forward)):
        raise NotFixable(f"its forward already uses {AUX} in a way eaglelint does not rewrite")
    if unpacks and any(isinstance(n, ast.Name) and n.id == AUX and isinstance(n.ctx, ast.Store)
                       for n in ast.walk(forward)) and not _unpacks_as(forward, AUX):
        raise NotFixable("its forward unpacks the aux hidden states under another name; pass them by hand")
    if not unpacks:
        edits.append(_unpack(owner, forward, calls, lines))
    edits += [_pass(call, lines) for call in todo]
    rows = [r for e in edits for r in range(e.start, e.end)]
    inserts = [e.start for e in edits if e.start == e.end]
    if len(set(rows)) != len(rows) or len(set(inserts)) != len(inserts):
        raise NotFixable("two edits of its forward fall on one line; change it by hand")
    return edits, [*edited, "forward"]


def _unpacks_on_last_rank_only(analysis: OwnerAnalysis, owner: Owner) -> bool:
    """The owner's forward unpacks the decoder's (hidden, aux) pair only where the pipeline's last
    rank runs (`if self.pp_group.is_last_rank:` around it, or after an early return of the ranks
    before it). Then the capture member needs no pipeline guard: a rank before the last hands on
    its proxy tensors whatever the flag says, and a decoder that carries captures across the
    ranks (KimiK3Linear's `dspark_hidden_states`) needs every rank to capture. Where the forward
    unpacks on every rank, a rank before the last would unpack its proxy tensors: the member
    returns there first (LlamaForCausalLM's)."""
    found = analysis.forward(owner.cls)
    if found is None or not isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    unpacks = _aux_unpacks(found[1])
    ranks = NormalPath([t for t in load_normal_truths("sglang") if t.rank])
    return bool(unpacks) and all(_last_rank_only(found[1].body, u, ranks, False) for u in unpacks)


def _aux_unpacks(forward: ast.AST) -> list[ast.Assign]:
    """The forward's assignments that unpack a tuple naming the aux hidden states."""
    return [n for n in ast.walk(forward) if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Tuple) and mentions_aux(t) for t in n.targets)]


def _last_rank_only(stmts: list[ast.stmt], target: ast.stmt, ranks: NormalPath, under: bool) -> bool | None:
    """Whether `target`, found in `stmts`, runs on the last pipeline rank only (None: not there)."""
    for s in stmts:
        if s is target:
            return under
        if isinstance(s, ast.If):
            holds = ranks.truth(s.test)
            for body, last in ((s.body, holds is True), (s.orelse, holds is False)):
                inner = _last_rank_only(body, target, ranks, under or last)
                if inner is not None:
                    return inner
            if holds is False and s.body and isinstance(s.body[-1], (ast.Return, ast.Raise)):
                under = True  # the ranks before the last have left: what follows runs on the last
            continue
        blocks = [b for name in ("body", "orelse", "finalbody") if isinstance(b := getattr(s, name, None), list)]
        blocks += [h.body for h in getattr(s, "handlers", [])]
        for block in blocks:
            inner = _last_rank_only(block, target, ranks, under)
            if inner is not None:
                return inner
    return None


def _tuple_test(node: ast.AST) -> bool:
    """`isinstance(hidden_states, tuple)`: the forward unpacks whenever the decoder gave a tuple."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
        and len(node.args) == 2 and isinstance(node.args[1], ast.Name) and node.args[1].id == "tuple"


def _unpacks_as(forward: ast.AST, name: str) -> bool:
    """`hidden_states, <name> = hidden_states` under the flag: what the passed name must be."""
    return any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Tuple) and len(t.elts) == 2
                                                 and isinstance(t.elts[1], ast.Name) and t.elts[1].id == name
                                                 for t in n.targets) for n in ast.walk(forward))


def _base_fixed(analysis: OwnerAnalysis, base: ClassEntity) -> bool:
    """The class whose forward an owner inherits is itself an owner that lacks the capture member
    and gets it, with its forward's edits, from the same fix run (Glm4v's forward, inherited by
    Glm4vMoe and GlmOcr)."""
    own = analysis.owner(base)
    if own is None or own.cls != base or has_member(analysis.resolver, base, CAPTURE_HOOK):
        return False
    lines = analysis.lines(base.path)
    if lines is None or "forward" not in analysis.resolver.info(base).methods:
        return False
    return writes_capture(analysis, own, (CAPTURE_HOOK,))


def writes_capture(analysis: OwnerAnalysis, owner: Owner, missing: tuple[str, ...]) -> bool:
    """The plan for the owner's missing members writes the capture member."""
    try:
        plan = plan_class(analysis, owner, missing)
    except NotFixable:
        return False
    return CAPTURE_HOOK in dict(plan.methods)


def _runs_decoder(call: ast.Call, attr: str) -> bool:
    func = call.func
    target = func.value if isinstance(func, ast.Attribute) and func.attr == "forward" else func
    return _is_self(target, attr) or any(k.arg == "language_model" and _is_self(k.value, attr) for k in call.keywords)


def _unpack(owner: Owner, forward: ast.AST, calls: list[ast.Call], lines: list[str]) -> Edit:
    """After the one `x = <decoder run>` that precedes every logits call: unpack when capturing."""
    runs = [n for n in ast.walk(forward) if isinstance(n, ast.Call) and _runs_decoder(n, owner.attr)]
    blocks: list[tuple[list[ast.stmt], int]] = []
    for parent in ast.walk(forward):
        for body in (getattr(parent, "body", None), getattr(parent, "orelse", None)):
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                if len(runs) == 1 and isinstance(stmt, ast.Assign) and stmt.value is runs[0] \
                        and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    blocks.append((body, i))
    if len(blocks) != 1:
        raise NotFixable(f"its forward does not run self.{owner.attr} once as `hidden_states = ...`; "
                         "unpack the aux hidden states by hand")
    body, i = blocks[0]
    stmt = body[i]
    assert isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)  # as `blocks` was found
    later = {id(n) for s in body[i + 1:] for n in ast.walk(s)}
    if not calls or any(id(c) not in later for c in calls):
        raise NotFixable("a logits call of its forward does not follow the decoder run in the same block")
    name, ind = stmt.targets[0].id, lead(lines[stmt.lineno - 1])
    step = _step(ind)
    new = ["", f"{ind}{AUX} = None", f"{ind}if self.{FLAG}:", f"{ind}{step}{name}, {AUX} = {name}"]
    end = stmt.end_lineno or stmt.lineno
    return Edit(end, end, tuple(new))


def _pass(call: ast.Call, lines: list[str]) -> Edit:
    """The aux hidden states as the logits processor's fifth argument (or keyword)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) \
            or len(call.args) > 4:
        raise NotFixable("a self.logits_processor call has a shape eaglelint does not rewrite; pass "
                         f"{AUX} by hand")
    text = AUX if len(call.args) == 4 and not call.keywords else f"{AUX}={AUX}"
    ends = [(n.end_lineno or n.lineno, n.end_col_offset or 0, n.lineno)
            for n in [*call.args, *(k.value for k in call.keywords)]]
    if not ends:
        raise NotFixable("a self.logits_processor call has no arguments to extend")
    end_line, end_col, first = max(ends)
    row = end_line - 1
    raw = lines[row].rstrip("\r\n")
    col = len(raw.encode("utf-8")[:end_col].decode("utf-8", "replace"))
    rest = raw[col:].strip()
    if (call.end_lineno or call.lineno) > end_line and rest == ",":
        return Edit(row + 1, row + 1, (f"{lead(lines[first - 1])}{text},",))
    return Edit(row, row + 1, (f"{raw[:col]}, {text}{raw[col:]}",))


def plan_owner_file(file: EditableFile, findings: list[Finding], project: Project,
                    style: str) -> list[Finding]:
    """Each finding with its fix: the member its owner class lacks (copied from the sibling, or
    read off the decoder) and, for the capture hook, the forward changes it needs, as the plan
    its check made (`Finding.intent`). The findings of one class share the plan: its edits of
    `__init__` and `forward` go with the capture member's fix."""
    path = file.path
    imports = ImportPlan(project.summary(path), project, path)
    plans: dict[int, tuple[ClassPlan, dict[str, Finding]]] = {}
    out: list[Finding] = []
    for f in findings:
        if isinstance(f.intent, OwnerMember):
            plans.setdefault(id(f.intent.plan), (f.intent.plan, {}))[1][f.intent.member] = f
        else:
            out.append(replace(f, fix_refusal=f"{f.message} (no automatic fix for {f.code})"))
    for cls_plan, by_member in plans.values():
        qualname = cls_plan.qualname
        edited = tuple(Written("edit", qualname, m) for m in cls_plan.edited)
        if not cls_plan.methods and cls_plan.edits and CAPTURE_HOOK in by_member:  # its forward only
            fix = Fix(tuple(cls_plan.edits), edited, file.digest, rank=len(out))
            out.append(replace(by_member.pop(CAPTURE_HOOK), fix=fix))
        for member, method in cls_plan.methods:
            if member not in by_member:
                continue
            needs: list[ImportNeed] = []
            for name, provider in cls_plan.names.get(member, {}).items():
                needs += imports.require({name}, provider)
            own = tuple(cls_plan.edits) if member == CAPTURE_HOOK else ()
            edits = (*own, Edit(cls_plan.end, cls_plan.end, ("", *method)))
            writes = (Written("method", qualname, member), *(edited if own else ()))
            fix = Fix(edits, writes, file.digest, tuple(needs), defines=((qualname, member),), rank=len(out))
            out.append(replace(by_member.pop(member), fix=fix))
        out += [replace(f, fix_refusal=cls_plan.refusals.get(member, f"the plan for {qualname} writes no {member}"))
                for member, f in by_member.items()]  # none: the check offers only what its plan writes
    return out
