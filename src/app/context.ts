import type { ControlContext } from "../control/context.js";
import type { RuleContext } from "../scenarios/actions.js";

/**
 * The whole state of one sandbox, as createSandbox builds it and the pipeline holds it. Each part
 * is handed only its slice: endpoints the EndpointContext, scenario rules the RuleContext, the
 * control plane the ControlContext.
 */
export interface SandboxContext extends ControlContext, RuleContext {}
