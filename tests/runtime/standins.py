"""Stand-ins for the GPU-only native pieces SGLang imports, and nothing else.

Why each one, and why it cannot hide a broken model class:
- torchvision: PyPI's Linux build is a CUDA build whose C++ operators do not load
  beside a CPU torch; its Python side then registers fake kernels for
  `torchvision::nms` and `torchvision::qnms` and dies because the operators were
  never defined. Defining the two schemas (no kernel) lets the Python side import;
  calling them still fails. SGLang imports torchvision only for image transforms.
- sgl_kernel: SGLang's CUDA kernel wheel. A placeholder package answers every
  `from sgl_kernel.x import y`; every such object raises when called, so a code
  path that really needs a kernel fails loudly instead of computing something.
- `torch.ops.sgl_kernel.fused_sigmoid_mul_cpu`: an operator of sgl_kernel's CPU
  build, which a model module (muse_glimmer.py, qwen3_5.py) reads at import when
  SGLang runs on CPU. Its schema is defined with no kernel, as for torchvision:
  the module imports, and calling the operator fails ("Could not run ... with
  arguments from the 'CPU' backend").
- torch.cuda.synchronize: SGLang's `set_embed_and_head` calls it after swapping
  weights; without CUDA there is nothing to wait for.
- `torch.ops.sgl_kernel.fused_sigmoid_gating_delta_rule_update_cpu` and
  `fused_gdn_gating_cpu`: operators of sgl_kernel's CPU build that SGLang's
  linear-attention backend (`layers/attention/linear/kernels/gdn_triton.py:32`,
  `gdn_backend.py:188`) reads at import on CPU; the hybrid attention backend of
  every mamba-like model imports it. Defined with a placeholder schema and no
  kernel: the backend builds, and calling either still fails.
- stand_in_mixer: the forward of a named sequence-mixer class (a short
  convolution, a Mamba-2 or linear-attention mixer) whose kernels are Triton or
  sgl_kernel's CPU build, neither of which runs here. Only that submodule's
  forward is replaced, and only where a test names the class (test_runtime_capture_families.py);
  the decoder's loop, its layers, their norms, residual additions and capture
  stay SGLang's own. It returns a deterministic function of its input, of the
  input's shape, so the residual stream still changes at every layer, and a
  capture taken one layer off reads a different tensor.
- placeholder_cuda_streams: `torch.cuda.Stream`, which a CPU build of torch
  refuses to create. kimi_k3.py's decoder creates three side streams in its
  __init__ (`kimi_k3.py:2761`) and uses them only while a CUDA graph is
  captured, in a dual-stream MoE or with a fused all-reduce. The placeholder
  can be created; any use raises, so a path that needs a stream fails loudly.
- accept_absent_sinks: an attention backend's forward_decode/forward_extend
  taking `sinks=None`. A model may always pass its sink bias (mimo_v2.py's
  attention passes `sinks=self.attention_sink_bias`, None without one), and of
  the backends that run here only intel_amx (sgl_kernel's CPU build, an AMX
  processor) accepts the keyword. None means no sinks, so dropping it computes
  the same; a real sink tensor raises.
- skip_kv_copy_warmup: SGLang 0.5.9's MHA KV pool, built for a speculative
  engine, warms up its KV-copy kernel (`memory_pool.py:789`,
  `copy_all_layer_kv_cache_tiled`, Triton: "0 active drivers"). Only EAGLE's
  verify step copies KV entries; the warm-up is skipped and the copy left unset,
  so that step would fail with SGLang's own assertion.
No other SGLang model, layer or config code is replaced.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

import torch


class KernelUnavailable(RuntimeError):
    pass


class _Unavailable:
    """Any attribute of a placeholder kernel module; calling it raises."""

    def __init__(self, qualname: str):
        self._qualname = qualname

    def __call__(self, *args, **kwargs):
        raise KernelUnavailable(f"{self._qualname} is a CUDA kernel (sgl_kernel) and is not available on CPU")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Unavailable(f"{self._qualname}.{name}")

    def __repr__(self) -> str:
        return f"<unavailable {self._qualname}>"


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Unavailable(f"{self.__name__}.{name}")


class _PlaceholderFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, package: str):
        self.package = package

    def find_spec(self, name, path, target=None):
        if name == self.package or name.startswith(self.package + "."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _PlaceholderModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        pass


_LIBRARIES: list = []  # torch.library.Library objects must stay alive for their ops to exist


STOOD_IN_CALLS: dict[str, int] = {}  # per class replaced by stand_in_mixer, how often its forward ran


def stand_in_mixer(cls: type, method: str = "forward") -> None:
    """Replace `cls.<method>` (a mixer's forward, or a layer's call of its mixer, called with the normed stream
    first) by `tanh(x) / 2`, of x's shape."""
    name = f"{cls.__module__}.{cls.__qualname__}.{method}"
    STOOD_IN_CALLS[name] = 0

    def forward(self, hidden_states: torch.Tensor, *args, **kwargs) -> torch.Tensor:
        STOOD_IN_CALLS[name] += 1
        return torch.tanh(hidden_states) / 2

    setattr(cls, method, forward)


