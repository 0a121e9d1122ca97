"""vLLM's engine knowledge: its model registry and loaders (vllm_registry.py), the capture
chain from `set_aux_hidden_state_layers`, and the EAGLE-3 marker protocol. It imports the
rooms below it, never analysis/sglang (tests/test_architecture.py `ROOMS`)."""
