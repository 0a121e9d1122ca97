"""Python runs this at start-up in every process whose sys.path holds this folder: the GPU run's engine children.

Why a sitecustomize: SGLang starts its scheduler (where the draft model runs)
in a fresh interpreter, so a patch made in the launching process would not
reach it; PYTHONPATH does. Installs the draft-input probe, then runs the
sitecustomize.py this one shadows, if the interpreter has one further down
sys.path.
"""

import os
import runpy
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _here)
try:
    import eaglelint_draft_probe

    eaglelint_draft_probe.install()
finally:
    sys.path.remove(_here)

for _entry in sys.path:
    _other = os.path.join(_entry or os.getcwd(), "sitecustomize.py")
    if os.path.abspath(os.path.dirname(_other)) != _here and os.path.isfile(_other):
        runpy.run_path(_other, run_name="sitecustomize")
        break
