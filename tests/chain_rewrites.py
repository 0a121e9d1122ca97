"""Behaviour-preserving rewrites of SGLang's EAGLE-3 capture code, for metamorphic tests of the
capture chain (tests/test_chain_metamorphic.py).

Each rewrite changes how a served model's capture is spelled, not what it does at run time:
a helper extracted, a list updated in place, a flag renamed, a dict instead of a list. The
chain's verdict on the rewritten tree must stay the same or become unknown, never flip.

Why the rewrites find their places by what the code does: a rewrite tied to a line number or
to today's spelling would silently stop applying on the next release. Here the member is the
served class's `set_eagle3_layers_to_capture` (through its bases); the setters are that member
and the members it delegates to on held objects (`self.model.set_eagle3_layers_to_capture`);
the served forward is the forward that unpacks `hidden_states` under a flag of `self`; the
decoder is the held object whose forward collects into a local list it returns in a tuple.
The roles are read off the release's own source with `ast`, independently of eaglelint, which
is what is under test. A rewrite that finds no place returns None (not applicable).
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

HOOK = "set_eagle3_layers_to_capture"
PACKAGE = "sglang.srt.models"
HELPER_MODULE = "eagle3_capture_helpers"  # the new module of the models package (rewrite 1)
RENAMED_FLAG = "eagle3_aux_enabled"
_BUILTINS = frozenset(dir(builtins))
Fn = ast.FunctionDef | ast.AsyncFunctionDef


# -- reading the release's models package -------------------------------------------------

class Models:
    """The models package of one release tree: source texts read once, classes resolved
    through `from sglang.srt.models.x import Name` imports."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._text: dict[Path, str] = {}
        self._tree: dict[Path, ast.Module] = {}

    def text(self, path: Path) -> str:
        if path not in self._text:
            self._text[path] = path.read_text(encoding="utf-8")
        return self._text[path]

    def tree(self, path: Path) -> ast.Module:
        """A shared parse, to read; `Edits` parses its own copy to change."""
        if path not in self._tree:
            self._tree[path] = ast.parse(self.text(path))
        return self._tree[path]

    def module_path(self, module: str) -> Path | None:
        if not module.startswith(PACKAGE + "."):
            return None
        path = self.root.joinpath(*module[len(PACKAGE) + 1:].split(".")).with_suffix(".py")
        return path if path.is_file() else None

    def class_def(self, path: Path, name: str) -> ast.ClassDef | None:
        return next((n for n in self.tree(path).body if isinstance(n, ast.ClassDef) and n.name == name), None)

    def resolve(self, path: Path, name: str, depth: int = 0) -> tuple[Path, str] | None:
        """The class `name` means in module `path`: defined there, or imported from another
        module of the package (followed through re-exports)."""
        if self.class_def(path, name) is not None:
            return path, name
        if depth > 4:
            return None
        for node in ast.walk(self.tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        other = self.module_path(node.module)
                        if other is not None:
                            return self.resolve(other, alias.name, depth + 1)
        return None

    def bases(self, path: Path, name: str) -> list[tuple[Path, str]]:
        node = self.class_def(path, name)
        found = []
        for base in node.bases if node else ():
            if isinstance(base, ast.Name) and (hit := self.resolve(path, base.id)):
                found.append(hit)
        return found

    def mro(self, path: Path, name: str) -> list[tuple[Path, str]]:
        """The class and its in-package bases, depth first (enough for these hierarchies,
        which have one in-package base line)."""
        order: list[tuple[Path, str]] = []
        stack = [(path, name)]
        while stack:
            cls = stack.pop(0)
            if cls not in order:
                order.append(cls)
                stack[:0] = self.bases(*cls)
        return order

    def method(self, path: Path, name: str, member: str) -> Site | None:
        for cls_path, cls_name in self.mro(path, name):
            node = self.class_def(cls_path, cls_name)
            for fn in node.body if node else ():
                if isinstance(fn, Fn) and fn.name == member:
                    return Site(cls_path, cls_name, fn.name)
        return None

    def init_param_default(self, path: Path, name: str, param: str) -> ast.expr | None:
        """The default of `param` in the most derived `__init__` that declares it."""
        for cls in self.mro(path, name):
            site = self.method(*cls, "__init__")
            if site is None or site.cls != cls[1]:
                continue
            args = site.fn(self).args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
            for arg, default in pairs:
                if arg.arg == param:
                    return default
        return None

    def held(self, path: Path, name: str, attr: str) -> tuple[Path, str] | None:
        """The class of the object an instance of `name` holds as `self.attr`: what its
        methods construct into it (`self.model = LlamaModel(...)`, a `language_model_cls`
        parameter's default, `self._init_model(...)`'s return)."""
        for cls_path, cls_name in self.mro(path, name):
            node = self.class_def(cls_path, cls_name)
            for fn in node.body if node else ():
                if not isinstance(fn, Fn):
                    continue
                for stmt in ast.walk(fn):
                    if isinstance(stmt, ast.Assign) and any(_is_self_attr(t, attr) for t in stmt.targets):
                        hit = self._constructed(cls_path, path, name, stmt.value)
                        if hit is not None:
                            return hit
        return None

    def _constructed(self, module: Path, path: Path, name: str, value: ast.expr) -> tuple[Path, str] | None:
        for call in (n for n in ast.walk(value) if isinstance(n, ast.Call)):
            func = call.func
            if isinstance(func, ast.Name):
                if hit := self.resolve(module, func.id):
                    return hit
                default = self.init_param_default(path, name, func.id)
                if isinstance(default, ast.Name):
                    owner = self.method(path, name, "__init__")
                    where = owner.path if owner else module
                    if hit := self.resolve(where, default.id):
                        return hit
            elif isinstance(func, ast.Attribute) and _is_self(func.value):
                site = self.method(path, name, func.attr)
                if site is not None:
                    for ret in ast.walk(site.fn(self)):
                        if isinstance(ret, ast.Return) and ret.value is not None \
                                and (hit := self._constructed(site.path, path, name, ret.value)):
                            return hit
        return None

    def subclasses(self, root: tuple[Path, str]) -> list[tuple[Path, str]]:
        """`root` and every class of the package that inherits from it."""
        family = [root]
        names = {root[1]}
        changed = True
        while changed:
            changed = False
            for path in sorted(self.root.glob("*.py")):
                if not any(n in self.text(path) for n in names):
                    continue
                for node in self.tree(path).body:
                    if isinstance(node, ast.ClassDef) and (path, node.name) not in family \
                            and any(b in family for b in self.bases(path, node.name)):
                        family.append((path, node.name))
                        names.add(node.name)
                        changed = True
        return family


@dataclass(frozen=True)
class Site:
    """A method: the module, the class that defines it, its name."""

    path: Path
    cls: str
    name: str

    def fn(self, models: Models) -> Fn:
        node = models.class_def(self.path, self.cls)
        return next(f for f in node.body if isinstance(f, Fn) and f.name == self.name)


@dataclass(frozen=True)
class Roles:
    """Where a served class's capture lives, read off the source."""

    served: tuple[Path, str]
    member: Site | None
    setters: tuple[tuple[tuple[Path, str], Site], ...]  # (the instance's class, the method run)
    served_forward: Site | None  # the forward that unpacks the decoder's tuple under the flag
    flag: str | None
    unpacker: tuple[Path, str] | None  # the instance class whose forward that is
    decoder: tuple[Path, str] | None  # the held object's class
    decoder_forward: Site | None
    aux: str | None  # the decoder forward's local it returns the captured states in


def roles(models: Models, path: Path, name: str) -> Roles:
    served = (path, name)
    member = models.method(path, name, HOOK)
    setters: list[tuple[tuple[Path, str], Site]] = []
    instances = [served]
    if member is not None:
        setters.append((served, member))
        queue = [(served, member)]
        while queue and len(setters) < 6:
            owner, site = queue.pop(0)
            for call in ast.walk(site.fn(models)):
                attr = _delegated_attr(call)
                if attr is None:
                    continue
                held = models.held(*owner, attr)
                target = models.method(*held, HOOK) if held else None
                if held and target and (held, target) not in setters:
                    setters.append((held, target))
                    instances.append(held)
                    queue.append((held, target))
    served_forward = flag = unpacker = None
    for instance in instances:
        site = models.method(*instance, "forward")
        if site and (unpack := _flag_unpack(site.fn(models))):
            served_forward, flag, unpacker = site, unpack[0], instance
            break
    decoder = decoder_forward = aux = None
    if unpacker is not None:
        for attr in _held_attrs(models, unpacker):
            held = models.held(*unpacker, attr)
            site = models.method(*held, "forward") if held else None
            if site and (name_ := collected_local(site.fn(models))):
                decoder, decoder_forward, aux = held, site, name_
                break
    return Roles(served, member, tuple(setters), served_forward, flag, unpacker, decoder, decoder_forward, aux)


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _is_self_attr(node: ast.AST, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and _is_self(node.value)


def _delegated_attr(node: ast.AST) -> str | None:
    """`self.A.set_eagle3_layers_to_capture(...)`: A."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == HOOK:
        held = node.func.value
        if isinstance(held, ast.Attribute) and _is_self(held.value):
            return held.attr
    return None


def _held_attrs(models: Models, cls: tuple[Path, str]) -> list[str]:
    seen: list[str] = []
    for cls_path, cls_name in models.mro(*cls):
        node = models.class_def(cls_path, cls_name)
        for n in ast.walk(node) if node else ():
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Attribute) and _is_self(t.value) and t.attr not in seen:
                        seen.append(t.attr)
    return seen


def _flag_unpack(fn: Fn) -> tuple[str, ast.If] | None:
    """`if self.F: h, aux = h`: (F, the if)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Attribute) and _is_self(node.test.value) \
                and len(node.body) == 1 and not node.orelse and _is_unpack(node.body[0]):
            return node.test.attr, node
    return None


def _is_unpack(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)
            and len(stmt.targets[0].elts) == 2 and isinstance(stmt.value, ast.Name)
            and all(isinstance(e, ast.Name) for e in stmt.targets[0].elts)
            and stmt.targets[0].elts[0].id == stmt.value.id)


