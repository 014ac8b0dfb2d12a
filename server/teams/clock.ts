/** Time source of the teamspace services; tests replace `now` to cross a month boundary. */
export interface Clock {
  now(): Date;
}

export const systemClock = (): Clock => ({ now: () => new Date() });

/** YYYY-MM-DD of a UTC day. */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** First instant of the month after `d`, UTC: when monthly numbers restart. */
export function nextMonthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

export function monthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

/** The day `n` days before `day` (YYYY-MM-DD). */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}
