// XXH64 (seed 0), to check a reconstructed old text against the server's
// `oldHash` ("xxh64:<16 hex>") before offering it as the diff's left side.

const M = (1n << 64n) - 1n;
const P1 = 11400714785074694791n;
const P2 = 14029467366897019727n;
const P3 = 1609587929392839161n;
const P4 = 9650029242287828579n;
const P5 = 2870177450012600261n;

const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M;
const round = (acc: bigint, lane: bigint): bigint => (rotl((acc + lane * P2) & M, 31n) * P1) & M;
const merge = (acc: bigint, val: bigint): bigint => (((acc ^ round(0n, val)) * P1) & M) + P4 & M;

export function xxh64(data: Uint8Array): bigint {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const len = data.length;
  let i = 0;
  let h: bigint;
  if (len >= 32) {
    let v1 = (P1 + P2) & M, v2 = P2, v3 = 0n, v4 = (M + 1n - P1) & M;
    while (i + 32 <= len) {
      v1 = round(v1, view.getBigUint64(i, true));
      v2 = round(v2, view.getBigUint64(i + 8, true));
      v3 = round(v3, view.getBigUint64(i + 16, true));
      v4 = round(v4, view.getBigUint64(i + 24, true));
      i += 32;
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M;
    h = merge(h, v1); h = merge(h, v2); h = merge(h, v3); h = merge(h, v4);
  } else {
    h = P5;
  }
  h = (h + BigInt(len)) & M;
  while (i + 8 <= len) {
    h ^= round(0n, view.getBigUint64(i, true));
    h = (rotl(h, 27n) * P1 + P4) & M;
    i += 8;
  }
  if (i + 4 <= len) {
    h ^= (BigInt(view.getUint32(i, true)) * P1) & M;
    h = (rotl(h, 23n) * P2 + P3) & M;
    i += 4;
  }
  while (i < len) {
    h ^= (BigInt(data[i]) * P5) & M;
    h = (rotl(h, 11n) * P1) & M;
    i++;
  }
  h ^= h >> 33n; h = (h * P2) & M;
  h ^= h >> 29n; h = (h * P3) & M;
  h ^= h >> 32n;
  return h;
}

/** The server's hash notation for text encoded as UTF-8. */
export function textHash(text: string): string {
  return "xxh64:" + xxh64(new TextEncoder().encode(text)).toString(16).padStart(16, "0");
}
