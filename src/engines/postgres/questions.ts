import type { SQL } from "bun";
import type { Logger } from "../../core/log.ts";

/** A question to every other node (its id, the asking node, the topic, the question). */
export const ASK = "svcd_ask";
/** A part of a node's answer (the question's id, the asking node, the answering node, part i of n, the text). */
export const ANSWER = "svcd_answer";

/** PostgreSQL's notifications carry at most 8,000 bytes: answers go in parts of this many characters. */
const PART_CHARS = 2_000;
/** How long an asking node waits for the others' answers (a node that died is still counted for a moment). */
const WAIT_MS = 1_500;

interface Pending {
  expected: number;
  answers: string[];
  parts: Map<string, string[]>;
  done: (answers: string[]) => void;
}

/**
 * Questions one node asks every other sharing the database, answered by them through PostgreSQL's
 * notifications: what only another node's memory knows (the live counters of a flow-control key
 * its workers deliver). The asker hears every answer that comes within a moment.
 */
export class ClusterQuestions {
  private readonly answerers = new Map<string, (question: string) => Promise<string>>();
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly o: {
      sql: SQL;
      nodeId: string;
      log: Logger;
      /** How many other nodes are live now (the asker waits for as many answers). */
      others: () => number;
    },
  ) {}

  answer(topic: string, fn: (question: string) => Promise<string>): void {
    this.answerers.set(topic, fn);
  }

  /** Resolves with the answers of the other nodes that answered within the wait. */
  async ask(topic: string, question: string): Promise<string[]> {
    const expected = this.o.others();
    if (expected <= 0) return [];
    const id = crypto.randomUUID();
    const answered = new Promise<string[]>((resolve) => {
      this.pending.set(id, { expected, answers: [], parts: new Map(), done: resolve });
    });
    const timer = setTimeout(() => this.finish(id), WAIT_MS);
    try {
      await this.o.sql.notify(ASK, `${id}|${this.o.nodeId}|${topic}|${question}`);
    } catch (error) {
      this.o.log.warn("asking the other nodes failed", { topic, error: String(error) });
      this.finish(id);
    }
    const answers = await answered;
    clearTimeout(timer);
    return answers;
  }

  /** A question another node asked (a payload of ASK). */
  heardQuestion(payload: string): void {
    const [id, from, topic, ...rest] = payload.split("|");
    if (!id || !from || from === this.o.nodeId || !topic) return;
    const answerer = this.answerers.get(topic);
    if (!answerer) return;
    void answerer(rest.join("|"))
      .then(async (text) => {
        const parts = Math.max(1, Math.ceil(text.length / PART_CHARS));
        for (let i = 0; i < parts; i++) {
          const chunk = text.slice(i * PART_CHARS, (i + 1) * PART_CHARS);
          await this.o.sql.notify(ANSWER, `${id}|${from}|${this.o.nodeId}|${i}/${parts}|${chunk}`);
        }
      })
      .catch((error) => this.o.log.warn("answering another node failed", { topic, error: String(error) }));
  }

  /** A part of an answer (a payload of ANSWER): the whole answer counts once its last part came. */
  heardAnswer(payload: string): void {
    const [id, asker, node, part, ...rest] = payload.split("|");
    if (asker !== this.o.nodeId || !id || !node || !part) return;
    const pending = this.pending.get(id);
    if (!pending) return;
    const [i, n] = part.split("/").map(Number) as [number, number];
    const parts = pending.parts.get(node) ?? Array<string>(n);
    parts[i] = rest.join("|");
    pending.parts.set(node, parts);
    if (parts.filter((p) => p !== undefined).length < n) return;
    pending.parts.delete(node);
    pending.answers.push(parts.join(""));
    if (pending.answers.length >= pending.expected) this.finish(id);
  }

  private finish(id: string): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    pending.done(pending.answers);
  }
}
