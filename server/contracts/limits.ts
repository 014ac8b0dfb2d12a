/** Size, count and time limits for source inputs (the spec's upload limits among them), shared by the contracts, the services and the jobs. */
export const LIMITS = {
  openApiUploadBytes: 10 * 1024 * 1024,
  openApiUrlBytes: 20 * 1024 * 1024,
  llmsTxtBytes: 10 * 1024 * 1024,
  llmsLinkBytes: 5 * 1024 * 1024,
  llmsMaxLinks: 200,
  llmsLinkConcurrency: 4,
  llmsTotalMs: 15 * 60_000,
  files: 50,
  fileBytes: 50 * 1024 * 1024,
  totalBytes: 200 * 1024 * 1024,
} as const;
