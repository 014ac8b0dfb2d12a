import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';
import { startSession } from './session.ts';

/** What these routes use. */
export interface InvitationRouteDeps {
  operations: Pick<Operations, 'invitationCreate' | 'invitationsList' | 'invitationRevoke' | 'invitationPreview' | 'invitationAccept'>;
}

/** Invitations (`/api/invitations`), the link's preview and its acceptance, which signs the invitee in with the session cookie. */
export function mountInvitations(app: Express, s: InvitationRouteDeps): void {
  app.get(
    '/api/invitations',
    route(async (req, res) => res.json(await s.operations.invitationsList(req.query, callerOf(res)))),
  );
  app.post(
    '/api/invitations',
    route(async (req, res) => res.status(201).json(await s.operations.invitationCreate(req.body ?? {}, callerOf(res)))),
  );
  app.post(
    '/api/invitations/preview',
    route(async (req, res) => res.json(await s.operations.invitationPreview(req.body ?? {}, callerOf(res)))),
  );
  app.post(
    '/api/invitations/accept',
    route(async (req, res) => startSession(req, res, await s.operations.invitationAccept(req.body ?? {}, callerOf(res)))),
  );
  app.delete(
    '/api/invitations/:id',
    route(async (req, res) => res.json(await s.operations.invitationRevoke({ id: req.params.id }, callerOf(res)))),
  );
}
