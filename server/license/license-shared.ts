import type { LicenseHolder } from './license.ts';

/** The instance setting that holds the license's text when the state is in PostgreSQL. */
export const LICENSE_SETTING = 'license';

/** What SharedLicense needs of the settings store (either backend's). */
export interface LicenseSettings {
  get(name: string): Promise<string | null> | string | null;
  set(name: string, value: string | null, now: string): Promise<void> | void;
  claim(name: string, value: string, now: string): Promise<string> | string;
}

/**
 * The license in the database, for nodes sharing one (PostgreSQL): installed through any node, seen
 * by all. Admission reads the license synchronously on every request, so each node holds the text in
 * memory: read at open, at once after an install through this node, and, while a server runs
 * (watch, a background task), every `refreshMs`, so that another node's install is seen within that.
 */
export class SharedLicense implements LicenseHolder {
  readonly where = 'in the database; install one through any node with `stacks license install FILE`';
  private current: string | null = null;
  /** Counts installs through this node: a read begun before one must not put the old text back. */
  private installs = 0;

  private constructor(
    private readonly settings: LicenseSettings,
    private readonly refreshMs: number,
  ) {}

  /**
   * Read once before it answers. `adopt`: a license this node found on its disk (a data dir moved from
   * SQLite), stored for every node when the database has none yet; the first node's wins.
   */
  static async open(settings: LicenseSettings, options: { refreshMs?: number; adopt?: string | null } = {}): Promise<SharedLicense> {
    const held = new SharedLicense(settings, options.refreshMs ?? 10_000);
    if (options.adopt) await settings.claim(LICENSE_SETTING, options.adopt, new Date().toISOString());
    await held.refresh();
    return held;
  }

  /** Reads the stored text again. */
  async refresh(): Promise<void> {
    const before = this.installs;
    const text = await this.settings.get(LICENSE_SETTING);
    if (this.installs === before) this.current = text;
  }

  text(): string | null {
    return this.current;
  }

  async keep(text: string): Promise<void> {
    await this.settings.set(LICENSE_SETTING, text, new Date().toISOString());
    this.installs++;
    this.current = text;
  }

  watch(onError: (err: unknown) => void): () => void {
    const timer = setInterval(() => void this.refresh().catch(onError), this.refreshMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}
