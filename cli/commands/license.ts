import fs from 'node:fs';
import type { Command } from 'commander';
import { intArg, output, withDataDir, withJson, withServices, type CommonOpts } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import { LOCAL, signLicense } from '../../server/operations/index.ts';

export function licenseCommand(program: Command): void {
  const license = program.command('license').description('offline license: status, install, and (vendor) issue');
  withDataDir(license.command('status').description('show the installed license (never its signature); exit 1 when it is not valid')).action(
    async (opts: CommonOpts) => {
      await withServices(opts, async (s) => {
        const st = await s.operations.license({}, LOCAL);
        output(opts, { state: st.state, message: st.message, signedBy: st.signedBy, license: st.license }, () => {
          const l = st.license;
          return [
            `${st.state}: ${st.message}`,
            ...(l
              ? [
                  `  licensee:   ${l.licensee}`,
                  `  edition:    ${l.edition}`,
                  `  issued:     ${l.issuedAt}`,
                  `  expires:    ${l.expiresAt}`,
                  `  maxMembers: ${l.maxMembers ?? 'unlimited'}`,
                  `  features:   ${l.features.join(', ') || '(all)'}`,
                ]
              : []),
          ];
        });
        if (st.state !== 'valid') process.exitCode = 1;
      });
    },
  );
  withDataDir(license.command('install').description('verify and install a license file').argument('<file>')).action(async (file: string, opts: CommonOpts) => {
    await withServices(
      opts,
      async (s) => {
        // The same operation as POST /api/license.
        const st = await s.operations.licenseInstall({ license: fs.readFileSync(file, 'utf8') }, LOCAL);
        output(opts, { state: st.state, message: st.message, signedBy: st.signedBy, license: st.license }, () => `Installed: ${st.message}`);
      },
      { create: true },
    );
  });
  withJson(license.command('issue'))
    .description('(vendor) sign a license file with an Ed25519 private key')
    .requiredOption('--private-key <file>', 'PEM private key (Ed25519)')
    .requiredOption('--licensee <name>', 'who the license is for')
    .requiredOption('--expires <date>', 'expiry date (YYYY-MM-DD or ISO timestamp)')
    .option('--edition <edition>', 'edition name', 'enterprise')
    .option('--max-members <n>', 'maximum members (default unlimited)', intArg(1))
    .option('--features <list>', 'comma-separated feature names (default: all)', '')
    .requiredOption('--out <file>', 'where to write the license')
    .action(
      (opts: {
        json?: boolean;
        privateKey: string;
        licensee: string;
        expires: string;
        edition: string;
        maxMembers?: number;
        features: string;
        out: string;
      }) => {
        const expires = new Date(/^\d{4}-\d{2}-\d{2}$/.test(opts.expires) ? `${opts.expires}T23:59:59Z` : opts.expires);
        if (Number.isNaN(expires.getTime())) throw new ApiError('validation_error', `--expires is not a date: ${opts.expires}`);
        const maxMembers = opts.maxMembers ?? null;
        const signed = signLicense(
          {
            licensee: opts.licensee,
            edition: opts.edition,
            issuedAt: new Date().toISOString(),
            expiresAt: expires.toISOString(),
            maxMembers,
            features: opts.features
              ? opts.features
                  .split(',')
                  .map((f) => f.trim())
                  .filter(Boolean)
              : [],
          },
          fs.readFileSync(opts.privateKey, 'utf8'),
        );
        fs.writeFileSync(opts.out, `${JSON.stringify(signed, null, 2)}\n`);
        output(opts, { out: opts.out, license: signed.payload }, () => `Wrote ${opts.out} for ${opts.licensee}, valid until ${expires.toISOString()}.`);
      },
    );
}
