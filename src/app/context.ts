import type { ControlContext } from "../control/context.js";
import type { RuleContext } from "../scenarios/actions.js";
import type { SharedRun } from "./shared/shared-run.js";

/**
 * The whole state of one sandbox, as createSandbox builds it and the pipeline holds it. Each part
 * is handed only its slice: endpoints the EndpointContext, scenario rules the RuleContext, the
 * control plane the ControlContext.
 */
export interface SandboxContext extends ControlContext, RuleContext {
  /** The state shared with other replicas (`--state`); undefined: this sandbox's objects are the state. */
  shared?: SharedRun;
}
