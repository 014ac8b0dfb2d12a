import fs from 'node:fs';
import type { Command } from 'commander';
import { printJson, withDataDir, withServices } from '../context.ts';
import { signLicense } from '../../server/license/license.ts';

export function licenseCommand(program: Command): void {
  const license = program.command('license').description('offline license: status, install, and (vendor) issue');
  withDataDir(license.command('status').description('show the installed license (never its signature)'))
    .option('--json', 'print JSON')
    .action(async (opts: { dataDir?: string; dev?: boolean; json?: boolean }) => {
      await withServices(opts, (s) => {
        const st = s.license.status();
        if (opts.json) return printJson({ state: st.state, message: st.message, signedBy: st.signedBy, license: st.license });
        process.stdout.write(`${st.state}: ${st.message}\n`);
        if (st.license) {
          const l = st.license;
          process.stdout.write(`  licensee:   ${l.licensee}\n  edition:    ${l.edition}\n  issued:     ${l.issuedAt}\n  expires:    ${l.expiresAt}\n  maxMembers: ${l.maxMembers ?? 'unlimited'}\n  features:   ${l.features.join(', ') || '(all)'}\n`);
        }
        if (st.state !== 'valid') process.exitCode = 1;
      });
    });
  withDataDir(license.command('install').description('verify and install a license file').argument('<file>')).action(
    async (file: string, opts: { dataDir?: string; dev?: boolean }) => {
      await withServices(opts, (s) => {
        const st = s.license.install(fs.readFileSync(file, 'utf8'));
        process.stdout.write(`Installed: ${st.message}\n`);
      });
    },
  );
  license
    .command('issue')
    .description('(vendor) sign a license file with an Ed25519 private key')
    .requiredOption('--private-key <file>', 'PEM private key (Ed25519)')
    .requiredOption('--licensee <name>', 'who the license is for')
    .requiredOption('--expires <date>', 'expiry date (YYYY-MM-DD or ISO timestamp)')
    .option('--edition <edition>', 'edition name', 'enterprise')
    .option('--max-members <n>', 'maximum members (default unlimited)')
    .option('--features <list>', 'comma-separated feature names (default: all)', '')
    .requiredOption('--out <file>', 'where to write the license')
    .action((opts: { privateKey: string; licensee: string; expires: string; edition: string; maxMembers?: string; features: string; out: string }) => {
      const expires = new Date(/^\d{4}-\d{2}-\d{2}$/.test(opts.expires) ? `${opts.expires}T23:59:59Z` : opts.expires);
      if (Number.isNaN(expires.getTime())) throw new Error(`--expires is not a date: ${opts.expires}`);
      const maxMembers = opts.maxMembers === undefined ? null : Number(opts.maxMembers);
      if (maxMembers !== null && (!Number.isInteger(maxMembers) || maxMembers < 1)) throw new Error('--max-members must be a positive integer');
      const signed = signLicense(
        {
          licensee: opts.licensee,
          edition: opts.edition,
          issuedAt: new Date().toISOString(),
          expiresAt: expires.toISOString(),
          maxMembers,
          features: opts.features ? opts.features.split(',').map((f) => f.trim()).filter(Boolean) : [],
        },
        fs.readFileSync(opts.privateKey, 'utf8'),
      );
      fs.writeFileSync(opts.out, `${JSON.stringify(signed, null, 2)}\n`);
      process.stdout.write(`Wrote ${opts.out} for ${opts.licensee}, valid until ${expires.toISOString()}.\n`);
    });
}