def collected_local(fn: Fn) -> str | None:
    """The local a decoder forward returns its captured states in: assigned before a loop over
    the layers, returned as an element of a tuple (bare or through a method such as
    `.finalize()`)."""
    assigned = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    if not any(isinstance(n, ast.For) for n in ast.walk(fn)):
        return None
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2:
            for elt in node.value.elts[1:]:
                base = elt.func.value if isinstance(elt, ast.Call) and isinstance(elt.func, ast.Attribute) else elt
                if isinstance(base, ast.Name) and base.id in assigned:
                    return base.id
    return None


# -- editing ---------------------------------------------------------------------------------

class Edits:
    """Own parses of the files a rewrite changes; `result` unparses the changed ones."""

    def __init__(self, models: Models) -> None:
        self.models = models
        self.trees: dict[Path, ast.Module] = {}
        self.new: dict[Path, str] = {}

    def tree(self, path: Path) -> ast.Module:
        if path not in self.trees:
            self.trees[path] = copy.deepcopy(self.models.tree(path))
        return self.trees[path]

    def class_def(self, path: Path, name: str) -> ast.ClassDef:
        return next(n for n in self.tree(path).body if isinstance(n, ast.ClassDef) and n.name == name)

    def fn(self, site: Site) -> Fn:
        return next(f for f in self.class_def(site.path, site.cls).body if isinstance(f, Fn) and f.name == site.name)

    def insert_after_class(self, path: Path, name: str, nodes: list[ast.stmt], before: bool = False) -> None:
        body = self.tree(path).body
        at = body.index(self.class_def(path, name))
        body[at + (0 if before else 1):at + (0 if before else 1)] = nodes

    def result(self) -> dict[Path, str] | None:
        out = {path: ast.unparse(ast.fix_missing_locations(tree)) for path, tree in self.trees.items()
               if ast.dump(tree) != ast.dump(self.models.tree(path))}
        out.update(self.new)
        return out or None


def _stmt(source: str) -> list[ast.stmt]:
    return ast.parse(source).body


