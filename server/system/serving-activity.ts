/**
 * Requests in flight, in a SharedArrayBuffer that background worker threads read without a message
 * (the learning worker, server/search/learn-worker.ts): between two steps such a worker waits until
 * no request is in flight, so on a box whose cores are busy answering, background work takes the
 * gaps. Waiting is bounded (waitForQuiet's maxMs), so background work still finishes under
 * constant load.
 */
export class ServingActivity {
  readonly buffer = new SharedArrayBuffer(4);
  private readonly count = new Int32Array(this.buffer);

  begin(): void {
    Atomics.add(this.count, 0, 1);
  }

  end(): void {
    if (Atomics.sub(this.count, 0, 1) === 1) Atomics.notify(this.count, 0);
  }

  get inFlight(): number {
    return Atomics.load(this.count, 0);
  }
}

/** The longest a background step waits for serving to pause: under constant load, background work still moves on. */
export const QUIET_WAIT_MS = 50;

/** In a worker thread (Atomics.wait blocks): waits until no request is in flight, at most `maxMs`. */
export function waitForQuiet(buffer: SharedArrayBuffer, maxMs: number = QUIET_WAIT_MS): void {
  const count = new Int32Array(buffer);
  const deadline = Date.now() + maxMs;
  for (let n = Atomics.load(count, 0); n > 0; n = Atomics.load(count, 0)) {
    const left = deadline - Date.now();
    if (left <= 0) return;
    // Woken when the count drops to 0 (end()), or by the time limit.
    Atomics.wait(count, 0, n, left);
  }
}
