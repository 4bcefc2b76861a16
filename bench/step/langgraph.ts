/**
 * The LangGraph side: a compiled `StateGraph` whose one node loops on itself, one superstep per
 * step, with `@langchain/langgraph-checkpoint-sqlite`'s `SqliteSaver` on its own better-sqlite3
 * connection and `durability: "sync"` (each superstep's checkpoint is committed before the next
 * step starts). The node's work is a no-op besides counting, so what is measured is LangGraph's
 * own per-node persistence: the node's writes (`putWrites`, one transaction) and the checkpoint
 * (`put`, one more).
 *
 * A round runs one graph invocation (one thread) of as many nodes as the round has steps, so the
 * invocation's input checkpoint is spread over the round.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import Database from "better-sqlite3"

const State = Annotation.Root({
  done: Annotation<number>(),
  total: Annotation<number>()
})

/** An open checkpointer on its file, with what it runs and the pragmas its connection reads back. */
export interface LangGraphSide {
  /** Runs one invocation of `steps` nodes to its end, on thread `id`. */
  readonly run: (id: string, steps: number) => Promise<void>
  readonly pragmas: () => Readonly<Record<string, string>>
  readonly close: () => Promise<void>
}

/** Opens the checkpointer on `filename`, with the given connection pragmas (e.g. `synchronous`). */
export const open = (filename: string, pragmas: Readonly<Record<string, string>>): LangGraphSide => {
  const db = new Database(filename)
  for (const [name, value] of Object.entries(pragmas)) db.pragma(`${name} = ${value}`)
  const saver = new SqliteSaver(db)
  const graph = new StateGraph(State)
    .addNode("step", (state) => ({ done: state.done + 1 }))
    .addEdge(START, "step")
    .addConditionalEdges("step", (state) => (state.done >= state.total ? END : "step"))
    .compile({ checkpointer: saver })
  return {
    run: async (id, steps) => {
      const final = await graph.invoke(
        { done: 0, total: steps },
        { configurable: { thread_id: id }, durability: "sync", recursionLimit: steps + 10 }
      )
      if (final.done !== steps) throw new Error(`the graph ran ${final.done} nodes instead of ${steps}`)
    },
    pragmas: () => Object.fromEntries(["journal_mode", "synchronous", "busy_timeout"].map((name) => [name, String(db.pragma(name, { simple: true }))])),
    close: () => {
      db.close()
      return Promise.resolve()
    }
  }
}
