import { describe, expect, it } from "vitest";
import { Outbox } from "../../src/core/outbox.js";

describe("Outbox", () => {
  it("keeps nothing while closed", () => {
    const box = new Outbox<string>();
    box.put("a");
    expect(box.isOpen).toBe(false);
    expect(box.take()).toEqual([]);
  });

  it("keeps what is made once open, the first given first, and takes it once", () => {
    const box = new Outbox<string>();
    box.open(undefined, ["earlier"]);
    box.put("a");
    box.put("b");
    expect(box.take()).toEqual(["earlier", "a", "b"]);
    expect(box.take()).toEqual([]);
  });

  it("hands an item to the sink that takes it, and keeps the ones it leaves, with their context", () => {
    const seen: Array<[string, number]> = [];
    const box = new Outbox<string, number>();
    box.open((item, n) => {
      seen.push([item, n]);
      return n % 2 === 0;
    });
    box.put("even", 2);
    box.put("odd", 3);
    expect(seen).toEqual([
      ["even", 2],
      ["odd", 3],
    ]);
    expect(box.take()).toEqual(["odd"]);
  });

  it("gives taken items back first, after a failed commit; a clear drops everything", () => {
    const box = new Outbox<string>();
    box.open();
    box.put("a");
    const taken = box.take();
    box.put("b");
    box.requeue(taken);
    expect(box.take()).toEqual(["a", "b"]);
    box.put("c");
    box.clear();
    expect(box.take()).toEqual([]);
    // Opening again keeps what it holds and takes the new sink.
    box.put("d");
    box.open(() => true, ["ignored"]);
    box.put("e");
    expect(box.take()).toEqual(["d"]);
  });
});
