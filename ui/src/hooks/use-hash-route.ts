import { useEffect, useState } from "preact/hooks";
import { parseRoute, type Route } from "../route";

/** The route the location hash names, following back/forward; an in-page hash (`#row-…`) keeps the view. */
export function useHashRoute(): Route {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash) ?? { name: "home" });
  useEffect(() => {
    const onChange = () => {
      const next = parseRoute(location.hash);
      if (next) setRoute(next);
    };
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
