import type { Stores } from '../store/stores.ts';
import { publicUrlSchema } from '../../lib/public-url.ts';
import { ApiError } from '../../lib/errors.ts';

/** Where the public address comes from: the environment (wins), the console's setting, or neither. */
export type PublicUrlSource = 'env' | 'console' | null;

export interface PublicUrlView {
  /** The address every generated link and MCP configuration uses; null: none set (the console falls back to its own address). */
  publicUrl: string | null;
  source: PublicUrlSource;
  /** The console's stored value, also while STACKS_PUBLIC_URL overrides it. */
  consoleValue: string | null;
}

const SETTING = 'public_url';

/**
 * The instance's public address. STACKS_PUBLIC_URL wins over the console's setting: an operator
 * who pinned the address in the deployment (compose file, unit) means it, and the console must
 * not be able to point every link elsewhere. Without either, links fall back to the address the
 * request or the listener had (what worked before), and the console says so.
 */
export class PublicUrl {
  constructor(
    private readonly fromEnv: string | undefined,
    private readonly settings: Stores['settings'],
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  async view(): Promise<PublicUrlView> {
    const stored = await this.settings.get(SETTING);
    if (this.fromEnv) return { publicUrl: this.fromEnv, source: 'env', consoleValue: stored };
    return { publicUrl: stored, source: stored ? 'console' : null, consoleValue: stored };
  }

  /** The address to build links on, or null. */
  async current(): Promise<string | null> {
    return (await this.view()).publicUrl;
  }

  /** Sets (null: clears) the console's value; validated like STACKS_PUBLIC_URL. */
  async set(value: string | null): Promise<PublicUrlView> {
    if (value !== null) {
      const parsed = publicUrlSchema.safeParse(value);
      if (!parsed.success) throw new ApiError('validation_error', `publicUrl: ${parsed.error.issues[0]!.message}.`);
      value = parsed.data;
    }
    await this.settings.set(SETTING, value, this.now());
    return this.view();
  }

  /** `base` + `path` with the public address when there is one, else with `fallback` (e.g. the listener's address). */
  async link(path: string, fallback: string): Promise<string> {
    return `${(await this.current()) ?? fallback.replace(/\/+$/, '')}${path}`;
  }
}
