import type { Migration } from './migration.ts';
import { m001 } from './001-initial.ts';
import { m004 } from './004-search-vocab.ts';
import { m005 } from './005-crawl.ts';
import { m007 } from './007-teamspaces.ts';
import { m008 } from './008-job-owner.ts';
import { m009 } from './009-search-index.ts';
import { m010 } from './010-ranking.ts';
import { m011 } from './011-key-scope.ts';
import { m012 } from './012-library-visibility.ts';
import { m013 } from './013-audit-log.ts';
import { m014 } from './014-users.ts';
import { m015 } from './015-git-sources.ts';
import { m016 } from './016-declared-sources.ts';
import { m017 } from './017-model-stamp.ts';
import { m018 } from './018-version-vectors.ts';
import { m019 } from './019-git-host-owner.ts';
import { m020 } from './020-audit-redact.ts';
import { m021 } from './021-invitations-settings.ts';
import { m022 } from './022-job-error-code.ts';
import { m023 } from './023-schedule-runs.ts';

export type { Migration };

/** Append new migrations here; never edit one that has shipped. */
export const migrations: Migration[] = [m001, m004, m005, m007, m008, m009, m010, m011, m012, m013, m014, m015, m016, m017, m018, m019, m020, m021, m022, m023];
