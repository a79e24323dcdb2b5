import { useEffect, useRef, useState } from "preact/hooks";

/**
 * Asked for when a call answers 401 admin_token_required. Named by `title`, not aria-label, so the
 * label "Admin token" belongs to the input alone (a test's getByLabel finds one element).
 */
export function AdminTokenForm({ onToken }: { onToken: (token: string) => void }) {
  const [value, setValue] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <form
      class="card token-form"
      title="Admin token"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) onToken(value.trim());
      }}
    >
      <h2>Admin token needed</h2>
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
