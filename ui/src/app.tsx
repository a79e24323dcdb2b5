import { useCallback, useMemo, useState } from "preact/hooks";
import { ControlApi, ControlError } from "./api";
import { AdminTokenForm } from "./components/admin-token-form";
import { failureText } from "./failure-text";
import { useHashRoute } from "./hooks/use-hash-route";
import type { Page } from "./page";
import { HomeView } from "./views/home";
import { SessionView } from "./views/session-view";

interface Status {
  text: string;
  kind: "ok" | "error";
}

/** The shell around every view: header, admin token, status line, and the view the hash names. */
export function App() {
  const api = useMemo(() => new ControlApi(), []);
  const route = useHashRoute();
  const [status, setStatus] = useState<Status>({ text: "", kind: "ok" });
  const [askToken, setAskToken] = useState(false);
  const [hasToken, setHasToken] = useState(api.adminToken !== null);
  // Bumped when a token is given: the views remount and load again with it.
  const [generation, setGeneration] = useState(0);

  const announce = useCallback((text: string, kind: "ok" | "error" = "ok") => setStatus({ text, kind }), []);
  const fail = useCallback(
    (error: unknown) => {
      if (error instanceof ControlError && error.needsAdminToken) setAskToken(true);
      announce(failureText(error), "error");
    },
    [announce],
  );
  const page: Page = useMemo(() => ({ api, announce, fail }), [api, announce, fail]);

  const takeToken = (token: string) => {
    api.setAdminToken(token);
    setHasToken(true);
    setAskToken(false);
    setGeneration((g) => g + 1);
    announce("Admin token stored for this tab");
  };
  const forgetToken = () => {
    api.setAdminToken(null);
    setHasToken(false);
    announce("Admin token forgotten");
  };

  return (
    <>
      <header class="top">
        <a class="brand" href="#/">
          merchant-sandbox
        </a>
        <span class="tagline">QA dashboard</span>
        {hasToken && (
          <button type="button" class="quiet" onClick={forgetToken}>
            Forget admin token
          </button>
        )}
      </header>
      <main>
        {askToken && <AdminTokenForm onToken={takeToken} />}
        {route.name === "home" ? (
          <HomeView key={`home-${generation}`} page={page} />
        ) : (
          <SessionView key={`${route.id}-${generation}`} id={route.id} page={page} />
        )}
      </main>
      {/* Always in the page, empty or not: a live region added later is not read by every screen reader.
          Its ✓/⚠ sign is CSS in an aria-hidden span, so the element's text and name are the message alone. */}
      {/* biome-ignore lint/a11y/useSemanticElements: <output> means a form's computed result; this is the page's message line. */}
      <p role="status" aria-live="polite" class={`status status-${status.kind}${status.text ? "" : " status-empty"}`}>
        <span class="status-sign" aria-hidden="true" />
        {status.text}
      </p>
    </>
  );
}
