"""What both engines' wrappers hold their language model in, by convention.

Why in the capture room: it is an engine fact, shared by SGLang's wrappers and vLLM's
(whose EAGLE-3 protocol defaults fall back to it), so it sits below both engines' rooms
and above the Python room, which knows no engine.
"""

# The attribute SGLang's and vLLM's multimodal wrappers hold their language model in: a class
# that assigns it is a wrapper whatever it holds, vLLM's EAGLE-3 protocol defaults fall back
# to it, and a delegation the fix writes forwards to it when a finding names no other. Said
# once, here, where the run driver reads it before it loads any of the analysis.
DEFAULT_HELD_ATTR = "language_model"
DEFAULT_WRAPPER_ATTRS = (DEFAULT_HELD_ATTR,)  # held by this name: a wrapper whatever it holds
