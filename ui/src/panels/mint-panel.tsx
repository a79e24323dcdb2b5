import { useRef, useState } from "preact/hooks";
import type { MintAnswer } from "../types";
import { copiedMessage, copyText } from "../components/clipboard";
import type { SessionPanelProps } from "./props";
import "./panel-form.css";
import "./mint-panel.css";

/** The variants of POST /__sandbox/tokens (src/control/mint.ts), each with what makes it bad. */
const VARIANTS: ReadonlyArray<[name: string, what: string]> = [
  ["valid", "a token the sandbox accepts, on the session's clock"],
  ["expired", "exp already past, beyond the leeway"],
  ["not_yet_valid", "nbf and iat in the future"],
  ["wrong_audience", "aud is another API"],
  ["wrong_issuer", "iss is not the sandbox"],
  ["unknown_kid", "signed by the sandbox's key, under a kid it does not publish"],
  ["foreign_key", "signed by a key the sandbox never had"],
  ["alg_none", "unsigned (alg: none)"],
  ["bad_signature", "one character of the signature changed"],
  ["login_token", "the deprecated login's kind of token"],
];

/** The time claims, read as dates on the session clock (they are seconds since 1970). */
const TIME_CLAIMS = ["iat", "nbf", "exp"] as const;

/**
 * Mints a token of any variant for this session's merchant, to paste into a client that checks
 * tokens itself, and says the refusal the sandbox gives it (or that it accepts it).
 */
export function MintPanel({ api, session, announce, fail }: SessionPanelProps) {
  const [variant, setVariant] = useState("valid");
  const [merchantKey, setMerchantKey] = useState(session.merchant.api_key);
  const [minted, setMinted] = useState<MintAnswer | null>(null);
  const tokenBox = useRef<HTMLTextAreaElement>(null);
  const about = VARIANTS.find(([name]) => name === variant)?.[1];

  const mint = async (e: Event) => {
    e.preventDefault();
    try {
      const answer = await api.mint({ merchant: merchantKey, variant });
      setMinted(answer);
      announce(`Minted a ${answer.variant} token: ${verdict(answer)}`);
    } catch (err) {
      fail(err);
    }
  };

  const copy = async () => {
    if (!minted) return;
    const how = await copyText(minted.token, () => {
      tokenBox.current?.focus();
      tokenBox.current?.select();
    });
    announce(copiedMessage("the minted token", how));
  };

  return (
    <section class="card panel-form mint-panel" aria-labelledby="mint-h">
      <h2 id="mint-h">Mint a token</h2>
      <form onSubmit={mint}>
        <div class="pf-field">
          <label for="mint-variant">Variant</label>
          <select id="mint-variant" value={variant} aria-describedby="mint-about" onChange={(e) => setVariant(e.currentTarget.value)}>
            {VARIANTS.map(([name]) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <p id="mint-about" class="muted small">
          {about}
        </p>
        {session.merchants.length > 1 && (
          <div class="pf-field">
            <label for="mint-merchant">Merchant</label>
            <select id="mint-merchant" value={merchantKey} onChange={(e) => setMerchantKey(e.currentTarget.value)}>
              {session.merchants.map((m) => (
                <option key={m.id} value={m.api_key}>
                  {m.id}
                </option>
              ))}
            </select>
          </div>
        )}
        <div class="pf-actions">
          <button type="submit">Mint token</button>
        </div>
      </form>
      {minted && (
        <div class="mint-result">
          <label for="mint-token">Minted token</label>
          <textarea id="mint-token" ref={tokenBox} readOnly rows={4} spellcheck={false} value={minted.token} />
          <div class="pf-actions">
            <button type="button" onClick={() => void copy()}>
              Copy minted token
            </button>
          </div>
          <p class={`mint-verdict ${minted.expected_error ? "is-refused" : "is-accepted"}`}>
            {minted.expected_error ? (
              <>
                The sandbox will answer: <code>{minted.expected_error}</code>
              </>
            ) : (
              "The sandbox will accept it"
            )}
          </p>
          <h3>Decoded header</h3>
          <pre class="mint-json">{JSON.stringify(minted.header, null, 2)}</pre>
          <h3>Decoded claims</h3>
          <pre class="mint-json">{JSON.stringify(minted.claims, null, 2)}</pre>
          <ul class="mint-times small">
            {TIME_CLAIMS.filter((c) => typeof minted.claims[c] === "number").map((c) => (
              <li key={c}>
                <code>{c}</code> {new Date((minted.claims[c] as number) * 1000).toISOString()}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

function verdict(answer: MintAnswer): string {
  return answer.expected_error ? `the sandbox will answer ${answer.expected_error}` : "the sandbox will accept it";
}
