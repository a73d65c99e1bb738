// The server's content hash (edit details' oldHash/newHash: "sha256:" and
// 64 hex digits), to check a reconstructed old text before offering it as
// the diff's left side. node:crypto hashes natively.
import { createHash } from "node:crypto";

/** The server's hash notation for text encoded as UTF-8. */
export function textHash(text: string): string {
  return "sha256:" + createHash("sha256").update(text, "utf8").digest("hex");
}
