"""Tiny random-weight checkpoints: a Kimi-K2.5 target and an EAGLE-3 draft for it, and
small text models of other families (`--family`) for the capture tier.

Why: the runtime proof needs a model SGLang loads through its own config and
weight-loading code, in seconds, on a CPU or one small GPU, with no download.
Names and shapes follow the published checkpoints (Hugging Face layout:
`language_model.model.layers.N...` for the DeepSeek-V3 text model,
`vision_tower.*`/`mm_projector.proj.N` for the MoonViT tower, and the
SpecForge EAGLE-3 layout `midlayer.*`/`fc`/`d2t`), not SGLang's fused parameter
names, so SGLang's loader does the renaming and fusing just as it does for
the real model. Needs torch and safetensors; never imports SGLang.

    python scripts/runtime/tiny_checkpoints.py OUT_DIR [--layers 5] [--aux-layer-ids 1,2,3]
    python scripts/runtime/tiny_checkpoints.py OUT_DIR --family Glm4ForCausalLM [--layers 4]   # OUT_DIR/target
    python scripts/runtime/tiny_checkpoints.py OUT_DIR --family Glm4ForCausalLM --draft-config 0,2  # + OUT/draft-0,2
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

TEXT = {  # DeepSeek-V3 in miniature: MLA, 1 dense layer then MoE, yarn rope.
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "vocab_size": 256, "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32,
    "num_hidden_layers": 3, "first_k_dense_replace": 1, "moe_layer_freq": 1,
    "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1, "n_group": 1, "topk_group": 1,
    "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "topk_method": "noaux_tc", "norm_topk_prob": True,
    "num_attention_heads": 4, "num_key_value_heads": 4,
    "q_lora_rank": 32, "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16,
    "max_position_embeddings": 512, "rope_theta": 50000.0,
    "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 128,
                     "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0},
    "rms_norm_eps": 1e-6, "hidden_act": "silu", "tie_word_embeddings": False,
    "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "bfloat16",
}
VISION = {  # MoonViT in miniature: one block, 2x2 patch merge into the text width.
    "patch_size": 14, "init_pos_emb_height": 4, "init_pos_emb_width": 4, "init_pos_emb_time": 4,
    "pos_emb_type": "divided_fixed", "num_attention_heads": 2, "num_hidden_layers": 1,
    "hidden_size": 32, "vt_hidden_size": 32, "intermediate_size": 64, "merge_kernel_size": [2, 2],
    "video_attn_type": "spatial_temporal", "merge_type": "sd2_tpool", "mm_projector_type": "patchmerger",
    "mm_hidden_size": 32, "projector_hidden_act": "gelu", "projector_ln_eps": 1e-5, "text_hidden_size": 64,
}
DRAFT = {  # one Llama layer reading the target's aux hidden states (SpecForge's EAGLE-3 layout)
    "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama",
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "hidden_act": "silu",
    "vocab_size": 256, "draft_vocab_size": 256, "max_position_embeddings": 512, "rope_theta": 50000.0,
    "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
    "torch_dtype": "bfloat16",
}


def kimi_k25_config(layers: int = 3) -> dict:
    text = dict(TEXT, num_hidden_layers=layers)
    return {"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
            "text_config": text, "vision_config": dict(VISION), "media_placeholder_token_id": 250,
            "pad_token_id": 0, "torch_dtype": "bfloat16"}


# Text models of other families, Hugging Face names and config keys, all hidden 64 with 4 heads of 16.
FAMILY_BASE = {
    "vocab_size": 256, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "max_position_embeddings": 512, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "hidden_act": "silu",
    "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
    "torch_dtype": "bfloat16",
}
FAMILY_CONFIG = {
    # GLM-4-0414: partial rotary, q/k/v bias, a fused gate_up_proj and a norm after attention and after the MLP
    "Glm4ForCausalLM": {"model_type": "glm4", "partial_rotary_factor": 0.5, "attention_bias": True},
    # Arcee (AFM): Llama attention, an MLP of one up projection with ReLU squared
    "ArceeForCausalLM": {"model_type": "arcee", "hidden_act": "relu2", "attention_bias": False,
                         "mlp_bias": False},
    # Qwen2-MoE: q/k/v bias, every layer sparse (4 experts, top 2). No shared expert: its gate is added by
    # a Triton kernel on CPU without AMX (fused_gate_sigmoid_mul_add); the gate's weight is still built, so written
    "Qwen2MoeForCausalLM": {"model_type": "qwen2_moe", "num_experts": 4, "num_experts_per_tok": 2,
                            "moe_intermediate_size": 32, "shared_expert_intermediate_size": 0,
                            "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": False},
    # Beam: dense MLPs only (the config's own schedule), three sliding RoPE layers then a full NoPE one, gated
    # attention with q/k norms, sandwich norms around attention and MLP
    "BeamForCausalLM": {"model_type": "beam", "sliding_window": 64, "final_logit_softcapping": 30.0},
    # MiMo-7B: a Qwen2 decoder (q/k/v bias) and one MTP layer, which SGLang's loader skips. The published
    # config's MiMoConfig is Qwen2Config under another model_type, read through remote code; "qwen2" gives
    # transformers' own class for the same keys (SGLang picks the model class by `architectures`)
    "MiMoForCausalLM": {"model_type": "qwen2", "num_nextn_predict_layers": 1},
    # Laguna (Laguna-XS.2): three sliding-window layers then a full one, q/k norms, a per-head softplus gate on
    # attention, a dense first layer then MoE (4 experts, top 2, sigmoid routing with a correction bias, one
    # shared expert)
    "LagunaForCausalLM": {"model_type": "laguna", "gating": "per-head", "num_experts": 4,
                          "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                          "shared_expert_intermediate_size": 32, "moe_router_score_func": "sigmoid",
                          "sliding_window": 64},
    # Muse Glimmer: three sliding layers then a full NoPE one, parameter-free q/k norms and token-embedding norm,
    # norms after attention and after the MLP (published as offsets from 1, which SGLang's loader adds), logits
    # scaled and soft-capped. No attention output gate: on CPU it runs sgl_kernel's fused_sigmoid_mul_cpu
    "MuseGlimmerForCausalLM": {"model_type": "muse_glimmer", "sliding_window": 64, "post_norm_eps": 1e-8,
                               "use_qk_norm": True, "use_attn_output_gate": False, "qk_scale_factor": 4.0,
                               "rope_is_neox_style": False, "normalize_tok_embeddings": True,
                               "output_multiplier": 0.25, "output_soft_cap_temp": 20.0},
    # GraniteMoeHybrid as Granite 4.0 Micro publishes it: attention layers only (no Mamba layer, so SGLang does not
    # treat it as a hybrid model), RoPE, no experts, a shared MLP; embedding, attention, residual and logit scaling
    "GraniteMoeHybridForCausalLM": {"model_type": "granitemoehybrid", "position_embedding_type": "rope",
                                    "num_local_experts": 0, "num_experts_per_tok": 0, "shared_intermediate_size": 128,
                                    "embedding_multiplier": 12.0, "attention_multiplier": 0.0625,
                                    "residual_multiplier": 0.22, "logits_scaling": 8.0,
                                    # unused without Mamba layers, but checked: heads x head width = 2 x hidden
                                    "mamba_expand": 2, "mamba_d_head": 16, "mamba_n_heads": 8},
    # Qwen2-VL: a Qwen2 decoder (q/k/v bias) with multimodal RoPE (3 position sections, summing to half the head
    # width) and a one-block vision tower of width 32 (patch 14, 2 frames, 2x2 merge into the text width),
    # published names (`visual.*`, `model.*`, `lm_head`)
    "Qwen2VLForConditionalGeneration": {
        "model_type": "qwen2_vl", "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
        "vision_start_token_id": 250, "vision_end_token_id": 251, "image_token_id": 252, "video_token_id": 253,
        "vision_config": {"depth": 1, "embed_dim": 32, "mlp_ratio": 2, "num_heads": 2, "in_chans": 3,
                          "hidden_size": 64, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2}},
    # Qwen3-VL (SGLang 0.5.9's run): the text model (Qwen3: q/k norms, no bias; interleaved multimodal RoPE) under
    # `text_config`, and a one-block vision tower of width 32 (patch 16, 2x2 merge into the text width, one deepstack
    # merger), published names (`model.language_model.*`, `model.visual.*`, `lm_head`)
    "Qwen3VLForConditionalGeneration": {
        "model_type": "qwen3_vl", "text_config": {"model_type": "qwen3_vl_text", "rope_scaling": {
            "rope_type": "default", "mrope_section": [2, 3, 3], "mrope_interleaved": True}},
        "vision_start_token_id": 250, "vision_end_token_id": 251, "image_token_id": 252, "video_token_id": 253,
        "vision_config": {"model_type": "qwen3_vl", "depth": 1, "hidden_size": 32, "intermediate_size": 64,
                          "num_heads": 2, "in_channels": 3, "patch_size": 16, "spatial_merge_size": 2,
                          "temporal_patch_size": 2, "out_hidden_size": 64, "num_position_embeddings": 16,
                          "deepstack_visual_indexes": [0], "hidden_act": "gelu_pytorch_tanh"}},
    # Nanbeige (loop model): a Llama-shaped stack run twice per token (num_loops 2), the residual folded in and the
    # final norm applied between the loops (skip_loop_final_norm false, the config's default)
    "NanbeigeForCausalLM": {"model_type": "nanbeige", "num_loops": 2, "skip_loop_final_norm": False},
    # LFM2: short-convolution and attention layers (conv, attention, conv, attention; LFM2-350M begins conv, conv,
    # attention), q/k norms, a SwiGLU MLP (w1, w3, w2) whose width is taken as given, the final norm named
    # embedding_norm
    "Lfm2ForCausalLM": {"model_type": "lfm2", "norm_eps": 1e-5, "conv_bias": False, "conv_L_cache": 3,
                        "block_auto_adjust_ff_dim": False, "block_multiple_of": 16},
    # LFM2-MoE: LFM2's blocks, a dense first layer (num_dense_layers) then sparse MLPs (4 experts, top 2, sigmoid
    # routing with an expert bias)
    "Lfm2MoeForCausalLM": {"model_type": "lfm2_moe", "norm_eps": 1e-5, "conv_bias": False, "conv_L_cache": 3,
                           "num_dense_layers": 1, "num_experts": 4, "num_experts_per_tok": 2,
                           "moe_intermediate_size": 32, "use_expert_bias": True, "norm_topk_prob": True,
                           "routed_scaling_factor": 1.0},
    # Nemotron-H: one block per layer, by hybrid_override_pattern (M Mamba-2, - MLP, * attention): a Mamba-2 layer,
    # an MLP, attention, an MLP; ReLU squared MLPs, 4 Mamba heads of 16 in one group (published twice, as mamba_n_groups
    # and n_groups, which SGLang's cache sizing reads), state 16, convolution 4
    "NemotronHForCausalLM": {"model_type": "nemotron_h", "hybrid_override_pattern": "M-*-", "mlp_hidden_act": "relu2",
                             "layer_norm_epsilon": 1e-5, "mamba_num_heads": 4, "mamba_head_dim": 16,
                             "mamba_n_groups": 1, "n_groups": 1, "ssm_state_size": 16, "mamba_d_conv": 4,
                             "mamba_expand": 1, "mamba_conv_bias": True, "use_bias": False, "mlp_bias": False,
                             "attention_bias": False},
    # Kimi-Linear: Kimi delta attention (KDA) in three layers of each four, NoPE MLA in the fourth (the config counts
    # layers from 1), as published; dense MLPs (the published model's experts do not touch the capture path)
    "KimiLinearForCausalLM": {"model_type": "kimi_linear", "num_key_value_heads": 4,
                              "linear_attn_config": {"head_dim": 16, "num_heads": 4, "short_conv_kernel_size": 4},
                              "q_lora_rank": None, "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
                              "v_head_dim": 16, "mla_use_nope": True},
    # Kimi-K3's text model on the standard residual path (no attention-residual bank: attn_res_block_size unset), the
    # same blocks and names as Kimi-Linear
    "KimiK3LinearForCausalLM": {"model_type": "kimi_linear", "num_key_value_heads": 4,
                              "linear_attn_config": {"head_dim": 16, "num_heads": 4, "short_conv_kernel_size": 4},
                              "q_lora_rank": None, "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
                              "v_head_dim": 16, "mla_use_nope": True},
    # Ling-V3 (BailingMoeV3): KDA in layers 0 to 2 and MLA in layer 3 (layer_group_size 4, as published 3 : 1 in
    # groups), q/k norms, dense MLPs (num_experts 1; the published experts do not touch the capture path)
    "BailingMoeV3ForCausalLM": {"model_type": "bailing_hybrid", "num_key_value_heads": 4, "num_experts": 1,
                                "layer_group_size": 4, "short_conv_kernel_size": 4, "kv_lora_rank": 32,
                                "q_lora_rank": None, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16,
                                "use_mla_nope": False, "use_qk_norm": True},
    # MiMo-V2-Flash's shape in miniature: a full-attention layer then sliding-window ones (hybrid_layer_pattern,
    # 1 = sliding), with their own head counts, no attention sink bias, dense MLPs (moe_layer_freq all 0; the router's
    # keys are still read). The published config is read through remote code; "qwen2" gives transformers' own class,
    # which keeps the other keys as they are (SGLang picks the class by `architectures`)
    "MiMoV2ForCausalLM": {"model_type": "qwen2", "layernorm_epsilon": 1e-6,
                          "swa_num_attention_heads": 4, "swa_num_key_value_heads": 2, "swa_head_dim": 16,
                          "sliding_window_size": 64, "attention_bias": False,
                          "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                          "scoring_func": "sigmoid", "topk_method": "noaux_tc", "n_group": 1, "topk_group": 1,
                          "norm_topk_prob": True},
}


def family_config(family: str, layers: int = 4) -> dict:
    config = dict(FAMILY_BASE, **FAMILY_CONFIG[family], architectures=[family], num_hidden_layers=layers)
    if family == "LagunaForCausalLM":
        # SGLang sizes Laguna's KV pools as hybrid SWA, which needs a sliding layer
        config |= {"layer_types": ["sliding_attention"] * (layers - 1) + ["full_attention"],
                   "mlp_layer_types": ["dense"] + ["sparse"] * (layers - 1)}
    if family == "MuseGlimmerForCausalLM":
        config |= {"layer_types": ["sliding_attention"] * (layers - 1) + ["full_attention"],
                   "no_rope_layers": [1] * (layers - 1) + [0]}  # 1: the layer applies RoPE
    if family == "GraniteMoeHybridForCausalLM":
        config |= {"layer_types": ["attention"] * layers}
    if family == "BeamForCausalLM":
        config |= {"layer_types": ["sliding_attention"] * (layers - 1) + ["full_attention"],
                   "mlp_layer_types": ["dense"] * layers}
    if family in ("KimiLinearForCausalLM", "KimiK3LinearForCausalLM"):
        full = [i for i in range(1, layers + 1) if i % 4 == 0]
        config["linear_attn_config"] = dict(config["linear_attn_config"], full_attn_layers=full,
                                            kda_layers=[i for i in range(1, layers + 1) if i not in full])
    if family == "MiMoV2ForCausalLM":
        config |= {"hybrid_layer_pattern": [0] + [1] * (layers - 1), "moe_layer_freq": [0] * layers}
    if family in ("Lfm2ForCausalLM", "Lfm2MoeForCausalLM"):
        config |= {"layer_types": ["conv", "full_attention"] * (layers // 2) + ["conv"] * (layers % 2)}
    if family in NESTED_TEXT:  # the text model's keys under text_config, as published
        text = {k: config.pop(k) for k in FAMILY_BASE if k not in ("tie_word_embeddings", "torch_dtype")}
        config["text_config"] = dict(text, num_hidden_layers=layers, **config["text_config"])
    return config


NESTED_TEXT = ("Qwen3VLForConditionalGeneration",)


def family_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor of a family's checkpoint, by its published name."""
    family = config["architectures"][0]
    if family in OWN_LAYOUT:
        return OWN_LAYOUT[family](config)
    if family in NESTED_TEXT:
        return qwen3_vl_shapes(config)
    h, hd = config["hidden_size"], config["head_dim"]
    q, kv = config["num_attention_heads"] * hd, config["num_key_value_heads"] * hd
    out: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (config["vocab_size"], h),
                                       "model.norm.weight": (h,), "lm_head.weight": (config["vocab_size"], h)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out |= {p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
                p + "self_attn.q_proj.weight": (q, h), p + "self_attn.k_proj.weight": (kv, h),
                p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.o_proj.weight": (h, q)}
        if family in QKV_BIAS:
            out |= {p + "self_attn.q_proj.bias": (q,), p + "self_attn.k_proj.bias": (kv,),
                    p + "self_attn.v_proj.bias": (kv,)}
        out |= LAYER_SHAPES[family](p, config, i)
    if family == "MiMoForCausalLM":  # the MTP block; SGLang's MiMoForCausalLM.load_weights skips "mtp_layers"
        out |= {"model.mtp_layers.0.token_layernorm.weight": (h,), "model.mtp_layers.0.input_proj.weight": (h, 2 * h)}
    if "vision_config" in config:
        out |= qwen2_vision_shapes(config["vision_config"])
    return out


QKV_BIAS = ("Glm4ForCausalLM", "Qwen2MoeForCausalLM", "MiMoForCausalLM", "Qwen2VLForConditionalGeneration")


def _glm4_layer(p: str, c: dict, i: int) -> dict[str, tuple[int, ...]]:
    h, inner = c["hidden_size"], c["intermediate_size"]
    return {p + "post_self_attn_layernorm.weight": (h,), p + "post_mlp_layernorm.weight": (h,),
            p + "mlp.gate_up_proj.weight": (2 * inner, h), p + "mlp.down_proj.weight": (h, inner)}


def _arcee_layer(p: str, c: dict, i: int) -> dict[str, tuple[int, ...]]:
    h, inner = c["hidden_size"], c["intermediate_size"]
    return {p + "mlp.up_proj.weight": (inner, h), p + "mlp.down_proj.weight": (h, inner)}


def _dense_layer(p: str, c: dict, i: int) -> dict[str, tuple[int, ...]]:
    return _mlp(p + "mlp.", c["hidden_size"], c["intermediate_size"])


def _laguna_layer(p: str, c: dict, i: int) -> dict[str, tuple[int, ...]]:
    h, hd = c["hidden_size"], c["head_dim"]
    out = {p + "self_attn.g_proj.weight": (c["num_attention_heads"], h),
           p + "self_attn.q_norm.weight": (hd,), p + "self_attn.k_norm.weight": (hd,)}
    if c["mlp_layer_types"][i] == "dense":
        return out | _dense_layer(p, c, i)
    # the router's correction bias sits under the experts, as published
    out |= {p + "mlp.gate.weight": (c["num_experts"], h),
            p + "mlp.experts.e_score_correction_bias": (c["num_experts"],)}
    for e in range(c["num_experts"]):
        out |= _mlp(f"{p}mlp.experts.{e}.", h, c["moe_intermediate_size"])
    return out | _mlp(p + "mlp.shared_expert.", h, c["shared_expert_intermediate_size"])


def _muse_glimmer_layer(p: str, c: dict, i: int) -> dict[str, tuple[int, ...]]:
    # post_attention_layernorm is the norm before the MLP; post_attn_norm the one after attention
    h = c["hidden_size"]
    return {p + "post_attn_norm.weight": (h,), p + "post_ffn_norm.weight": (h,)} | _dense_layer(p, c, i)


def _granite_layer(p: str, c: dict, i: int) -> dict[str, tuple[int, ...]]:
    # the shared MLP's gate and up projections are one matrix
    h, inner = c["hidden_size"], c["shared_intermediate_size"]
    return {p + "shared_mlp.input_linear.weight": (2 * inner, h), p + "shared_mlp.output_linear.weight": (h, inner)}


def _beam_layer(p: str, c: dict, i: int) -> dict[str, tuple[int, ...]]:
    h, hd = c["hidden_size"], c["head_dim"]
    return {p + "self_attn.gate_proj.weight": (c["num_attention_heads"] * hd, h),
            p + "self_attn.gate_bias": (c["num_attention_heads"],),
            p + "self_attn.q_norm.weight": (hd,), p + "self_attn.k_norm.weight": (hd,),
            p + "pre_feedforward_layernorm.weight": (h,), p + "post_feedforward_layernorm.weight": (h,),
            } | _dense_layer(p, c, i)


def _qwen2_moe_layer(p: str, c: dict, i: int) -> dict[str, tuple[int, ...]]:
    h = c["hidden_size"]
    out = {p + "mlp.gate.weight": (c["num_experts"], h), p + "mlp.shared_expert_gate.weight": (1, h)}
    for e in range(c["num_experts"]):
        out |= _mlp(f"{p}mlp.experts.{e}.", h, c["moe_intermediate_size"])
    if c["shared_expert_intermediate_size"]:
        out |= _mlp(p + "mlp.shared_expert.", h, c["shared_expert_intermediate_size"])
    return out


# Each family's tensors of layer i beyond the common ones (norms, q/k/v/o, the q/k/v bias of QKV_BIAS)
LAYER_SHAPES = {
    "Glm4ForCausalLM": _glm4_layer, "ArceeForCausalLM": _arcee_layer, "Qwen2MoeForCausalLM": _qwen2_moe_layer,
    "BeamForCausalLM": _beam_layer, "MiMoForCausalLM": _dense_layer, "LagunaForCausalLM": _laguna_layer,
    "MuseGlimmerForCausalLM": _muse_glimmer_layer, "GraniteMoeHybridForCausalLM": _granite_layer,
    "Qwen2VLForConditionalGeneration": _dense_layer, "NanbeigeForCausalLM": _dense_layer,
    "MiMoV2ForCausalLM": _dense_layer,
}


def lfm2_shapes(c: dict) -> dict[str, tuple[int, ...]]:
    """LFM2's own names: operator_norm and ffn_norm around each block, out_proj and q/k layernorms in attention,
    the convolution's in_proj (B, C, x), depthwise kernel and out_proj, feed_forward.w1/w3/w2; for LFM2-MoE, past
    num_dense_layers, the router (feed_forward.gate, expert_bias) and each expert's w1/w3/w2."""
    h, hd, inner = c["hidden_size"], c["head_dim"], c["intermediate_size"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    out: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (c["vocab_size"], h),
                                       "model.embedding_norm.weight": (h,), "lm_head.weight": (c["vocab_size"], h)}
    for i, kind in enumerate(c["layer_types"]):
        p = f"model.layers.{i}."
        out |= {p + "operator_norm.weight": (h,), p + "ffn_norm.weight": (h,)}
        experts = [f"experts.{e}." for e in range(c["num_experts"])] if i >= c.get("num_dense_layers", i + 1) else []
        if experts:
            out |= {p + "feed_forward.gate.weight": (c["num_experts"], h),
                    p + "feed_forward.expert_bias": (c["num_experts"],)}
        for expert in experts or [""]:
            width = c["moe_intermediate_size"] if experts else inner
            f = p + "feed_forward." + expert
            out |= {f + "w1.weight": (width, h), f + "w3.weight": (width, h), f + "w2.weight": (h, width)}
        if kind == "full_attention":
            out |= {p + "self_attn.q_proj.weight": (q, h), p + "self_attn.k_proj.weight": (kv, h),
                    p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.out_proj.weight": (h, q),
                    p + "self_attn.q_layernorm.weight": (hd,), p + "self_attn.k_layernorm.weight": (hd,)}
        else:
            out |= {p + "conv.in_proj.weight": (3 * h, h), p + "conv.out_proj.weight": (h, h),
                    p + "conv.conv.weight": (h, 1, c["conv_L_cache"])}
    return out


def nemotron_h_shapes(c: dict) -> dict[str, tuple[int, ...]]:
    """Nemotron-H's names under `backbone.`: one norm and one mixer per layer, the block the pattern names."""
    h, hd, inner = c["hidden_size"], c["head_dim"], c["intermediate_size"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    heads, mamba = c["mamba_num_heads"], c["mamba_num_heads"] * c["mamba_head_dim"]
    conv = mamba + 2 * c["mamba_n_groups"] * c["ssm_state_size"]  # x, B and C go through the convolution
    out: dict[str, tuple[int, ...]] = {"backbone.embeddings.weight": (c["vocab_size"], h),
                                       "backbone.norm_f.weight": (h,), "lm_head.weight": (c["vocab_size"], h)}
    for i, kind in enumerate(c["hybrid_override_pattern"]):
        p = f"backbone.layers.{i}."
        out[p + "norm.weight"] = (h,)
        if kind == "M":  # in_proj: z, x, B, C and dt
            out |= {p + "mixer.in_proj.weight": (mamba + conv + heads, h),
                    p + "mixer.conv1d.weight": (conv, 1, c["mamba_d_conv"]), p + "mixer.conv1d.bias": (conv,),
                    p + "mixer.A_log": (heads,), p + "mixer.D": (heads,), p + "mixer.dt_bias": (heads,),
                    p + "mixer.norm.weight": (mamba,), p + "mixer.out_proj.weight": (h, mamba)}
        elif kind == "*":
            out |= {p + "mixer.q_proj.weight": (q, h), p + "mixer.k_proj.weight": (kv, h),
                    p + "mixer.v_proj.weight": (kv, h), p + "mixer.o_proj.weight": (h, q)}
        else:
            out |= {p + "mixer.up_proj.weight": (inner, h), p + "mixer.down_proj.weight": (h, inner)}
    return out


def kimi_linear_shapes(c: dict) -> dict[str, tuple[int, ...]]:
    """Kimi-Linear's names: KDA (`_kda`) in the config's kda_layers (counted from 1), MLA without q LoRA elsewhere."""
    h, lin = c["hidden_size"], c["linear_attn_config"]
    out: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (c["vocab_size"], h),
                                       "model.norm.weight": (h,), "lm_head.weight": (c["vocab_size"], h)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out |= {p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,)}
        out |= _mlp(p + "mlp.", h, c["intermediate_size"])
        if i + 1 in lin["kda_layers"]:
            out |= _kda(p + "self_attn.", h, lin["num_heads"], lin["head_dim"], lin["short_conv_kernel_size"],
                        (1, 1, lin["num_heads"], 1))
        else:
            out |= _mla_without_q_lora(p + "self_attn.", c)
    return out


def bailing_moe_v3_shapes(c: dict) -> dict[str, tuple[int, ...]]:
    """Ling-V3's names (BailingMoeV3): `word_embeddings`, each layer's mixer under `attention.`, KDA in every layer but
    the last of each layer_group_size, MLA without q LoRA there; A_log published as one value per head."""
    h, heads, hd = c["hidden_size"], c["num_attention_heads"], c["head_dim"]
    out: dict[str, tuple[int, ...]] = {"model.word_embeddings.weight": (c["vocab_size"], h),
                                       "model.norm.weight": (h,), "lm_head.weight": (c["vocab_size"], h)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out |= {p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,)}
        out |= _mlp(p + "mlp.", h, c["intermediate_size"])
        if (i + 1) % c["layer_group_size"]:
            out |= _kda(p + "attention.", h, heads, hd, c["short_conv_kernel_size"], (heads,))
        else:
            out |= _mla_without_q_lora(p + "attention.", c)
    return out


def _kda(a: str, h: int, heads: int, hd: int, kernel: int, a_log: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """Kimi delta attention: q/k/v projections and short convolutions, beta (b_proj), the forget and output gates
    as low-rank pairs (f_a/f_b, g_a/g_b), A_log, dt_bias, the gated output norm."""
    proj = heads * hd
    return {a + "q_proj.weight": (proj, h), a + "k_proj.weight": (proj, h), a + "v_proj.weight": (proj, h),
            a + "q_conv1d.weight": (proj, 1, kernel), a + "k_conv1d.weight": (proj, 1, kernel),
            a + "v_conv1d.weight": (proj, 1, kernel), a + "b_proj.weight": (heads, h),
            a + "f_a_proj.weight": (hd, h), a + "f_b_proj.weight": (proj, hd),
            a + "g_a_proj.weight": (hd, h), a + "g_b_proj.weight": (proj, hd),
            a + "A_log": a_log, a + "dt_bias": (proj,), a + "o_norm.weight": (hd,), a + "o_proj.weight": (h, proj)}


def _mla_without_q_lora(a: str, c: dict) -> dict[str, tuple[int, ...]]:
    h, heads, nope, rope, rank = (c["hidden_size"], c["num_attention_heads"], c["qk_nope_head_dim"],
                                  c["qk_rope_head_dim"], c["kv_lora_rank"])
    return {a + "q_proj.weight": (heads * (nope + rope), h), a + "kv_a_proj_with_mqa.weight": (rank + rope, h),
            a + "kv_a_layernorm.weight": (rank,), a + "kv_b_proj.weight": (heads * (nope + c["v_head_dim"]), rank),
            a + "o_proj.weight": (h, heads * c["v_head_dim"])}


# Families whose checkpoints name their blocks in their own way: every tensor, by its published name
OWN_LAYOUT = {"Lfm2ForCausalLM": lfm2_shapes, "Lfm2MoeForCausalLM": lfm2_shapes,
              "NemotronHForCausalLM": nemotron_h_shapes,
              "KimiLinearForCausalLM": kimi_linear_shapes, "KimiK3LinearForCausalLM": kimi_linear_shapes,
              "BailingMoeV3ForCausalLM": bailing_moe_v3_shapes}


def qwen2_vision_shapes(v: dict) -> dict[str, tuple[int, ...]]:
    """Qwen2-VL's vision tower (`visual.*`): patch embedding, blocks, and the patch merger into the text width."""
    e, ps, inner, merged = v["embed_dim"], v["patch_size"], v["embed_dim"] * v["mlp_ratio"], v["embed_dim"] * 4
    out = {"visual.patch_embed.proj.weight": (e, v["in_chans"], v["temporal_patch_size"], ps, ps),
           "visual.merger.ln_q.weight": (e,), "visual.merger.ln_q.bias": (e,),
           "visual.merger.mlp.0.weight": (merged, merged), "visual.merger.mlp.0.bias": (merged,),
           "visual.merger.mlp.2.weight": (v["hidden_size"], merged), "visual.merger.mlp.2.bias": (v["hidden_size"],)}
    for i in range(v["depth"]):
        p = f"visual.blocks.{i}."
        out |= {p + "norm1.weight": (e,), p + "norm1.bias": (e,), p + "norm2.weight": (e,), p + "norm2.bias": (e,),
                p + "attn.qkv.weight": (3 * e, e), p + "attn.qkv.bias": (3 * e,),
                p + "attn.proj.weight": (e, e), p + "attn.proj.bias": (e,),
                p + "mlp.fc1.weight": (inner, e), p + "mlp.fc1.bias": (inner,),
                p + "mlp.fc2.weight": (e, inner), p + "mlp.fc2.bias": (e,)}
    return out


def qwen3_vl_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Qwen3-VL: a Qwen3 text model under `model.language_model.` (q/k norms, no bias) and its vision tower under
    `model.visual.` (patch embedding with bias, learned position embedding, blocks, merger, deepstack mergers)."""
    c, v = config["text_config"], config["vision_config"]
    h, hd = c["hidden_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    t = "model.language_model."
    out: dict[str, tuple[int, ...]] = {t + "embed_tokens.weight": (c["vocab_size"], h), t + "norm.weight": (h,),
                                       "lm_head.weight": (c["vocab_size"], h)}
    for i in range(c["num_hidden_layers"]):
        p = f"{t}layers.{i}."
        out |= {p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
                p + "self_attn.q_proj.weight": (q, h), p + "self_attn.k_proj.weight": (kv, h),
                p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.o_proj.weight": (h, q),
                p + "self_attn.q_norm.weight": (hd,), p + "self_attn.k_norm.weight": (hd,)}
        out |= _mlp(p + "mlp.", h, c["intermediate_size"])
    e, ps, inner = v["hidden_size"], v["patch_size"], v["intermediate_size"]
    merged = e * v["spatial_merge_size"] ** 2
    a = "model.visual."
    out |= {a + "patch_embed.proj.weight": (e, v["in_channels"], v["temporal_patch_size"], ps, ps),
            a + "patch_embed.proj.bias": (e,), a + "pos_embed.weight": (v["num_position_embeddings"], e)}
    for i in range(v["depth"]):
        p = f"{a}blocks.{i}."
        out |= {p + "norm1.weight": (e,), p + "norm1.bias": (e,), p + "norm2.weight": (e,), p + "norm2.bias": (e,),
                p + "attn.qkv.weight": (3 * e, e), p + "attn.qkv.bias": (3 * e,),
                p + "attn.proj.weight": (e, e), p + "attn.proj.bias": (e,),
                p + "mlp.linear_fc1.weight": (inner, e), p + "mlp.linear_fc1.bias": (inner,),
                p + "mlp.linear_fc2.weight": (e, inner), p + "mlp.linear_fc2.bias": (e,)}
    mergers = {"merger.": e, **{f"deepstack_merger_list.{i}.": merged
                                for i in range(len(v["deepstack_visual_indexes"]))}}
    for p, norm in mergers.items():  # the deepstack mergers norm after the 2x2 shuffle, the main one before
        out |= {a + p + "norm.weight": (norm,), a + p + "norm.bias": (norm,),
                a + p + "linear_fc1.weight": (merged, merged), a + p + "linear_fc1.bias": (merged,),
                a + p + "linear_fc2.weight": (v["out_hidden_size"], merged),
                a + p + "linear_fc2.bias": (v["out_hidden_size"],)}
    return out


def eagle3_config(aux_layer_ids: list[int]) -> dict:
    return dict(DRAFT, eagle_config={"use_aux_hidden_state": True,
                                     "eagle_aux_hidden_state_layer_ids": list(aux_layer_ids)})


def kimi_k25_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor of the checkpoint, by its published name."""
    t, v = config["text_config"], config["vision_config"]
    h, heads = t["hidden_size"], t["num_attention_heads"]
    qk = t["qk_nope_head_dim"] + t["qk_rope_head_dim"]
    out: dict[str, tuple[int, ...]] = {"language_model.model.embed_tokens.weight": (t["vocab_size"], h),
                                       "language_model.model.norm.weight": (h,),
                                       "language_model.lm_head.weight": (t["vocab_size"], h)}
    for i in range(t["num_hidden_layers"]):
        p = f"language_model.model.layers.{i}."
        out |= {p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
                p + "self_attn.q_a_proj.weight": (t["q_lora_rank"], h),
                p + "self_attn.q_a_layernorm.weight": (t["q_lora_rank"],),
                p + "self_attn.q_b_proj.weight": (heads * qk, t["q_lora_rank"]),
                p + "self_attn.kv_a_proj_with_mqa.weight": (t["kv_lora_rank"] + t["qk_rope_head_dim"], h),
                p + "self_attn.kv_a_layernorm.weight": (t["kv_lora_rank"],),
                p + "self_attn.kv_b_proj.weight": (heads * (t["qk_nope_head_dim"] + t["v_head_dim"]),
                                                   t["kv_lora_rank"]),
                p + "self_attn.o_proj.weight": (h, heads * t["v_head_dim"])}
        if i < t["first_k_dense_replace"]:
            out |= _mlp(p + "mlp.", h, t["intermediate_size"])
            continue
        out |= {p + "mlp.gate.weight": (t["n_routed_experts"], h),
                p + "mlp.gate.e_score_correction_bias": (t["n_routed_experts"],)}
        for e in range(t["n_routed_experts"]):
            out |= _mlp(f"{p}mlp.experts.{e}.", h, t["moe_intermediate_size"])
        out |= _mlp(p + "mlp.shared_experts.", h, t["moe_intermediate_size"] * t["n_shared_experts"])
    vh, ps = v["hidden_size"], v["patch_size"]
    out |= {"vision_tower.patch_embed.proj.weight": (vh, 3, ps, ps), "vision_tower.patch_embed.proj.bias": (vh,),
            "vision_tower.patch_embed.pos_emb.weight": (v["init_pos_emb_height"], v["init_pos_emb_width"], vh),
            "vision_tower.encoder.final_layernorm.weight": (vh,), "vision_tower.encoder.final_layernorm.bias": (vh,)}
    for i in range(v["num_hidden_layers"]):
        p = f"vision_tower.encoder.blocks.{i}."
        out |= {p + "norm0.weight": (vh,), p + "norm0.bias": (vh,), p + "norm1.weight": (vh,),
                p + "norm1.bias": (vh,), p + "wqkv.weight": (3 * vh, vh), p + "wqkv.bias": (3 * vh,),
                p + "wo.weight": (vh, vh), p + "wo.bias": (vh,),
                p + "mlp.fc0.weight": (v["intermediate_size"], vh), p + "mlp.fc0.bias": (v["intermediate_size"],),
                p + "mlp.fc1.weight": (vh, v["intermediate_size"]), p + "mlp.fc1.bias": (vh,)}
    merged = vh * v["merge_kernel_size"][0] * v["merge_kernel_size"][1]
    out |= {"mm_projector.pre_norm.weight": (vh,), "mm_projector.pre_norm.bias": (vh,),
            "mm_projector.proj.0.weight": (merged, merged), "mm_projector.proj.0.bias": (merged,),
            "mm_projector.proj.2.weight": (v["text_hidden_size"], merged),
            "mm_projector.proj.2.bias": (v["text_hidden_size"],)}
    return out


def eagle3_shapes(config: dict, target_hidden: int) -> dict[str, tuple[int, ...]]:
    h, hd = config["hidden_size"], config["head_dim"]
    q, kv = config["num_attention_heads"] * hd, config["num_key_value_heads"] * hd
    aux = len(config["eagle_config"]["eagle_aux_hidden_state_layer_ids"])  # 0.5.9 wants 3; later, len(ids)
    p = "midlayer."
    out = {"fc.weight": (h, aux * target_hidden), "norm.weight": (h,),
           "lm_head.weight": (config["draft_vocab_size"], h), "d2t": (config["draft_vocab_size"],),
           p + "input_layernorm.weight": (h,), p + "hidden_norm.weight": (h,),
           p + "post_attention_layernorm.weight": (h,),
           # the layer reads [embedding ; hidden state], hence 2h inputs
           p + "self_attn.q_proj.weight": (q, 2 * h), p + "self_attn.k_proj.weight": (kv, 2 * h),
           p + "self_attn.v_proj.weight": (kv, 2 * h), p + "self_attn.o_proj.weight": (h, q)}
    return out | _mlp(p + "mlp.", h, config["intermediate_size"])


def _mlp(prefix: str, hidden: int, inner: int) -> dict[str, tuple[int, ...]]:
    return {prefix + "gate_proj.weight": (inner, hidden), prefix + "up_proj.weight": (inner, hidden),
            prefix + "down_proj.weight": (hidden, inner)}


def random_tensors(shapes: dict[str, tuple[int, ...]], seed: int) -> dict:
    """Small random weights; norms near 1 so activations stay finite through the layers."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in shapes.items():
        if name == "d2t":  # draft id -> target id offsets; zero: the draft vocabulary is the target's
            out[name] = torch.zeros(shape, dtype=torch.int64)
        elif name.endswith("e_score_correction_bias"):
            out[name] = torch.zeros(shape, dtype=torch.float32)
        elif "norm" in name.rsplit(".", 2)[-2] and name.endswith("weight"):
            out[name] = (1 + 0.02 * torch.randn(shape, generator=gen)).to(torch.bfloat16)
        else:
            out[name] = (0.02 * torch.randn(shape, generator=gen)).to(torch.bfloat16)
    return out


def write(directory: Path, config: dict, tensors: dict) -> Path:
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(directory / "model.safetensors"),
              metadata={"format": "pt"})
    return directory


def write_kimi_k25(directory: Path, layers: int = 3, seed: int = 0) -> Path:
    config = kimi_k25_config(layers)
    return write(directory, config, random_tensors(kimi_k25_shapes(config), seed))


def write_eagle3(directory: Path, aux_layer_ids: list[int], target_hidden: int = TEXT["hidden_size"],
                 seed: int = 1) -> Path:
    config = eagle3_config(aux_layer_ids)
    return write(directory, config, random_tensors(eagle3_shapes(config, target_hidden), seed))


def write_family(directory: Path, family: str, layers: int = 4, seed: int = 0) -> Path:
    config = family_config(family, layers)
    return write(directory, config, random_tensors(family_shapes(config), seed))


def write_draft_config(directory: Path, aux_layer_ids: list[int] | None) -> Path:
    """An EAGLE-3 draft's config.json alone, naming `aux_layer_ids` (None: an eagle_config that names no ids).
    SGLang 0.5.9's ModelRunner reads the target's aux ids from it and builds nothing else of the draft."""
    config = eagle3_config(aux_layer_ids or [])
    if aux_layer_ids is None:
        del config["eagle_config"]["eagle_aux_hidden_state_layer_ids"]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--layers", type=int, default=5)
    # First id 1: SGLang then captures layers 2, 3, 4 under both of its conventions (ids + 1 in
    # 0.5.9; in later releases + 1 only when the first id is 1).
    parser.add_argument("--aux-layer-ids", default="1,2,3")
    parser.add_argument("--family", choices=sorted(FAMILY_CONFIG),
                        help="write only a target of this family (OUT/target), no draft")
    parser.add_argument("--draft-config", metavar="IDS|none",
                        help="with --family: also an EAGLE-3 draft's config.json alone (OUT/draft-IDS), naming "
                             "these aux ids, or none")
    args = parser.parse_args()
    if args.family:
        print(write_family(args.out / "target", args.family, args.layers))
        if args.draft_config:
            ids = None if args.draft_config == "none" else [int(x) for x in args.draft_config.split(",")]
            print(write_draft_config(args.out / f"draft-{args.draft_config}", ids))
        return
    target = write_kimi_k25(args.out / "target", args.layers)
    draft = write_eagle3(args.out / "draft", [int(x) for x in args.aux_layer_ids.split(",")])
    print(target)
    print(draft)


if __name__ == "__main__":
    main()
