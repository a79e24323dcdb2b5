import { jsonResponse } from "../../core/context.js";
import { InvalidRequest } from "../../core/errors.js";
import { echo } from "../../core/echo.js";
import type { ControlEndpoint } from "../context.js";

/**
 * GET /__sandbox/scenarios: the scenarios a session can be created from (POST /__sandbox/sessions
 * takes their names), the loaded ones first, each with its description and what its rules script.
 */
export const scenariosEndpoint: ControlEndpoint = async (request, ctx) => {
  const [unknown] = new URLSearchParams(request.query).keys();
  if (unknown !== undefined) {
    throw new InvalidRequest(
      "unknown_parameter",
      `GET /__sandbox/scenarios does not take '${echo(unknown, 40)}'; it takes no parameters (it lists every scenario: filter the answer).`,
    );
  }
  return jsonResponse(200, { scenarios: await ctx.scenarioCatalogue.list(ctx.scenarios.loaded) });
};
