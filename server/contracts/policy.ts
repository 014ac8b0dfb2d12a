import { z } from 'zod';

/**
 * The teamspace policy as GET /api/v2/policies shows it (without accessibleLibraryCount) and as
 * stored in teamspaces.policy_json. Unset fields take the defaults below, which filter nothing.
 */
export const POLICY_SOURCE_TYPES = ['public_repos', 'private_sources', 'confluence', 'uploaded_files', 'websites', 'llmstxt'] as const;
export type PolicySourceType = (typeof POLICY_SOURCE_TYPES)[number];

const enabled = z.object({ enabled: z.boolean() }).strict();

const libraryRef = z.string().trim().min(1).max(500);

export const policySchema = z
  .object({
    sourceTypes: z.object(Object.fromEntries(POLICY_SOURCE_TYPES.map((t) => [t, enabled])) as Record<PolicySourceType, typeof enabled>).strict(),
    libraryFilters: z
      .object({
        mode: z.enum(['quality', 'select']),
        quality: z
          .object({
            requireVerified: z.boolean(),
            /** null: no minimum. */
            minTrustScore: z.number().min(0).max(10).nullable(),
            /** 0: no age limit; otherwise libraries updated more than this many days ago are hidden. */
            maxAgeDays: z.number().int().min(0).max(36500),
            /** Library IDs (`/owner/repo`) or domain names (`example.com`, also matching subdomains). */
            blockedLibraries: z.array(libraryRef).max(1000),
            /** Library IDs that pass every quality filter (a block included). */
            exceptedLibraries: z.array(libraryRef).max(1000),
            repoFilters: z
              .object({
                /** 0: no minimum. Applies to source-repository libraries. */
                minStars: z.number().int().min(0),
                /** SPDX identifiers, compared case-insensitively; empty: any license. Applies to source-repository libraries. */
                allowedLicenses: z.array(z.string().trim().min(1).max(100)).max(200),
              })
              .strict(),
          })
          .strict(),
        select: z.object({ allowedLibraries: z.array(libraryRef).max(10000) }).strict(),
      })
      .strict(),
  })
  .strict();

export type Policy = z.infer<typeof policySchema>;
