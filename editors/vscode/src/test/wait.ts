// Waiting helpers shared by the extension-host tests.

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls f every 50 ms until it gives a truthy value (returned) or ms pass. */
export async function until<T>(what: string, f: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(50);
  }
}
