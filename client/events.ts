import type { EventsOf, runEvents, SystemEvents } from "../contract/http";
import type { ClinicEvents } from "../contract/clinic/contract";
import type { EvidenceEvents } from "../contract/evidence/contract";
import type { WorkbenchEvents } from "../contract/workbench/contract";

/**
 * The events of a run (doc/api.md, doc/streaming.md), typed from the zod contracts the server
 * emits with (`contract/http.ts` for the events every run shares, `contract/<name>/contract.ts`
 * for each system's): a change to an event schema is a type error in code that reads it. Only
 * types are imported, so the client carries none of the server's code (test/client/events-types.test.ts).
 */

export type { ClinicEvents, EvidenceEvents, WorkbenchEvents };
/** The events every run may carry, whatever its system: name → payload. */
export type SharedEvents = EventsOf<typeof runEvents>;

/** One event as the client yields it; `id` is its SSE id (1, 2, … within the run). */
export type EventOf<M> = { [K in keyof M & string]: { event: K; id: number; data: M[K] } }[keyof M & string];
/** An event of a route the client has no types for (`sendTo`): any name, data as parsed. */
export type UntypedEvent = { event: string; id: number; data: unknown };

export type ClinicEvent = EventOf<ClinicEvents>;
export type WorkbenchEvent = EventOf<WorkbenchEvents>;
export type EvidenceEvent = EventOf<EvidenceEvents>;
/** An event of a run of any of these systems (system name → its events). */
export type RunEventIn<R> = { [K in keyof R]: EventOf<R[K]> }[keyof R];
/**
 * An event of any system's run (`runs.follow`: the run's system is not known beforehand): read
 * from the systems' contracts, each of which registers its events (contract/http.ts `SystemEvents`).
 */
export type AnyRunEvent = RunEventIn<SystemEvents>;

/** The payload of the events named `N` in the union `E` (`unknown` for an untyped event). */
export type DataOf<E, N extends string> = E extends { event: infer K; data: infer D }
  ? N extends K
    ? D
    : never
  : never;

export type RunStarted = SharedEvents["run_started"];
export type StageEvent = SharedEvents["stage"];
export type TokenEvent = SharedEvents["token"];
/** The server's own `error` event: the run failed; it is not a dropped connection. */
export type ServerError = SharedEvents["error"];
export type RouterDecision = ClinicEvents["router_decision"];
export type ClarificationRequired = WorkbenchEvents["clarification_required"];
export type Candidate = ClarificationRequired["candidates"][number];
export type AnswerReplaced = WorkbenchEvents["answer_replaced"];
export type ClinicFinal = ClinicEvents["final"];
export type WorkbenchFinal = WorkbenchEvents["final"];
export type EvidenceFinal = EvidenceEvents["final"];
