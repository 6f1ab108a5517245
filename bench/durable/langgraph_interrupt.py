"""LangGraph's side of bench/durable/compare-langgraph.sh: N interrupt/resume cycles
with langgraph-checkpoint-sqlite's SqliteSaver on a file (WAL, as pi-tool-store's
SQLite store), the same shape as pi-tool-store's `interrupt_cycles` example: a node
asks for approval (`interrupt`), the run stops and is checkpointed, the approval
resumes it (`Command(resume=True)`) and it finishes.

The graph is compiled once and reused (LangGraph keeps state only in the checkpointer,
so this is what a fresh process would load); each cycle is a new thread id.

Prints one JSON line: {"impl": "langgraph", "cycles", "median_us", "mean_us"}.
"""

import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from typing import TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict):
    to: str
    result: str


def pay(state: State) -> dict:
    approved = interrupt({"tool": "pay", "args": {"to": state["to"]}})
    return {"result": f"paid {state['to']}" if approved else "denied"}


def answer(state: State) -> dict:
    return {"result": state["result"]}


def build(conn: sqlite3.Connection):
    graph = StateGraph(State)
    graph.add_node("pay", pay)
    graph.add_node("answer", answer)
    graph.add_edge(START, "pay")
    graph.add_edge("pay", "answer")
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=SqliteSaver(conn))


def main() -> None:
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(os.path.join(tmp, "lg.db"), check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        graph = build(conn)
        times = []
        for i in range(cycles + 10):
            config = {"configurable": {"thread_id": f"t{i}"}}
            start = time.perf_counter()
            first = graph.invoke({"to": "bob", "result": ""}, config)
            assert "__interrupt__" in first, first
            done = graph.invoke(Command(resume=True), config)
            assert done["result"] == "paid bob", done
            if i >= 10:  # warm-up
                times.append((time.perf_counter() - start) * 1e6)
        conn.close()
    print(json.dumps({
        "impl": "langgraph",
        "cycles": cycles,
        "median_us": round(statistics.median(times), 1),
        "mean_us": round(statistics.mean(times), 1),
    }))


if __name__ == "__main__":
    main()
