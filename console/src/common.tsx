// Pieces every page uses: the error box, ages, conditions.
import { humanDuration } from '../../src/api/duration.js';
import type { ApiError } from './api.js';

export function ErrorBox({ error }: { error: ApiError }) {
  return (
    <div class="error" role="alert">
      <strong>
        {error.code} {error.reason}
      </strong>
      : {error.message}
    </div>
  );
}

export function age(timestamp: string | undefined, now: number): string {
  if (!timestamp) return '<unknown>';
  return humanDuration(Math.max(0, now - Date.parse(timestamp)));
}

export function Loading() {
  return <p class="muted">Loading…</p>;
}
