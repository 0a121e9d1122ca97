"""SGLang's engine knowledge: its model registry (served.py), the capture chain from
`set_eagle3_layers_to_capture` to the logits processor, owner classes, drafts, checkpoint
picks, and the facts of its speculative batch. It imports the rooms below it, never
analysis/vllm (tests/test_architecture.py `ROOMS`)."""
