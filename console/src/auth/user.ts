/** The signed-in user as the console knows it and its mapping from server payloads. */
import { z } from 'zod';

export const DEFAULT_ORGANIZATION_ID = 1;

export interface SessionUser {
  id: number | string;
  email: string;
  name: string;
  roles: string[];
  organizationId: number;
  superuser: boolean;
}

/** Auth responses carry `organization_id`; the profile may carry either spelling. */
export const serverUserSchema = z.object({
  id: z.union([z.number(), z.string()]),
  email: z.string(),
  name: z.string().nullish(),
  roles: z.array(z.string()).nullish(),
  organization_id: z.number().nullish(),
  organizationId: z.number().nullish(),
  superuser: z.boolean().nullish(),
});
export type ServerUser = z.infer<typeof serverUserSchema>;

export const authResponseSchema = z.object({ token: z.string().min(1), user: serverUserSchema });

export function toSessionUser(user: ServerUser): SessionUser {
  return {
    id: user.id,
    email: user.email,
    name: user.name ?? '',
    roles: user.roles ?? [],
    organizationId: user.organization_id ?? user.organizationId ?? DEFAULT_ORGANIZATION_ID,
    superuser: user.superuser ?? false,
  };
}

/** Two letters for the avatar: first and last word of the name, else the email. */
export function initialsOf(user: Pick<SessionUser, 'name' | 'email'>): string {
  const words = user.name.trim().split(/\s+/).filter(Boolean);
  if (words.length >= 2) return `${words[0]![0]}${words[words.length - 1]![0]}`.toUpperCase();
  if (words.length === 1) return words[0]!.slice(0, 2).toUpperCase();
  return user.email.slice(0, 2).toUpperCase();
}
