import { randomUUID } from "node:crypto";
import { openRedisStore } from "../../src/store/redis-store.js";
import { redisServerPerFile } from "../support/redis-server.js";
import { describeCommitBasis } from "./commit-basis.contract.js";
import { describeStateStore } from "./state-store.contract.js";

const server = redisServerPerFile();

// Each test's store under a prefix of its own on the file's redis-server: an empty store, whatever ran before.
describeStateStore("RedisStore", async (limits) => {
  const options = { ...limits, prefix: `t-${randomUUID()}:` };
  const store = await openRedisStore(server().url, options);
  return { store, replica: () => openRedisStore(server().url, options) };
});

describeCommitBasis("RedisStore", async (limits) => {
  const options = { ...limits, prefix: `t-${randomUUID()}:` };
  const store = await openRedisStore(server().url, options);
  return { store, replica: () => openRedisStore(server().url, options) };
});
