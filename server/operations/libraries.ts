import type { LibraryAccessService } from '../teams/library-access.ts';
import { libraryGetOperation, libraryUpdateOperation } from '../contracts/libraries.ts';
import type { binder } from './bind.ts';
import { readerOf } from './search.ts';

export interface LibraryOperationDeps {
  libraries: LibraryAccessService;
}

/** GET and PATCH /api/libraries/{libraryId}, `stacks libraries show|set`. */
export function libraryOperations(bind: ReturnType<typeof binder>, d: LibraryOperationDeps) {
  return {
    libraryGet: bind(libraryGetOperation, (i, p, caller) => d.libraries.view(readerOf(p, caller), i.libraryId)),
    libraryUpdate: bind(libraryUpdateOperation, (i, p, caller) => d.libraries.update(readerOf(p, caller), i.libraryId, i)),
  };
}
