// npm run eval [-- options]: the labelled datasets against the real server (eval/README.md).
import { mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { baselineOf, readBaseline, regressions, writeBaseline } from "./lib/baseline";
import { loadDatasets } from "./lib/dataset";
import { evaluate, type ConfigReport, type Mode, type Suite } from "./lib/evaluate";
import type { Upstream } from "./lib/model-server";
import { readRecording, writeRecording } from "./lib/recording";
import { htmlReport } from "./lib/report-html";
import { textReport } from "./lib/report-text";
import { ROLES } from "./lib/steps";
import { parseConfig } from "./lib/target";

const USAGE = `usage: npm run eval -- [--live | --replay FILE] [--record FILE] [--compare A B] [--config SPEC]
                      [--suite workbench,clinic,evidence] [--filter REGEX] [--out DIR]
                      [--baseline FILE] [--no-baseline] [--write-baseline] [--verbose]
  SPEC: default | deterministic | WORKBENCH_PLANNER=off[,WORKBENCH_RERANKER=off,…]`;

export interface CliResult {
  code: number;
  reports: ConfigReport[];
  text: string;
}

export function upstreamFromEnv(env: Record<string, string | undefined>): Upstream {
  const baseURL = env.OPENAI_BASE_URL;
  if (!baseURL) throw new Error("--live needs OPENAI_BASE_URL (and OPENAI_API_KEY, LLM_MODEL or LLM_MODEL_<ROLE>)");
  const models = Object.fromEntries(
    ROLES.map((r) => [r, env[`LLM_MODEL_${r.toUpperCase()}`] || env.LLM_MODEL || ""]),
  ) as Upstream["models"];
  const missing = ROLES.filter((r) => !models[r]);
  if (missing.length)
    throw new Error(`--live needs a model name: set LLM_MODEL (or LLM_MODEL_${missing[0]!.toUpperCase()})`);
  return { baseURL, ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}), models };
}

export async function main(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  print: (s: string) => void = console.log,
): Promise<CliResult> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      live: { type: "boolean" },
      replay: { type: "string" },
      record: { type: "string" },
      compare: { type: "boolean" },
      config: { type: "string" },
      suite: { type: "string" },
      filter: { type: "string" },
      out: { type: "string" },
      baseline: { type: "string" },
      "no-baseline": { type: "boolean" },
      "write-baseline": { type: "boolean" },
      verbose: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    print(USAGE);
    return { code: 0, reports: [], text: USAGE };
  }
  const mode: Mode = values.live ? "live" : values.replay ? "replay" : "scripted";
  const configs = values.compare ? positionals.map(parseConfig) : [parseConfig(values.config ?? "default")];
  if (values.compare && configs.length !== 2) throw new Error(`--compare takes two configurations\n${USAGE}`);
  const suites = (values.suite ?? "workbench,clinic,evidence").split(",").map((s) => s.trim()) as Suite[];
  const datasets = loadDatasets();
  const upstream = mode === "live" ? upstreamFromEnv(env) : undefined;
  const replay = values.replay ? readRecording(resolve(values.replay)) : undefined;
  const reports: ConfigReport[] = [];
  for (const config of configs) {
    print(`eval: ${mode}, config ${config.name}…`);
    reports.push(
      await evaluate({
        mode,
        config,
        suites,
        datasets,
        ...(values.filter ? { filter: new RegExp(values.filter) } : {}),
        ...(upstream ? { upstream } : {}),
        ...(replay ? { replay } : {}),
        log: print,
      }),
    );
  }
  if (values.record) {
    writeRecording(resolve(values.record), reports[0]!.recording);
    print(`recorded the models' replies to ${values.record}`);
  }
  const outDir = resolve(values.out ?? resolve(import.meta.dirname, "out"));
  mkdirSync(outDir, { recursive: true });
  const stamp = configs.length === 2 ? "compare" : "report";
  writeFileSync(
    resolve(outDir, `${stamp}.json`),
    JSON.stringify(
      reports.map(({ recording: _r, ...rest }) => rest),
      null,
      1,
    ),
  );
  writeFileSync(resolve(outDir, `${stamp}.html`), htmlReport(reports));
  const text = textReport(reports, { verbose: values.verbose ?? false });
  print(text);
  print(`\nwritten: ${resolve(outDir, `${stamp}.json`)}, ${resolve(outDir, `${stamp}.html`)}`);

  const baselineFile = resolve(values.baseline ?? resolve(import.meta.dirname, "baseline.json"));
  if (values["write-baseline"]) {
    if (mode !== "scripted" || configs.length !== 1 || values.filter)
      throw new Error("--write-baseline records a full scripted run of one configuration");
    writeBaseline(baselineFile, reports[0]!);
    print(`baseline written to ${baselineFile} (${Object.keys(baselineOf(reports[0]!).metrics).length} gated metrics)`);
    return { code: 0, reports, text };
  }
  // The gate: a full scripted run of the default configuration against the recorded baseline.
  if (mode === "scripted" && configs.length === 1 && !values["no-baseline"] && !values.filter) {
    const base = readBaseline(baselineFile);
    if (!base) {
      print(`no baseline at ${baselineFile}: nothing to compare with (record one with --write-baseline)`);
      return { code: 0, reports, text };
    }
    if (base.config !== reports[0]!.config.name) {
      print(`baseline is of configuration ${base.config}; not compared`);
      return { code: 0, reports, text };
    }
    const bad = regressions(base, reports[0]!);
    if (bad.length) {
      print(`\nREGRESSION below the baseline (${baselineFile}):\n  ${bad.join("\n  ")}`);
      return { code: 1, reports, text };
    }
    print(`\nno regression against the baseline recorded ${base.recordedAt}`);
  }
  return { code: 0, reports, text };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (r) => process.exit(r.code),
    (e: Error) => {
      console.error(`eval: ${e.message}`);
      process.exit(2);
    },
  );
}
