import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ApiError } from '../../lib/errors.ts';

/** The signed part of a license file. */
export const licensePayloadSchema = z.object({
  licensee: z.string().min(1),
  edition: z.string().min(1),
  issuedAt: z.string().datetime(),
  expiresAt: z.string().datetime(),
  maxMembers: z.number().int().positive().nullable(),
  features: z.array(z.string()),
});
export type LicensePayload = z.infer<typeof licensePayloadSchema>;

const licenseFileSchema = z.object({ payload: licensePayloadSchema, signature: z.string().min(1), keyId: z.string().optional() });

export type LicenseState = 'valid' | 'missing' | 'expired' | 'invalid';

export interface LicenseStatus {
  state: LicenseState;
  /** Present when the file parsed and its signature verified (also when expired). */
  license: LicensePayload | null;
  /** Which verify key accepted it: 'production' or 'dev'. */
  signedBy: 'production' | 'dev' | null;
  message: string;
}

/** Canonical bytes that are signed: the payload as JSON with sorted keys. */
export function canonicalPayload(payload: LicensePayload): Buffer {
  const sorted = Object.fromEntries(Object.entries(payload).sort(([a], [b]) => a.localeCompare(b)));
  return Buffer.from(JSON.stringify(sorted), 'utf8');
}

export function signLicense(payload: LicensePayload, privateKeyPem: string): { payload: LicensePayload; signature: string } {
  const parsed = licensePayloadSchema.parse(payload);
  const key = crypto.createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the private key must be an Ed25519 key');
  const signature = crypto.sign(null, canonicalPayload(parsed), key).toString('base64');
  return { payload: parsed, signature };
}

export interface VerifyKeys {
  production: string[];
  /** Accepted only in dev mode. */
  dev: string[];
}

/** The verify keys shipped in licenses/: production keys at its top level, the development key in licenses/dev/. */
export function loadVerifyKeys(licensesDir: string): VerifyKeys {
  const pems = (dir: string) =>
    fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.public.pem'))
          .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      : [];
  return { production: pems(licensesDir), dev: pems(path.join(licensesDir, 'dev')) };
}

/** Where the installed license's text is kept: a file (LicenseFile), or the database every node shares (license-shared.ts). */
export interface LicenseHolder {
  /** Where it is, in words, for the "no license" message. */
  readonly where: string;
  /** The installed text, or null. Synchronous: admission asks on every request that needs a license. */
  text(): string | null;
  /** Keeps a verified license's text in place of the installed one. */
  keep(text: string): Promise<void>;
  /** Keeps the text up to date with a change made elsewhere (another node) until the returned stop; absent when text() always reads the source. */
  watch?(onError: (err: unknown) => void): () => void;
}

/** The license in a file: `<dataDir>/license.json`, or STACKS_LICENSE_FILE. */
export class LicenseFile implements LicenseHolder {
  constructor(private readonly file: string) {}

  get where(): string {
    return `at ${this.file}`;
  }

  text(): string | null {
    try {
      return fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      // Only an absent file is "no license"; one that cannot be read says why.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async keep(text: string): Promise<void> {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, this.file);
  }
}

/**
 * Offline license checks. Verify keys come from the licenses/ folder of the installation, never
 * from an environment variable; the development key is honoured only when dev mode is on.
 */
export class LicenseService {
  constructor(
    private readonly keys: VerifyKeys,
    private readonly holder: LicenseHolder,
    private readonly devMode: boolean,
    private readonly now: () => Date = () => new Date(),
  ) {}

  status(): LicenseStatus {
    const text = this.holder.text();
    if (text === null) return { state: 'missing', license: null, signedBy: null, message: `No license installed (expected ${this.holder.where}).` };
    return this.check(text);
  }

  /** Verifies a license text without installing it. */
  check(text: string): LicenseStatus {
    let file: z.infer<typeof licenseFileSchema>;
    try {
      file = licenseFileSchema.parse(JSON.parse(text));
    } catch {
      return {
        state: 'invalid',
        license: null,
        signedBy: null,
        message: 'The license file is not a valid Stacks license (unreadable JSON or missing fields).',
      };
    }
    const signedBy = this.verify(file.payload, file.signature);
    if (!signedBy && this.isDevLicense(file.payload, file.signature)) {
      // Said in a person's words: the usual cause is a quick-start license carried onto a production box.
      return {
        state: 'invalid',
        license: null,
        signedBy: null,
        message:
          'This is a development license: it works only in development mode (stacks serve --dev), never in production. Install the license issued for this installation.',
      };
    }
    if (!signedBy) return { state: 'invalid', license: null, signedBy: null, message: 'The license signature does not verify with the installed verify keys.' };
    if (Date.parse(file.payload.expiresAt) <= this.now().getTime()) {
      return { state: 'expired', license: file.payload, signedBy, message: `The license expired on ${file.payload.expiresAt}.` };
    }
    return {
      state: 'valid',
      license: file.payload,
      signedBy,
      message: `Licensed to ${file.payload.licensee} (${file.payload.edition}) until ${file.payload.expiresAt}.`,
    };
  }

  /** A background task: follows installs made through other nodes (a shared license), until the returned stop. */
  watch(onError: (err: unknown) => void): () => void {
    return this.holder.watch?.(onError) ?? (() => undefined);
  }

  /** Verifies a license and then keeps it in place of the installed one. */
  async install(text: string): Promise<LicenseStatus> {
    const status = this.check(text);
    if (status.state !== 'valid') throw new ApiError(status.state === 'expired' ? 'license_expired' : 'license_invalid', status.message, { status: 400 });
    await this.holder.keep(text);
    return status;
  }

  /** Throws the matching license error unless a valid license is installed (import, crawl and add endpoints). */
  require(feature?: string): LicensePayload {
    const s = this.status();
    if (s.state === 'missing') throw new ApiError('license_required', 'This action needs an offline license. Install one with `stacks license install FILE`.');
    if (s.state === 'expired') throw new ApiError('license_expired', s.message);
    if (s.state === 'invalid' || !s.license) throw new ApiError('license_invalid', s.message);
    if (feature && s.license.features.length > 0 && !s.license.features.includes(feature) && !s.license.features.includes('*')) {
      throw new ApiError('license_invalid', `The installed license does not include the feature "${feature}".`);
    }
    return s.license;
  }

  /** Whether the development key signed it (refused outside dev mode, but worth naming). */
  private isDevLicense(payload: LicensePayload, signature: string): boolean {
    const data = canonicalPayload(payload);
    const sig = Buffer.from(signature, 'base64');
    return this.keys.dev.some((pem) => {
      try {
        return crypto.verify(null, data, crypto.createPublicKey(pem), sig);
      } catch {
        return false;
      }
    });
  }

  private verify(payload: LicensePayload, signature: string): 'production' | 'dev' | null {
    const data = canonicalPayload(payload);
    const sig = Buffer.from(signature, 'base64');
    const ok = (pem: string) => {
      try {
        return crypto.verify(null, data, crypto.createPublicKey(pem), sig);
      } catch {
        return false;
      }
    };
    if (this.keys.production.some(ok)) return 'production';
    if (this.devMode && this.keys.dev.some(ok)) return 'dev';
    return null;
  }
}
