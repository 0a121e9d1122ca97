"""Python's semantics over the scanned project: summaries, what an expression denotes across
modules (resolution, MRO, constructor bindings), whether a class has a member, the normal
path of a forward, and which files to read. It names no engine: an engine's calls reach it
through the call hooks (calls.py), an engine's facts as data (analysis/__init__.py). It
imports the syntax and store rooms below it (tests/test_architecture.py `ROOMS`)."""
