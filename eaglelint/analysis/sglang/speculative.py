"""What SGLang's speculative worker hands a draft model: its target's hidden states, on the
batch the draft runs on (`forward_batch.spec_info.hidden_states` in every EAGLE, MTP and
NextN draft). The summary records which functions read them (FunctionInfo.reads_spec_hidden)
from `SPEC_HIDDEN_READ`, which analysis/__init__.py gives the Python room as data.
"""

from __future__ import annotations

import re

from ..python.method_facts import HeldRead

SPEC_INFO = "spec_info"  # ForwardBatch.spec_info: what the speculative worker hands the model it runs
# the text of a read of its hidden states (`spec_info.hidden_states`, maybe across lines): a
# module without it has no function reads_held finds, and is not walked for one
SPEC_HIDDEN_TEXT = re.compile(r"spec_info[\s\\]*\.[\s\\]*hidden_states")
SPEC_HIDDEN_BYTES = re.compile(SPEC_HIDDEN_TEXT.pattern.encode())
SPEC_HIDDEN_READ = HeldRead(SPEC_INFO, "hidden_states", SPEC_HIDDEN_TEXT)
