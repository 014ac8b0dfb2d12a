#!/usr/bin/env node
// The CLI runs TypeScript directly through tsx, so the checkout needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