def accept_absent_sinks(backend: type) -> None:
    """Let `backend`'s forward_decode and forward_extend take `sinks=None` (no sinks), and refuse real ones; the
    calls that passed the keyword are counted in STOOD_IN_CALLS."""
    for name in ("forward_decode", "forward_extend"):
        original = getattr(backend, name)
        counted = f"{backend.__module__}.{backend.__qualname__}.{name}"

        def forward(self, *args, _original=original, _counted=counted, **kwargs):
            if "sinks" in kwargs:
                if kwargs.pop("sinks") is not None:
                    raise KernelUnavailable(f"{_counted} cannot apply attention sinks")
                STOOD_IN_CALLS[_counted] = STOOD_IN_CALLS.get(_counted, 0) + 1
            return _original(self, *args, **kwargs)

        setattr(backend, name, forward)


def skip_kv_copy_warmup(pool: type) -> None:
    """Let `pool` (0.5.9's MHATokenToKVPool) be built with EAGLE's KV copy asked for, without the Triton warm-up
    launch: the copy is left unset, as without speculative decoding, so a use of it (EAGLE's move_kv_cache) fails
    with SGLang's own assertion. The pools that skipped it are counted in STOOD_IN_CALLS."""
    counted = f"{pool.__module__}.{pool.__qualname__}._init_kv_copy_and_warmup"

    def init(self) -> None:
        STOOD_IN_CALLS[counted] = STOOD_IN_CALLS.get(counted, 0) + 1
        self._kv_copy_config = None

    pool._init_kv_copy_and_warmup = init


class _PlaceholderStream:
    """A CUDA stream on a machine without CUDA: created, never used."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __getattr__(self, name: str):
        raise KernelUnavailable(f"torch.cuda.Stream.{name}: there is no CUDA stream on CPU")


def placeholder_cuda_streams() -> None:
    """Let `torch.cuda.Stream()` be created without CUDA (_PlaceholderStream)."""
    if not torch.cuda.is_available():
        torch.cuda.Stream = _PlaceholderStream


def install() -> None:
    if not _LIBRARIES:
        lib = torch.library.Library("torchvision", "DEF")
        lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _LIBRARIES.append(lib)
        kernels = torch.library.Library("sgl_kernel", "FRAGMENT")
        kernels.define("fused_sigmoid_mul_cpu(Tensor(a!) x, Tensor gate) -> ()")
        kernels.define("fused_sigmoid_gating_delta_rule_update_cpu(Tensor x) -> Tensor")
        kernels.define("fused_gdn_gating_cpu(Tensor x) -> Tensor")
        _LIBRARIES.append(kernels)
    if not any(isinstance(f, _PlaceholderFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PlaceholderFinder("sgl_kernel"))
    if not torch.cuda.is_available():
        torch.cuda.synchronize = lambda device=None: None