def _expr(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


def _locals(fn: Fn) -> set[str]:
    args = fn.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def _globals_used(fn: Fn) -> list[str]:
    local = _locals(fn)
    body = ast.Module(body=fn.body, type_ignores=[])
    used = {n.id for n in ast.walk(body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(used - local - _BUILTINS)


def _needs_class_cell(fn: Fn) -> bool:
    """Zero-argument super(), __class__ or a mangled name: the body cannot leave the class."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super" \
                and not node.args:
            return True
        if isinstance(node, ast.Name) and node.id == "__class__":
            return True
        if isinstance(node, ast.Attribute) and node.attr.startswith("__") and not node.attr.endswith("__"):
            return True
    return False


def _call_args(fn: Fn, skip_self: bool = True) -> str:
    args = fn.args
    positional = [a.arg for a in args.posonlyargs + args.args][1 if skip_self else 0:]
    parts = positional + ([f"*{args.vararg.arg}"] if args.vararg else [])
    parts += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    parts += [f"**{args.kwarg.arg}"] if args.kwarg else []
    return ", ".join(parts)


def _strip_annotations(fn: Fn) -> None:
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [x for x in (args.vararg, args.kwarg) if x]:
        a.annotation = None
    fn.returns = None


def _free_locals(node: ast.AST, fn: Fn) -> list[str]:
    """The forward's locals `node` reads, in first-read order: what a helper needs passed."""
    local = _locals(fn) - {"self"}
    seen: list[str] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in local and n.id not in seen:
            seen.append(n.id)
    return seen


def _fresh(path_tree: ast.Module, stem: str) -> str:
    taken = {n.id for n in ast.walk(path_tree) if isinstance(n, ast.Name)}
    taken |= {n.name for n in ast.walk(path_tree) if isinstance(n, Fn | ast.ClassDef)}
    taken |= {n.attr for n in ast.walk(path_tree) if isinstance(n, ast.Attribute)}
    name, i = stem, 1
    while name in taken:
        i += 1
        name = f"{stem}{i}"
    return name


def _statement_lists(node: ast.AST) -> Iterator[list[ast.stmt]]:
    for n in ast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(n, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value
        for handler in getattr(n, "handlers", ()):
            yield handler.body


Rewrite = Callable[[Models, Roles], "dict[Path, str] | None"]


# -- 1, 2, 9, 12: the member's body moved out of it -----------------------------------------

def _moved_member(models: Models, r: Roles) -> tuple[Edits, Fn, Fn] | None:
    """(edits, the member in them, a copy of it to become the helper)."""
    if r.member is None:
        return None
    edits = Edits(models)
    member = edits.fn(r.member)
    return edits, member, copy.deepcopy(member)


def member_helper_other_module(models: Models, r: Roles) -> dict[Path, str] | None:
    """1. The member's body becomes `set_eagle3_capture(self, ids)` of a new module of the
    package, imported by the member's module; the globals it reads it imports from there, at
    call time (no import cycle)."""
    moved = _moved_member(models, r)
    if moved is None or _needs_class_cell(moved[1]):
        return None
    edits, member, helper = moved
    helper.name, helper.decorator_list = "set_eagle3_capture", []
    _strip_annotations(helper)
    module = f"{PACKAGE}.{r.member.path.stem}"
    if names := _globals_used(helper):
        helper.body[:0] = _stmt(f"from {module} import {', '.join(names)}")
    member.body = _stmt(f"return _eagle3_capture_helper(self, {_call_args(member)})")
    edits.insert_after_class(r.member.path, r.member.cls,
                             _stmt(f"from {PACKAGE}.{HELPER_MODULE} import set_eagle3_capture as "
                                   "_eagle3_capture_helper"), before=True)
    helper_path = models.root / f"{HELPER_MODULE}.py"
    edits.new[helper_path] = ast.unparse(ast.fix_missing_locations(ast.Module(body=[helper], type_ignores=[])))
    return edits.result()


def member_helper_same_module(models: Models, r: Roles) -> dict[Path, str] | None:
    """2. The member's body becomes a module-level function of its own module, right after
    the class, which the member calls with `self` and the ids."""
    moved = _moved_member(models, r)
    if moved is None or _needs_class_cell(moved[1]):
        return None
    edits, member, helper = moved
    helper.name = _fresh(edits.tree(r.member.path), "_set_eagle3_capture")
    helper.decorator_list = []
    _strip_annotations(helper)
    member.body = _stmt(f"return {helper.name}(self, {_call_args(member)})")
    edits.insert_after_class(r.member.path, r.member.cls, [helper])
    return edits.result()


def borrowed_member(models: Models, r: Roles) -> dict[Path, str] | None:
    """9. The member's body becomes `_set_capture(self, layer_ids=None)` before the class, and
    the class binds `set_eagle3_layers_to_capture = _set_capture`."""
    moved = _moved_member(models, r)
    if moved is None or _needs_class_cell(moved[1]) or moved[1].decorator_list:
        return None
    edits, member, helper = moved
    if not all(isinstance(d, ast.Constant) for d in helper.args.defaults + helper.args.kw_defaults if d):
        return None
    helper.name = _fresh(edits.tree(r.member.path), "_set_capture")
    _strip_annotations(helper)
    owner = edits.class_def(r.member.path, r.member.cls)
    owner.body[owner.body.index(member)] = _stmt(f"{HOOK} = {helper.name}")[0]
    edits.insert_after_class(r.member.path, r.member.cls, [helper], before=True)
    return edits.result()


def member_private_method(models: Models, r: Roles) -> dict[Path, str] | None:
    """12. The member's body becomes a private method of the same class that the member
    calls."""
    moved = _moved_member(models, r)
    if moved is None:
        return None
    edits, member, helper = moved
    owner = edits.class_def(r.member.path, r.member.cls)
    helper.name, helper.decorator_list = "_apply_eagle3_layers_to_capture", []
    member.body = _stmt(f"return self.{helper.name}({_call_args(member)})")
    owner.body.insert(owner.body.index(member) + 1, helper)
    return edits.result()


# -- 3: the decoder's list updated in place -------------------------------------------------

def _list_writes(models: Models, r: Roles) -> Iterator[tuple[Site, ast.Assign]]:
    """The setters' `self[.A].attr = V` whose object's class creates `attr` as a list in its
    `__init__`, V not reading `attr` (a clear() first would empty it)."""
    for instance, site in r.setters:
        for stmt in ast.walk(site.fn(models)):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Attribute)):
                continue
            target = stmt.targets[0]
            if _is_self(target.value):
                obj = instance
            elif isinstance(target.value, ast.Attribute) and _is_self(target.value.value):
                obj = models.held(*instance, target.value.attr)
            else:
                continue
            reads_itself = any(isinstance(n, ast.Attribute) and n.attr == target.attr for n in ast.walk(stmt.value))
            if obj and not reads_itself and _inits_list(models, obj, target.attr):
                yield site, stmt


def _inits_list(models: Models, cls: tuple[Path, str], attr: str) -> bool:
    for cls_path, cls_name in models.mro(*cls):
        node = models.class_def(cls_path, cls_name)
        init = next((f for f in node.body if isinstance(f, Fn) and f.name == "__init__"), None) if node else None
        for stmt in ast.walk(init) if init else ():
            if isinstance(stmt, ast.Assign) and any(_is_self_attr(t, attr) for t in stmt.targets):
                return isinstance(stmt.value, ast.List)
    return False


def _in_place(models: Models, r: Roles, replace: Callable[[ast.Attribute, ast.expr], list[ast.stmt]]):
    writes = list(_list_writes(models, r))
    if not writes:
        return None
    edits = Edits(models)
    for site, stmt in writes:
        fn = edits.fn(site)
        for stmts in _statement_lists(fn):
            for i, s in enumerate(stmts):
                if isinstance(s, ast.Assign) and ast.dump(s) == ast.dump(stmt):
                    stmts[i:i + 1] = replace(s.targets[0], s.value)
    return edits.result()


def list_clear_extend(models: Models, r: Roles) -> dict[Path, str] | None:
    """3a. `obj.layers_to_capture = X` → `obj.layers_to_capture.clear(); ....extend(X)`, where
    the object's `__init__` creates the list."""
    def replace(target: ast.Attribute, value: ast.expr) -> list[ast.stmt]:
        lst = ast.unparse(target)
        return _stmt(f"{lst}.clear()\n{lst}.extend({ast.unparse(value)})")
    return _in_place(models, r, replace)


def list_slice_assign(models: Models, r: Roles) -> dict[Path, str] | None:
    """3b. `obj.layers_to_capture = X` → `obj.layers_to_capture[:] = X`."""
    return _in_place(models, r, lambda target, value: _stmt(f"{ast.unparse(target)}[:] = {ast.unparse(value)}"))


# -- 4, 11: the served flag --------------------------------------------------------------------

class _RenameFlag(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr == self.old and _is_self(node.value):
            node.attr = self.new
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr") \
                and len(node.args) >= 2 and _is_self(node.args[0]) \
                and isinstance(node.args[1], ast.Constant) and node.args[1].value == self.old:
            node.args[1] = ast.Constant(self.new)
        return node


def flag_renamed(models: Models, r: Roles) -> dict[Path, str] | None:
    """4. The served flag renamed on `self` (writes, reads, getattr/setattr strings) in the
    topmost class of the unpacking hierarchy that uses it and in all its subclasses; that
    class keeps the old name as a property over the new one, because the engine reads the flag
    by name on some paths (0.5.23's context-parallel extend in eager_runner.py)."""
    if r.flag is None or r.unpacker is None:
        return None
    flag = r.flag
    users = [c for c in models.mro(*r.unpacker) if _mentions_flag(models.class_def(*c), flag)]
    if not users:
        return None
    top = users[-1]
    edits = Edits(models)
    for cls in models.subclasses(top):
        _RenameFlag(flag, RENAMED_FLAG).visit(edits.class_def(*cls))
    edits.class_def(*top).body.extend(_stmt(
        f"@property\ndef {flag}(self):\n    return self.{RENAMED_FLAG}\n"
        f"@{flag}.setter\ndef {flag}(self, value):\n    self.{RENAMED_FLAG} = value\n"))
    return edits.result()


def _mentions_flag(node: ast.ClassDef | None, flag: str) -> bool:
    return node is not None and any(_is_self_attr(n, flag) for n in ast.walk(node))


def isinstance_unpack(models: Models, r: Roles) -> dict[Path, str] | None:
    """11. The served forward's `if self.F:` before the unpack becomes
    `if isinstance(hidden_states, tuple):` (the decoder returns a tuple exactly when it
    captured, which on the normal path is when the member set the flag)."""
    if r.served_forward is None:
        return None
    edits = Edits(models)
    hit = _flag_unpack(edits.fn(r.served_forward))
    if hit is None:
        return None
    _, node = hit
    node.test = _expr(f"isinstance({node.body[0].value.id}, tuple)")
    return edits.result()


# -- 5, 6, 7, 10: the decoder's collecting and returning ----------------------------------

def _decoder(models: Models, r: Roles) -> tuple[Edits, Fn, str] | None:
    if r.decoder_forward is None or r.aux is None:
        return None
    edits = Edits(models)
    return edits, edits.fn(r.decoder_forward), r.aux


def _enclosing_loops(fn: Fn) -> dict[ast.AST, ast.For]:
    inner: dict[ast.AST, ast.For] = {}

    def walk(node: ast.AST, loop: ast.For | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, Fn | ast.Lambda | ast.ClassDef):
                continue
            here = child if isinstance(child, ast.For) else loop
            if loop is not None:
                inner[child] = loop
            walk(child, here)
    walk(fn, None)
    return inner


def aux_dict(models: Models, r: Roles) -> dict[Path, str] | None:
    """5. The decoder collects into a dict keyed by the layer index (`aux = {}`,
    `aux[i] = h`) and returns `list(aux.values())`: where it creates the list as `[]`, appends
    once per iteration of a loop over the indices, and uses it no other way than `len`."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, aux = found
    loops = _enclosing_loops(fn)
    creations, appends, returns, lens = [], [], [], []
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == aux for t in stmt.targets):
            creations.append(stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append" \
                and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == aux:
            appends.append(stmt)
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Tuple) \
                and any(isinstance(e, ast.Name) and e.id == aux for e in stmt.value.elts):
            returns.append(stmt)
        elif isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Name) and stmt.func.id == "len" \
                and len(stmt.args) == 1 and isinstance(stmt.args[0], ast.Name) and stmt.args[0].id == aux:
            lens.append(stmt)
    uses = sum(1 for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == aux)
    if len(creations) != 1 or not isinstance(creations[0].value, ast.List) or creations[0].value.elts \
            or len(appends) != 1 or not returns or uses != 1 + len(appends) + len(returns) + len(lens):
        return None
    loop = loops.get(appends[0])
    if loop is None or not isinstance(loop.target, ast.Name) or not _is_index_range(loop.iter) \
            or any(isinstance(n, ast.For) for n in ast.walk(ast.Module(body=loop.body, type_ignores=[]))):
        return None
    creations[0].value = ast.Dict(keys=[], values=[])
    call = appends[0].value
    for stmts in _statement_lists(fn):
        for i, s in enumerate(stmts):
            if s is appends[0]:
                stmts[i] = _stmt(f"{aux}[{loop.target.id}] = {ast.unparse(call.args[0])}")[0]
    for ret in returns:
        ret.value.elts = [_expr(f"list({aux}.values())") if isinstance(e, ast.Name) and e.id == aux else e
                          for e in ret.value.elts]
    return edits.result()


def _is_index_range(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"


def decoder_namedtuple(models: Models, r: Roles) -> dict[Path, str] | None:
    """6. The decoder returns a NamedTuple defined in its module instead of a literal tuple
    (it unpacks like one, so the served forward stays as it is)."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, aux = found
    tree = edits.tree(r.decoder_forward.path)
    name = _fresh(tree, "DecoderOutputWithAux")
    changed = False
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2 \
                and _reads(node.value.elts[1], aux):
            node.value = ast.Call(func=ast.Name(name, ast.Load()), args=node.value.elts, keywords=[])
            changed = True
    if not changed:
        return None
    edits.insert_after_class(r.decoder_forward.path, r.decoder_forward.cls, _stmt(
        f"from typing import NamedTuple as _NamedTuple\n"
        f"class {name}(_NamedTuple):\n    hidden_states: object\n    aux_hidden_states: object\n"), before=True)
    return edits.result()


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def capture_helper_method(models: Models, r: Roles) -> dict[Path, str] | None:
    """7. The decoder's capture test and its use of the list move into a method of the
    decoder that the forward calls with the list: an `if <test>: aux.append(...)` statement
    becomes `self._eagle3_capture(aux, ...)`, a `aux.capture if <test> else None` target
    becomes `self._eagle3_capture_target(aux, ...)`."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, aux = found
    loops = _enclosing_loops(fn)
    owner = edits.class_def(r.decoder_forward.path, r.decoder_forward.cls)
    helpers: list[ast.stmt] = []

    class Extract(ast.NodeTransformer):
        def visit_If(self, node: ast.If) -> ast.AST:
            self.generic_visit(node)
            if node in loops and not node.orelse and all(isinstance(s, ast.Expr) for s in node.body) \
                    and any(_reads(s, aux) for s in node.body):
                name = _fresh(edits.tree(r.decoder_forward.path), "_eagle3_capture")
                params = _free_locals(node, fn)
                helpers.extend(_stmt(f"def {name}(self, {', '.join(params)}):\n    pass"))
                helpers[-1].body = [node]
                return _stmt(f"self.{name}({', '.join(params)})")[0]
            return node

        def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
            self.generic_visit(node)
            body = node.body.value if isinstance(node.body, ast.Attribute) else node.body
            if node in loops and isinstance(body, ast.Name) and body.id == aux \
                    and isinstance(node.orelse, ast.Constant) and node.orelse.value is None:
                name = _fresh(edits.tree(r.decoder_forward.path), "_eagle3_capture_target")
                params = _free_locals(node, fn)
                helpers.extend(_stmt(f"def {name}(self, {', '.join(params)}):\n    return None"))
                helpers[-1].body = [ast.Return(value=node)]
                return _expr(f"self.{name}({', '.join(params)})")
            return node

    Extract().visit(fn)
    if not helpers:
        return None
    owner.body[owner.body.index(fn) + 1:owner.body.index(fn) + 1] = helpers
    return edits.result()


def local_tuple_return(models: Models, r: Roles) -> dict[Path, str] | None:
    """10. `return hidden_states, aux` → `out = (hidden_states, aux); return out`."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, aux = found
    name = _fresh(edits.tree(r.decoder_forward.path), "decoder_out")
    changed = False
    for stmts in _statement_lists(fn):
        for s in list(stmts):
            if isinstance(s, ast.Return) and isinstance(s.value, ast.Tuple) \
                    and any(_reads(e, aux) for e in s.value.elts):
                at = stmts.index(s)
                stmts[at:at + 1] = _stmt(f"{name} = {ast.unparse(s.value)}\nreturn {name}")
                changed = True
    return edits.result() if changed else None


# -- 8: loops over the layers written through slices -----------------------------------------

def setter_layers_slice(models: Models, r: Roles) -> dict[Path, str] | None:
    """8a. In the setters, a layer picked by index `obj.layers[i]` is picked from a slice of
    all of them: `obj.layers[0:len(obj.layers)][i]`."""
    edits = Edits(models)
    changed = False

    class Slice(ast.NodeTransformer):
        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            nonlocal changed
            self.generic_visit(node)
            if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "layers" and not isinstance(node.slice, ast.Slice):
                layers = ast.unparse(node.value)
                node.value = _expr(f"{layers}[0:len({layers})]")
                changed = True
            return node

    for _, site in r.setters:
        Slice().visit(edits.fn(site))
    return edits.result() if changed else None


def decoder_range_to_slice(models: Models, r: Roles) -> dict[Path, str] | None:
    """8b. The decoder's `for i in range(a, b): ... self.layers[i] ...` becomes
    `for i, layer in enumerate(self.layers[a:b], start=a): ... layer ...`."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, _ = found
    changed = False
    for loop in [n for n in ast.walk(fn) if isinstance(n, ast.For)]:
        it = loop.iter
        if not (isinstance(loop.target, ast.Name) and _is_index_range(it) and len(it.args) == 2
                and not it.keywords and all(_pure(a) for a in it.args)):
            continue
        index = loop.target.id
        body = ast.Module(body=loop.body, type_ignores=[])
        picks = [n for n in ast.walk(body) if isinstance(n, ast.Subscript) and _is_self_attr(n.value, "layers")
                 and isinstance(n.slice, ast.Name) and n.slice.id == index and isinstance(n.ctx, ast.Load)]
        stores = [n for n in ast.walk(body) if isinstance(n, ast.Name) and n.id == index
                  and not isinstance(n.ctx, ast.Load)]
        if not picks or stores:
            continue
        layer = _fresh(edits.tree(r.decoder_forward.path), "layer_at_index")

        loop.body = [_Replace(picks, layer).visit(s) for s in loop.body]
        a, b = (ast.unparse(x) for x in it.args)
        loop.target = _expr(f"({index}, {layer})")
        loop.target.ctx = ast.Store()
        for elt in loop.target.elts:
            elt.ctx = ast.Store()
        loop.iter = _expr(f"enumerate(self.layers[{a}:{b}], start={a})")
        changed = True
    return edits.result() if changed else None


class _Replace(ast.NodeTransformer):
    """These very nodes (by identity) become a read of `name`."""

    def __init__(self, nodes: list[ast.AST], name: str) -> None:
        self.nodes, self.name = nodes, name

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        return ast.Name(self.name, ast.Load()) if any(node is n for n in self.nodes) else node


def decoder_slice_to_index(models: Models, r: Roles) -> dict[Path, str] | None:
    """8c. The decoder's `for j, layer in enumerate(self.layers[a:b]):` becomes
    `for j in range(b - a): layer = self.layers[a + j]` (make_layers keeps a <= b <= len)."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, _ = found
    changed = False
    for loop in [n for n in ast.walk(fn) if isinstance(n, ast.For)]:
        it, target = loop.iter, loop.target
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate"
                and len(it.args) == 1 and not it.keywords and isinstance(target, ast.Tuple)
                and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts)):
            continue
        sliced = it.args[0]
        if not (isinstance(sliced, ast.Subscript) and _is_self_attr(sliced.value, "layers")
                and isinstance(sliced.slice, ast.Slice) and sliced.slice.step is None
                and sliced.slice.lower is not None and sliced.slice.upper is not None
                and _pure(sliced.slice.lower) and _pure(sliced.slice.upper)):
            continue
        a, b = ast.unparse(sliced.slice.lower), ast.unparse(sliced.slice.upper)
        index, layer = target.elts[0].id, target.elts[1].id
        loop.target = ast.Name(index, ast.Store())
        loop.iter = _expr(f"range({b} - {a})")
        loop.body[:0] = _stmt(f"{layer} = self.layers[{a} + {index}]")
        changed = True
    return edits.result() if changed else None


def _pure(node: ast.expr) -> bool:
    """An expression without calls: reading it twice reads the same."""
    return all(not isinstance(n, ast.Call | ast.NamedExpr | ast.Await) for n in ast.walk(node))


# -- more: the member's flag write and pipeline guard, the served unpack -----------------

def flag_setattr(models: Models, r: Roles) -> dict[Path, str] | None:
    """13. The setters' `self.F = value` for the served flag becomes `setattr(self, "F", value)`."""
    if r.flag is None:
        return None
    edits = Edits(models)
    changed = False
    for _, site in r.setters:
        for stmts in _statement_lists(edits.fn(site)):
            for i, s in enumerate(stmts):
                if isinstance(s, ast.Assign) and len(s.targets) == 1 and _is_self_attr(s.targets[0], r.flag):
                    stmts[i] = _stmt(f"setattr(self, {r.flag!r}, {ast.unparse(s.value)})")[0]
                    changed = True
    return edits.result() if changed else None


def unpack_by_index(models: Models, r: Roles) -> dict[Path, str] | None:
    """14. The served forward's `h, aux = h` becomes `h, aux = h[0], h[1]`."""
    if r.served_forward is None:
        return None
    edits = Edits(models)
    hit = _flag_unpack(edits.fn(r.served_forward))
    if hit is None:
        return None
    assign = hit[1].body[0]
    assign.value = _expr(f"({assign.value.id}[0], {assign.value.id}[1])")
    return edits.result()


def guard_inverted(models: Models, r: Roles) -> dict[Path, str] | None:
    """15. The member's leading `if not <cond>: return` over the rest becomes
    `if <cond>: <rest>`."""
    if r.member is None:
        return None
    edits = Edits(models)
    member = edits.fn(r.member)
    body = member.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    if len(body) <= start + 1:
        return None
    guard = body[start]
    if not (isinstance(guard, ast.If) and not guard.orelse and len(guard.body) == 1
            and isinstance(guard.body[0], ast.Return) and guard.body[0].value is None
            and isinstance(guard.test, ast.UnaryOp) and isinstance(guard.test.op, ast.Not)):
        return None
    rest = body[start + 1:]
    body[start:] = [ast.If(test=guard.test.operand, body=rest, orelse=[])]
    return edits.result()


# -- more: the decoder's capture test, its return, the setters' ids, the logits call -------

def _capture_tests(fn: Fn, aux: str) -> list[ast.If | ast.IfExp]:
    """The tests that decide what the decoder's forward feeds its list: an `if` inside a loop
    whose body reads the list, a conditional expression inside a loop whose value does."""
    loops = _enclosing_loops(fn)
    found: list[ast.If | ast.IfExp] = []
    for node in ast.walk(fn):
        if node not in loops:
            continue
        if isinstance(node, ast.If):
            feeds = any(_reads(s, aux) for s in node.body) and not any(_reads(s, aux) for s in node.orelse)
        else:
            feeds = isinstance(node, ast.IfExp) and _reads(node.body, aux) and not _reads(node.orelse, aux)
        if feeds:
            found.append(node)
    return found


def _membership(test: ast.expr) -> tuple[ast.expr, ast.Attribute] | None:
    """`x in self.A` (the decoder's own list): (x, self.A)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In) \
            and isinstance(test.comparators[0], ast.Attribute) and _is_self(test.comparators[0].value):
        return test.left, test.comparators[0]
    return None


def _rewrite_membership(models: Models, r: Roles,
                        change: Callable[[ast.expr, ast.Attribute], ast.expr]) -> dict[Path, str] | None:
    """Each capture test `x in self.A` (x without calls) replaced by `change(x, self.A)`."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, aux = found
    changed = False
    for node in _capture_tests(fn, aux):
        hit = _membership(node.test)
        if hit is not None and _pure(hit[0]):
            node.test = change(*hit)
            changed = True
    return edits.result() if changed else None


def capture_test_guarded(models: Models, r: Roles) -> dict[Path, str] | None:
    """16. The decoder's capture test `i in self.A` becomes `self.A and i in self.A` (only its
    truth is used; an empty list is false either way; the decoder's `__init__` creates the list
    and the setters write lists, so `in` never met None before)."""
    return _rewrite_membership(models, r, lambda x, lst: _expr(
        f"{ast.unparse(lst)} and {ast.unparse(x)} in {ast.unparse(lst)}"))


def capture_test_set(models: Models, r: Roles) -> dict[Path, str] | None:
    """17. The decoder's capture test `i in self.A` becomes `i in set(self.A)` (layer ids are
    ints: membership in the set is membership in the list)."""
    return _rewrite_membership(models, r, lambda x, lst: _expr(f"{ast.unparse(x)} in set({ast.unparse(lst)})"))


def capture_test_hoisted(models: Models, r: Roles) -> dict[Path, str] | None:
    """18. The decoder's capture list read once into a local before its outermost loop:
    `capture = self.A`, then `if i in capture:` (the forward never writes `self.A`)."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, aux = found
    loops = _enclosing_loops(fn)
    changed = False
    for node in _capture_tests(fn, aux):
        hit = _membership(node.test)
        if hit is None or not _pure(hit[0]):
            continue
        attr = hit[1].attr
        if any(_is_self_attr(n, attr) and not isinstance(n.ctx, ast.Load) for n in ast.walk(fn)):
            continue
        outer = loops[node]
        while outer in loops:
            outer = loops[outer]
        local = _fresh(edits.tree(r.decoder_forward.path), "capture_ids")
        for stmts in _statement_lists(fn):
            if any(s is outer for s in stmts):
                at = next(i for i, s in enumerate(stmts) if s is outer)
                stmts[at:at] = _stmt(f"{local} = self.{attr}")
                node.test = _expr(f"{ast.unparse(hit[0])} in {local}")
                changed = True
                break
    return edits.result() if changed else None


def capture_test_negated(models: Models, r: Roles) -> dict[Path, str] | None:
    """19. The decoder's capture test turned around: `if t: feed` becomes
    `if not t: pass` / `else: feed`, and `x if t else None` becomes `None if not t else x`."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, aux = found
    changed = False
    for node in _capture_tests(fn, aux):
        if isinstance(node, ast.If) and not node.orelse:
            node.test, node.body, node.orelse = _expr(f"not ({ast.unparse(node.test)})"), [ast.Pass()], node.body
            changed = True
        elif isinstance(node, ast.IfExp):
            node.test, node.body, node.orelse = _expr(f"not ({ast.unparse(node.test)})"), node.orelse, node.body
            changed = True
    return edits.result() if changed else None


def decoder_return_ifexp(models: Models, r: Roles) -> dict[Path, str] | None:
    """20. The decoder's `if len(aux) == 0: return h` followed by `return h, aux` becomes
    `return (h, aux) if len(aux) > 0 else h` (a length is never negative)."""
    found = _decoder(models, r)
    if found is None:
        return None
    edits, fn, aux = found
    changed = False
    for stmts in _statement_lists(fn):
        for i in range(len(stmts) - 1):
            first, second = stmts[i], stmts[i + 1]
            if not (isinstance(first, ast.If) and not first.orelse and len(first.body) == 1
                    and isinstance(first.body[0], ast.Return) and first.body[0].value is not None
                    and ast.dump(first.test) == ast.dump(_expr(f"len({aux}) == 0"))
                    and isinstance(second, ast.Return) and isinstance(second.value, ast.Tuple)
                    and len(second.value.elts) == 2 and isinstance(second.value.elts[1], ast.Name)
                    and second.value.elts[1].id == aux
                    and ast.dump(second.value.elts[0]) == ast.dump(first.body[0].value)):
                continue
            h = ast.unparse(first.body[0].value)
            stmts[i:i + 2] = _stmt(f"return ({h}, {aux}) if len({aux}) > 0 else {h}")
            changed = True
            break
    return edits.result() if changed else None


def _setter_comprehensions(models: Models, r: Roles) -> tuple[Edits, list[tuple[Site, Fn, ast.ListComp]]]:
    """The setters' `[e for v in ids]` (one generator, no condition, a plain name as target)."""
    edits = Edits(models)
    found = []
    for _, site in r.setters:
        fn = edits.fn(site)
        for node in ast.walk(fn):
            if isinstance(node, ast.ListComp) and len(node.generators) == 1 \
                    and not node.generators[0].ifs and not node.generators[0].is_async \
                    and isinstance(node.generators[0].target, ast.Name):
                found.append((site, fn, node))
    return edits, found


class _ReplaceNode(ast.NodeTransformer):
    def __init__(self, old: ast.AST, new: ast.AST) -> None:
        self.old, self.new = old, new

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return self.new if node is self.old else super().generic_visit(node)


def setter_ids_map(models: Models, r: Roles) -> dict[Path, str] | None:
    """21. The setters' `[e for v in ids]` becomes `list(map(lambda v: e, ids))`."""
    edits, found = _setter_comprehensions(models, r)
    for _, fn, comp in found:
        gen = comp.generators[0]
        _ReplaceNode(comp, _expr(f"list(map(lambda {gen.target.id}: {ast.unparse(comp.elt)}, "
                                 f"{ast.unparse(gen.iter)}))")).visit(fn)
    return edits.result() if found else None


def setter_ids_loop(models: Models, r: Roles) -> dict[Path, str] | None:
    """22. The setters' `[e for v in ids]` built by a loop first: `out = []`,
    `for v in ids: out.append(e)`, right before the statement that used it, which now reads
    `out` (the statement evaluates nothing with effects before the list: a name, `self.x = `,
    a call of `self.x.method`)."""
    edits, found = _setter_comprehensions(models, r)
    changed = False
    for site, fn, comp in found:
        for stmts in _statement_lists(fn):
            hit = next((i for i, s in enumerate(stmts) if not isinstance(s, ast.If | ast.For | ast.While | ast.With)
                        and any(n is comp for n in ast.walk(s))), None)
            if hit is None:
                continue
            gen = comp.generators[0]
            out, var = _fresh(edits.tree(site.path), "ids_out"), _fresh(edits.tree(site.path), "id_in")
            elt = _RenameName(gen.target.id, var).visit(copy.deepcopy(comp.elt))
            _ReplaceNode(comp, ast.Name(out, ast.Load())).visit(stmts[hit])
            stmts[hit:hit] = _stmt(f"{out} = []\nfor {var} in {ast.unparse(gen.iter)}:\n"
                                   f"    {out}.append({ast.unparse(elt)})")
            changed = True
            break
    return edits.result() if changed else None


class _RenameName(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(self.new, node.ctx) if node.id == self.old else node


def setter_none_early_return(models: Models, r: Roles) -> dict[Path, str] | None:
    """23. A setter's last statement `if ids is None: A` / `else: B` (ids a parameter)
    becomes `if ids is None: A; return` followed by B."""
    edits = Edits(models)
    changed = False
    for _, site in r.setters:
        fn = edits.fn(site)
        last = fn.body[-1] if fn.body else None
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        if not (isinstance(last, ast.If) and last.orelse and isinstance(last.test, ast.Compare)
                and len(last.test.ops) == 1 and isinstance(last.test.ops[0], ast.Is)
                and isinstance(last.test.left, ast.Name) and last.test.left.id in params
                and isinstance(last.test.comparators[0], ast.Constant) and last.test.comparators[0].value is None
                and not any(isinstance(n, ast.Return) for n in ast.walk(last))):
            continue
        fn.body[-1:] = [ast.If(test=last.test, body=[*last.body, ast.Return(value=None)], orelse=[]), *last.orelse]
        changed = True
    return edits.result() if changed else None


def logits_aux_keyword(models: Models, r: Roles) -> dict[Path, str] | None:
    """24. The served forward's `self.logits_processor(a, b, c, d, aux)` passes the aux states by
    keyword: `..., aux_hidden_states=aux)`. Where the class builds `self.logits_processor` as
    the engine's `LogitsProcessor` (imported from sglang.srt.layers.logits_processor), whose
    `forward(input_ids, hidden_states, lm_head, logits_metadata, aux_hidden_states=None, ...)`
    names its fifth parameter so in every release targeted (0.5.9 to 0.5.23, read)."""
    if r.served_forward is None or r.unpacker is None:
        return None
    processor = None
    for cls_path, cls_name in models.mro(*r.unpacker):
        node = models.class_def(cls_path, cls_name)
        for stmt in ast.walk(node) if node else ():
            if isinstance(stmt, ast.Assign) and any(_is_self_attr(t, "logits_processor") for t in stmt.targets) \
                    and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name):
                processor = (cls_path, stmt.value.func.id)
                break
        if processor:
            break
    if processor is None or not any(
            isinstance(n, ast.ImportFrom) and n.module == "sglang.srt.layers.logits_processor"
            and any((a.asname or a.name) == processor[1] and a.name == "LogitsProcessor" for a in n.names)
            for n in ast.walk(models.tree(processor[0]))):
        return None
    edits = Edits(models)
    changed = False
    for node in ast.walk(edits.fn(r.served_forward)):
        if isinstance(node, ast.Call) and _is_self_attr(node.func, "logits_processor") and len(node.args) == 5 \
                and not any(isinstance(a, ast.Starred) for a in node.args) \
                and not any(k.arg in (None, "aux_hidden_states") for k in node.keywords):
            node.keywords.insert(0, ast.keyword(arg="aux_hidden_states", value=node.args.pop()))
            changed = True
    return edits.result() if changed else None


def unparsed(models: Models, r: Roles) -> dict[Path, str]:
    """A control, not a rewrite: the modules of the member, the served forward and the decoder
    only unparsed (formatting, comments and line numbers change, nothing else)."""
    sites = (r.member, r.served_forward, r.decoder_forward)
    return {site.path: ast.unparse(models.tree(site.path)) for site in sites if site is not None}


REWRITES: dict[str, Rewrite] = {
    "member_helper_other_module": member_helper_other_module,
    "member_helper_same_module": member_helper_same_module,
    "list_clear_extend": list_clear_extend,
    "list_slice_assign": list_slice_assign,
    "flag_renamed": flag_renamed,
    "aux_dict": aux_dict,
    "decoder_namedtuple": decoder_namedtuple,
    "capture_helper_method": capture_helper_method,
    "setter_layers_slice": setter_layers_slice,
    "decoder_range_to_slice": decoder_range_to_slice,
    "decoder_slice_to_index": decoder_slice_to_index,
    "borrowed_member": borrowed_member,
    "local_tuple_return": local_tuple_return,
    "isinstance_unpack": isinstance_unpack,
    "member_private_method": member_private_method,
    "flag_setattr": flag_setattr,
    "unpack_by_index": unpack_by_index,
    "guard_inverted": guard_inverted,
    "capture_test_guarded": capture_test_guarded,
    "capture_test_set": capture_test_set,
    "capture_test_hoisted": capture_test_hoisted,
    "capture_test_negated": capture_test_negated,
    "decoder_return_ifexp": decoder_return_ifexp,
    "setter_ids_map": setter_ids_map,
    "setter_ids_loop": setter_ids_loop,
    "setter_none_early_return": setter_none_early_return,
    "logits_aux_keyword": logits_aux_keyword,
}
