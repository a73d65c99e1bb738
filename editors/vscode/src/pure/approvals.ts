// What prepareInvocation makes of agentls's tools/prepare answer (pure, so
// it is unit-tested without a window), and the approvals it hands on to the
// invocation that follows: VS Code calls prepareInvocation, shows its
// confirmation, then calls invoke with the same input and nothing else
// linking the two, so an approval is keyed by the tool and its input.

/** tools/prepare's answer (docs/protocol.md). */
export interface PrepareResult {
  decision: "allow" | "ask" | "deny" | "fail";
  title?: string;
  message?: string;
  preview?: Record<string, unknown>;
  reason?: string;
  error?: string;
  token?: string;
}

/** What invoke does with a prepared call: run it with the approval, or answer without running it. */
export type Verdict = { kind: "approved"; token: string } | { kind: "refused"; text: string };

export interface PreparedView {
  /** The confirmation VS Code shows (Markdown message); none: the call runs without asking. */
  confirmation?: { title: string; message: string };
  /** Handed to the invocation that follows; none: the call runs as without tools/prepare. */
  verdict?: Verdict;
}

/** agentls's approval tokens expire after 10 minutes; an older one is not passed on. */
export const APPROVAL_TTL_MS = 10 * 60 * 1000;

/**
 * tools/prepare's answer → what VS Code shows and what invoke does. An
 * answer that is not one of the four decisions, or an "ask" without a
 * token (an approval could not be passed on, so agentls would ask again),
 * shows nothing and leaves the call to agentls's own question.
 */
export function preparedView(tool: string, r: PrepareResult | undefined): PreparedView {
  switch (r?.decision) {
    case "allow":
      return {};
    case "ask":
      if (typeof r.token !== "string" || r.token === "") return {};
      return {
        confirmation: { title: nonEmpty(r.title) ?? `Allow agentls ${tool}?`, message: nonEmpty(r.message) ?? nonEmpty(r.reason) ?? `agentls ${tool} is not read-only.` },
        verdict: { kind: "approved", token: r.token },
      };
    case "deny":
      return { verdict: { kind: "refused", text: nonEmpty(r.reason) ?? nonEmpty(r.error) ?? `agentls refused this ${tool} call (a deny rule or the readOnly mode).` } };
    case "fail":
      return { verdict: { kind: "refused", text: nonEmpty(r.error) ?? nonEmpty(r.reason) ?? `this ${tool} call would fail; nothing was run.` } };
    default:
      return {};
  }
}

function nonEmpty(s: unknown): string | undefined {
  return typeof s === "string" && s.trim() !== "" ? s : undefined;
}

/** JSON with object keys sorted: the same input gives the same key however it was built. */
export function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJSON(x ?? null)).join(",")}]`;
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonicalJSON(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/**
 * Verdicts waiting for their invocation, first in first out per tool and
 * input (two identical calls prepared in a row get one each). A verdict is
 * taken once; one older than APPROVAL_TTL_MS (its confirmation was
 * cancelled and the call never came) is dropped.
 */
export class Approvals {
  private readonly pending = new Map<string, Array<{ verdict: Verdict; at: number }>>();

  constructor(private readonly now: () => number = Date.now) {}

  put(tool: string, input: unknown, verdict: Verdict): void {
    this.expire();
    const key = `${tool}\n${canonicalJSON(input)}`;
    const list = this.pending.get(key) ?? [];
    list.push({ verdict, at: this.now() });
    this.pending.set(key, list);
  }

  take(tool: string, input: unknown): Verdict | undefined {
    this.expire();
    const key = `${tool}\n${canonicalJSON(input)}`;
    const list = this.pending.get(key);
    const first = list?.shift();
    if (list && list.length === 0) this.pending.delete(key);
    return first?.verdict;
  }

  get size(): number {
    let n = 0;
    for (const l of this.pending.values()) n += l.length;
    return n;
  }

  private expire(): void {
    const cutoff = this.now() - APPROVAL_TTL_MS;
    for (const [key, list] of this.pending) {
      const kept = list.filter((e) => e.at > cutoff);
      if (kept.length === 0) this.pending.delete(key);
      else if (kept.length !== list.length) this.pending.set(key, kept);
    }
  }
}
