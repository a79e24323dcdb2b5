/** How long a store call may take before the request is answered 503 (the store's command timeout). */
export const STATE_TIMEOUT_MS = 2000;
