/**
 * The job registry an application declares once, by declaration merging on
 * the module `leasehold`:
 *
 *     declare module 'leasehold' {
 *       interface Jobs { email: { payload: { to: string }; result: { messageId: string } } }
 *     }
 *
 * With it, enqueue, get and defineHandler check classes, payloads and
 * results at compile time. With nothing declared, a class is any string and
 * payloads and results are `unknown`, as they are at run time.
 */

/** Each job class, with its `payload` and (optional) `result` types. Empty until the application declares it. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by the application's declaration merge
export interface Jobs {}

type Declared = [keyof Jobs] extends [never] ? false : true;

/** The declared classes' names once any is declared; any string until then. */
export type JobClass = Declared extends true ? keyof Jobs & string : string;

/** What class C declares: `{ payload, result }`, either optional; nothing for an undeclared class. */
type TypesOf<C> = C extends keyof Jobs ? Jobs[C] : object;

/** A class's payload type (`unknown` when undeclared); a union of classes gives the union of their payloads. */
export type PayloadOf<C> = C extends unknown ? (TypesOf<C> extends { payload: infer P } ? P : unknown) : never;

/** A class's result type (`unknown` when undeclared). */
export type ResultOf<C> = C extends unknown ? (TypesOf<C> extends { result: infer R } ? R : unknown) : never;
