import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers the scheduling priority of the calling thread only (nice 19), for the worker threads of
 * background work (learning ranking models, embedding snippets): on a box whose cores serve
 * questions, the kernel then gives them the time serving leaves. Linux keeps a nice value per
 * thread, and `/proc/thread-self` names this thread's id; threads it starts later (ONNX Runtime's
 * pool) inherit it. Elsewhere nothing changes: the work then competes as any thread does.
 */
export function lowerThreadPriority(): void {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) os.setPriority(tid, 19);
  } catch {
    // Not Linux, or not allowed: run at the usual priority.
  }
}
