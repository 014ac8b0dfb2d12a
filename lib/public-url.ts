import { z } from 'zod';

/**
 * The address people and programs reach this instance at (`https://stacks.corp.example`): every
 * generated link and configuration uses it. http(s) only, no query or fragment; a trailing slash is dropped.
 */
export const publicUrlSchema = z
  .string()
  .trim()
  .max(2000)
  .url('an http(s) URL such as https://stacks.example.com')
  .refine((v) => {
    if (!URL.canParse(v)) return false;
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.search && !u.hash && !u.username && !u.password;
  }, 'an http(s) URL without query, fragment or credentials, such as https://stacks.example.com')
  .transform((v) => v.replace(/\/+$/, ''));
