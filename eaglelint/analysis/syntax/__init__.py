"""The lowest room of the analysis: plain Python syntax, one file at a time (reading and
decoding a file, scopes, what makes a class body, what a `__getattr__` forwards,
expressions kept as symbolic references, suppression comments). It knows no engine and
imports no other room (tests/test_architecture.py `ROOMS`)."""
