import { randomBytes } from "node:crypto";
import type { Faker } from "@faker-js/faker";

/**
 * Token ids (`jti`). Each is the seeded faker's next UUID, so every other seeded id (payment ids,
 * checkout URLs) stays where the seed puts it, mixed with 16 random bytes drawn once per sandbox:
 * a sandbox restarted with the same seed, or a replica with the same seed, never hands out a jti
 * an earlier one did, while one sandbox's ids stay distinct (the mix is one-to-one). `seededOnly`
 * leaves the mix out: the bare seeded sequence, the same run to run (snapshots of whole tokens).
 */
export function tokenIdSource(faker: Faker, seededOnly: boolean): () => string {
  const mask = seededOnly ? undefined : randomBytes(16);
  return () => {
    const seeded = faker.string.uuid();
    if (mask === undefined) return seeded;
    const bytes = Buffer.from(seeded.replace(/-/g, ""), "hex");
    for (let i = 0; i < 16; i++) bytes[i] = bytes[i]! ^ mask[i]!;
    // Still a version 4 UUID of the RFC 4122 variant, as the seeded one was.
    bytes[6] = (bytes[6]! & 0x0f) | 0x40;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    const hex = bytes.toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}
