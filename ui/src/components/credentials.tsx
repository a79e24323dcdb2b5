import { useRef, useState } from "preact/hooks";
import { envBlock, maskedEnvBlock } from "../format";
import type { Page } from "../page";
import type { SessionAnswer } from "../types";
import { copiedMessage, copyText, selectContents } from "./clipboard";
import "./credentials.css";

interface Field {
  label: string;
  value: string;
  secret: boolean;
}

/**
 * The first merchant's credentials, to paste into the app under test. Secrets are masked (password
 * fields) until "Show secrets"; the copy buttons always copy the real value.
 */
export function Credentials({ page, session }: { page: Page; session: SessionAnswer }) {
  const [show, setShow] = useState(false);
  const env = useRef<HTMLPreElement>(null);
  const m = session.merchants[0] ?? session.merchant;
  const fields: Field[] = [
    { label: "base_url", value: session.base_url, secret: false },
    { label: "api_key", value: m.api_key, secret: false },
    { label: "api_secret", value: m.api_secret, secret: true },
    { label: "payment_token", value: m.payment_token, secret: true },
    { label: "login email", value: m.login.email, secret: false },
    { label: "login password", value: m.login.password, secret: true },
  ];

  const copy = async (what: string, text: string, select: () => void) => {
    page.announce(copiedMessage(what, await copyText(text, select)));
  };
  // A masked field cannot be selected for copying by hand: the fallback shows the secrets first.
  const selectField = (id: string) => () => {
    setShow(true);
    requestAnimationFrame(() => (document.getElementById(id) as HTMLInputElement | null)?.select());
  };

  return (
    <section class="card credentials" aria-labelledby="cred-h">
      <div class="card-head">
        <h2 id="cred-h">Credentials</h2>
        <button type="button" aria-pressed={show} onClick={() => setShow(!show)}>
          <span class="press-mark" aria-hidden="true" />
          Show secrets
        </button>
      </div>
      <p class="muted small">
        Merchant <code>{m.id}</code>
        {session.merchants.length > 1 ? ` (first of ${session.merchants.length})` : ""}
      </p>
      <div class="cred-grid">
        {fields.map((f) => {
          const id = `cred-${f.label.replace(/\W+/g, "-")}`;
          return (
            <div class="cred" key={f.label}>
              <label for={id}>{f.label}</label>
              {f.secret && !show ? (
                <input id={id} readOnly type="password" value={f.value} autocomplete="off" />
              ) : (
                <input id={id} readOnly type="text" value={f.value} autocomplete="off" spellcheck={false} />
              )}
              <button type="button" onClick={() => copy(f.label, f.value, selectField(id))}>
                Copy {f.label}
              </button>
            </div>
          );
        })}
      </div>
      {/* biome-ignore lint/a11y/useAriaPropsSupportedByRole: the block is named so it can be found (getByLabel) and announced; browsers expose the name. */}
      <pre ref={env} class="env" aria-label=".env block">
        {show ? envBlock(session.base_url, m) : maskedEnvBlock(session.base_url, m)}
      </pre>
      <button
        type="button"
        onClick={() =>
          copy(".env block", envBlock(session.base_url, m), () => {
            setShow(true);
            requestAnimationFrame(() => env.current && selectContents(env.current));
          })
        }
      >
        Copy .env block
      </button>
    </section>
  );
}
