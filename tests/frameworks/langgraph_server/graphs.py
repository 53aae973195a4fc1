"""The scripted graphs of gen_langgraph.py, one per run, for the LangGraph API server that
@ag-ui/langgraph talks to (langgraph.json here). gen.sh runs the server from a scratch copy of
this folder (the in-memory server keeps its threads in `.langgraph_api/` of its working
folder), with RECITE_FRAMEWORKS_DIR naming tests/frameworks/."""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.environ.get("RECITE_FRAMEWORKS_DIR") or str(Path(__file__).resolve().parent.parent))
import gen_langgraph  # noqa: E402

correct = gen_langgraph.graph("correct", checkpointer=False)
wrong_number = gen_langgraph.graph("wrong-number", checkpointer=False)
wrong_base = gen_langgraph.graph("wrong-base", checkpointer=False)
misquote = gen_langgraph.graph("misquote", checkpointer=False)
