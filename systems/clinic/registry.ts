import { seedBookingSteps } from "./seed-booking-steps";
import { seedBranches } from "./seed-branches";
import { seedRouter } from "./seed-router";
import { BranchConfig, ROUTER_CODE, RouterConfig, StepGraph, branchCodes } from "./types";
import type { BranchCode, Registry, StepSpec } from "./types";

/** The registry built from the seed data alone (tests, and the fallback before the database is read). */
export function defaultRegistry(): Registry {
  return buildRegistry([...Object.values(seedBranches), seedRouter], [seedBookingSteps]);
}

/** Validates rows (from the database or the seed) into a registry; a missing branch is an error. */
export function buildRegistry(branches: unknown[], graphs: unknown[]): Registry {
  const isRouter = (b: unknown) => (b as { code?: unknown } | null)?.code === ROUTER_CODE;
  const routerRow = branches.find(isRouter);
  const router = RouterConfig.parse(routerRow ?? seedRouter);
  const parsed = branches.filter((b) => !isRouter(b)).map((b) => BranchConfig.parse(b));
  const byCode = new Map(parsed.map((b) => [b.code, b]));
  for (const code of branchCodes)
    if (!byCode.has(code)) throw new Error(`clinic registry: branch ${code} has no active version`);
  const stepGraphs: Registry["stepGraphs"] = {};
  for (const g of graphs) {
    const graph = StepGraph.parse(g);
    if (!byCode.has(graph.branch as BranchCode))
      throw new Error(`clinic registry: step graph for unknown branch ${graph.branch}`);
    stepGraphs[graph.branch as BranchCode] = graph;
  }
  return { branches: Object.fromEntries(byCode) as Registry["branches"], stepGraphs, router };
}

export const isStepped = (reg: Registry, branch: BranchCode | null): boolean =>
  branch !== null && reg.stepGraphs[branch] !== undefined;

export function initialStep(reg: Registry, branch: BranchCode): string | null {
  const g = reg.stepGraphs[branch];
  if (!g) return null;
  return g.initial ?? g.steps[0]!.code;
}

export function stepSpec(reg: Registry, branch: BranchCode | null, step: string | null): StepSpec | undefined {
  if (branch === null || step === null) return undefined;
  return reg.stepGraphs[branch]?.steps.find((s) => s.code === step);
}

/** A finished scenario (its step can only stay) is not suspended on a handoff: there is nothing to resume. */
export function isTerminalStep(reg: Registry, branch: BranchCode | null, step: string | null): boolean {
  const spec = stepSpec(reg, branch, step);
  return spec !== undefined && spec.allowed_next.every((n) => n === spec.code);
}
