import { MemoryStore } from "../../src/store/memory-store.js";
import { describeCommitBasis } from "./commit-basis.contract.js";
import { describeStateStore } from "./state-store.contract.js";

// Two handles on one MemoryStore are two replicas in one process: the same object.
describeStateStore("MemoryStore", async (limits) => {
  const store = new MemoryStore(limits);
  return { store, replica: async () => store };
});

describeCommitBasis("MemoryStore", async (limits) => {
  const store = new MemoryStore(limits);
  return { store, replica: async () => store };
});
