import { useEffect, useRef, useState } from "preact/hooks";

/**
 * Asked for when a call answers 401 admin_token_required. The form is named by its heading (a form
 * is a landmark only with a name); the input has the same label, so page-wide getByLabel("Admin
 * token") finds both: look the input up inside the form, or by its textbox role.
 */
export function AdminTokenForm({ onToken }: { onToken: (token: string) => void }) {
  const [value, setValue] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <form
      class="card token-form"
      aria-labelledby="admin-token-h"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) onToken(value.trim());
      }}
    >
      <h2 id="admin-token-h">Admin token</h2>
      <p>This sandbox was started with --admin-token. The token is kept for this tab only (sessionStorage) and sent as X-Admin-Token.</p>
      <div class="field-row">
        <label for="admin-token">Admin token</label>
        <input
          id="admin-token"
          ref={input}
          type="password"
          autocomplete="off"
          required
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <button type="submit">Use token</button>
      </div>
    </form>
  );
}
