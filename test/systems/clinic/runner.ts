import type { HumanEvent } from "../../../systems/clinic/human";
import { initialTransition, transition } from "xstate";
import { drive } from "../../../driver/drive";
import { buildBranchMessages, buildRouterMessages } from "../../../systems/clinic/prompt";
import type { HistoryMessage, KnowledgeFragment, PromptMessage } from "../../../systems/clinic/prompt";
import type { ClinicState, Registry } from "../../../systems/clinic/types";
import { createClinicDialogueMachine } from "../../../systems/clinic/dialogue.machine";
import type {
  ClinicDialogueMachine,
  DialogueContext,
  DialogueEmitted,
  DialogueEvent,
} from "../../../systems/clinic/dialogue.machine";

/**
 * The clinic machine driven by the driver's own loop (driver/drive.ts), its effects answered
 * from a script, with the snapshot JSON round-tripped between turns like the real driver persists it.
 */

export type Reply = string | { fail: true };
export interface TurnScript {
  router: Reply[];
  branch: Reply[];
  fragments?: KnowledgeFragment[];
}
/** Models as functions of the messages they would get (e.g. the offline responders). */
export interface Responders {
  router: (messages: PromptMessage[]) => string;
  branch: (messages: PromptMessage[]) => string;
  fragments?: KnowledgeFragment[];
}
export interface EffectLog {
  type: string;
  system?: string;
  branch?: string;
}
export type TurnResult =
  | {
      ok: true;
      reply: string;
      state: ClinicState;
      events: string[];
      notes: string[];
      calls: { router: number; branch: number };
      effects: EffectLog[];
      persisted: string;
    }
  | { ok: false; persisted: string; calls: { router: number; branch: number } };

export function createRunner(registry: Registry) {
  const machine: ClinicDialogueMachine = createClinicDialogueMachine(registry);
  const history: HistoryMessage[] = [];
  let persisted = JSON.stringify(machine.getPersistedSnapshot(initialTransition(machine, {})[0], undefined));
  // The whole persisted snapshot, history included (a resume enters the stepped branch's history state).
  const restore = (json: string) => machine.resolveState(JSON.parse(json) as never);
  return {
    machine,
    get persisted() {
      return persisted;
    },
    get state(): ClinicState {
      return (JSON.parse(persisted) as { context: DialogueContext }).context.state;
    },
    history,
    /** An operator's event (take, message, release, close): false when the machine does not take it. */
    operator(event: HumanEvent): boolean {
      const snap = restore(persisted);
      if (!snap.can(event as never)) return false;
      persisted = JSON.stringify(machine.getPersistedSnapshot(transition(machine, snap, event as never)[0], undefined));
      if (event.type === "operator.message")
        history.push({ role: "assistant", text: `[Администратор клиники]: ${event.text}` });
      return true;
    },
    get value(): Record<string, unknown> {
      return (JSON.parse(persisted) as { value: Record<string, unknown> }).value;
    },
    turn(text: string, script: TurnScript | Responders): TurnResult {
      const scripted = Array.isArray(script.router);
      const router = scripted ? [...(script as TurnScript).router] : [];
      const branch = scripted ? [...(script as TurnScript).branch] : [];
      const fn = scripted ? null : (script as Responders);
      const calls = { router: 0, branch: 0 };
      const effects: EffectLog[] = [];
      let final: Extract<DialogueEmitted, { type: "clinic.final" }> | null = null;
      // The driver's own loop (driver/drive.ts), its effects answered from the script.
      const walk = drive({
        machine,
        id: "clinic-runner",
        snapshot: restore(persisted),
        events: [{ type: "patient.message", text }] as DialogueEvent[],
        maxSteps: 20,
      });
      let step = walk.next([]);
      while (!step.done) {
        const e = step.value as DialogueEmitted;
        effects.push({ type: e.type, ...(e.type === "effect.branch" ? { system: e.system, branch: e.branch } : {}) });
        const fed: DialogueEvent[] = [];
        if (e.type === "effect.router") {
          calls.router++;
          const r = fn ? fn.router(buildRouterMessages(history, e.text)) : (router.shift() ?? "");
          if (typeof r !== "string") return { ok: false, persisted, calls };
          fed.push({ type: "router.result", text: r });
        } else if (e.type === "effect.branch") {
          calls.branch++;
          const r = fn ? fn.branch(buildBranchMessages(e.system, history, e.text)) : (branch.shift() ?? "");
          if (typeof r !== "string") return { ok: false, persisted, calls };
          fed.push({ type: "branch.result", text: r });
        } else if (e.type === "effect.retrieve") {
          fed.push({ type: "retrieve.result", fragments: script.fragments ?? [] });
        } else if (e.type === "clinic.final") final = e;
        step = walk.next(fed);
      }
      const snap = step.value.snapshot;
      if (!final) throw new Error(`runner: turn ended without final (state ${JSON.stringify(snap.value)})`);
      persisted = JSON.stringify(machine.getPersistedSnapshot(snap, undefined));
      history.push({ role: "user", text }, { role: "assistant", text: final.reply });
      return {
        ok: true,
        reply: final.reply,
        state: final.state,
        events: final.events,
        notes: final.notes,
        calls,
        effects,
        persisted,
      };
    },
  };
}
