"""What both engines' rooms share: the capture chain's vocabulary (places, writes, broken
links, a served class's chain) and the attribute their wrappers hold a language model in.
It imports the rooms below it (tests/test_architecture.py `ROOMS`), no engine's room."""
