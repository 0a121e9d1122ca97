"""EGL050-EGL053: a served model has its capture member, but the chain from the
engine's call to the logits processor breaks (analysis/sglang/capture_chain.py).

Why: having `set_eagle3_layers_to_capture` is not capturing. SGLang 0.5.11 to 0.5.21
served Qwen3.5-VL with an inherited setter that writes `self.model.layers_to_capture`
while its decoder decides capture by a per-layer flag: nothing is captured, the decoder
returns a tensor and the served forward unpacks it as a tuple. Qwen4Exp (0.5.20 on) sets
the flags right, but its decoder returns `(hidden_states, hc_hidden_states)` on every
batch that is not idle. One finding per broken link, naming the writer and the reader.

Speed: only registered classes of files whose top-level classes define a capture member,
or subclass (by name, transitively) a class that does, are read (a bytes test).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..analysis.capture.links import Broken, Chain, Link
from ..analysis.python.resolve import ClassEntity
from ..analysis.sglang.capture_chain import CaptureChainAnalysis
from ..analysis.sglang.class_index import ClassIndex
from ..analysis.sglang.drafts import is_draft
from ..analysis.sglang.owners import owner_analysis
from ..analysis.sglang.roles import is_draft_name
from ..analysis.syntax.textscan import Anchored
from ..findings import Finding
from .aux_path import captures
from .context import Context
from .vllm_marker import marked_targets

CODE_BY_LINK = {Link.CALL: "EGL050", Link.WRITE: "EGL051", Link.READ: "EGL051", Link.RETURN: "EGL052",
                Link.UNPACK: "EGL053", Link.PASS: "EGL053"}
CODES = ("EGL050", "EGL051", "EGL052", "EGL053")
CALL_FAILS = "EGL050"  # the engine's call raises: its argument, or a member the delegation reaches is missing
SUBJECTS = "served classes with a capture member"
FIX = None  # no code of this family has an automatic fix
# the subjects are found by name (EntryClass); what --jobs workers parse ahead: the classes
# that define a capture member (the rest a chain reads is parsed when it reads it)
SUBJECT_TEXT = re.compile(r"def\s+set_(?:eagle3|dflash|dspark)_layers_to_capture")


_IMPORT = Anchored(re.compile(rb"^from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M), (b"from",))
_WORD = re.compile(rb"\w+")
_TORCH = {b"nn", b"Module", b"torch"}  # `nn.Module`: never one of SGLang's models


def _model_imports(raw: bytes) -> set[bytes]:
    """Names a file imports from SGLang's models package (`from .qwen3_vl import X`, `from
    sglang.srt.models.qwen3_vl import X`): a base of that name may bring a capture member."""
    if b"import" not in raw:
        return set()
    return {name for module, names in _IMPORT.findall(raw) if module.startswith(b".") or b"models" in module
            for name in _WORD.findall(names)}


def _hook_classes(context: Context, index: ClassIndex) -> set[bytes]:
    """Names of top-level classes that define a selected capture member, or subclass (by name,
    transitively) one that does, or one of SGLang's models outside the given files (it may)."""
    defs = [b"def " + h.encode() for h in captures(context)]
    names = {name for path, found in index.by_path.items() for name, start, end in found
             if any(index.raws[path].find(d, start, end) >= 0 for d in defs)}
    imported: dict[Path, set[bytes]] = {}
    for base, subs in index.subclasses.items():
        if base in index.bodies or base in _TORCH:
            continue
        for sub, path in subs:
            if path not in imported:
                imported[path] = _model_imports(index.raws[path])
            if base in imported[path]:
                names.add(sub)
    return index.subclosure(names)


def _hook_names(context: Context) -> set[bytes]:
    return context.memo("chain.names", lambda: _hook_classes(
        context, context.memo("owner.index", lambda: ClassIndex(context.raws))))


def files(context: Context) -> list[Path]:
    if not captures(context):
        return []

    def make() -> list[Path]:
        index = context.memo("owner.index", lambda: ClassIndex(context.raws))
        names = _hook_names(context)
        return [path for path, raw in context.raws.items() if b"EntryClass" in raw
                and any(name in names and not is_draft_name(name.decode(), path)
                        for name, _, _ in index.by_path.get(path, []))]
    return context.memo("chain.files", make)


def subjects(context: Context) -> list[ClassEntity]:
    """Registered, non-draft classes of those files that pass the same bytes test (their
    chains are judged in `check`): a registered class beside them that neither defines a
    capture member nor subclasses one is not parsed. With a vLLM marker pack, also the
    served classes of vLLM's model files that list the marker (vllm_chain.py)."""
    out = [cls for cls in _vllm_targets(context) if cls not in _sglang_subjects(context)]
    return _sglang_subjects(context) + out


def _vllm_targets(context: Context) -> dict[ClassEntity, str]:
    """vLLM targets whose chain is followed, each with its pack's name (none without the pack)."""
    return context.memo("chain.vllm", lambda: {cls: iface.name for cls, iface in marked_targets(context)})


def _sglang_subjects(context: Context) -> list[ClassEntity]:
    return context.memo("chain.subjects", lambda: _find_subjects(context))


def _find_subjects(context: Context) -> list[ClassEntity]:
    out = []
    names = _hook_names(context)
    for path in files(context):
        mod = context.project.summary(path, context.raws[path])
        for name in mod.entry_classes if mod else ():
            if name.encode() in names and mod is not None and name in mod.classes:
                cls = ClassEntity(mod.path, name)
                if not is_draft(context.resolver, cls):
                    out.append(cls)
    return out


def analysis(context: Context) -> CaptureChainAnalysis:
    return owner_analysis(context.resolver).chains


def check(context: Context, cls: ClassEntity) -> list[Finding]:
    vllm = _vllm_targets(context)
    if cls in vllm:
        from ..analysis.vllm.vllm_chain import VllmChainAnalysis  # only vLLM's models need it

        chain = context.memo("chain.vllm.analysis", lambda: VllmChainAnalysis(
            context.resolver, owner_analysis(context.resolver))).chain(cls)
        found = [_finding(context, chain, b, vllm[cls]) for b in chain.broken] if chain is not None else []
        if cls not in _sglang_subjects(context):
            return found
    else:
        found = []
    out: list[Finding] = found
    chains = analysis(context)
    interfaces = {m.name: m.interface for m in context.methods}
    for hook in captures(context):
        chain = chains.chain(cls, hook)
        if chain is not None:
            out += [_finding(context, chain, b, interfaces.get(hook)) for b in chain.broken]
    return out


def text(name: str, hook: str, broken: Broken) -> tuple[str, tuple[str, ...]]:
    """EGL050-EGL053's message: the served class, its member and the link that breaks; the help
    line: what breaks it, with the writer and the reader (`Finding.sentence` joins them as
    `support` says it)."""
    return f"{name}: the capture chain of {hook} breaks at link {broken.link.letter}", (broken.message,)


def _finding(context: Context, chain: Chain, broken: Broken, interface: str | None) -> Finding:
    info = context.resolver.info(chain.served)
    mod = context.resolver.module(chain.served.path)
    writer = broken.writer or chain.member
    message, help_lines = text(info.name, chain.hook, broken)
    return Finding(
        os.path.abspath(chain.served.path), info.line, info.column,
        CALL_FAILS if broken.fails else CODE_BY_LINK[broken.link], message, help=help_lines,
        class_name=info.name, wrapped_class=chain.decoder.qualname if chain.decoder else None,
        method=chain.hook, wrapped_path=os.path.abspath(writer.cls.path), wrapped_line=writer.line,
        provider_class=chain.member.cls.qualname, interface=interface,
        entry_class=bool(mod and info.name in mod.entry_classes))
