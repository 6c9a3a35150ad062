export { ANSWER_PROMPT } from "./answer";
export { CRITIC_PROMPT } from "./critic";
export { INTERPRETER_PROMPT } from "./interpreter";
export { PLANNER_PROMPT } from "./planner";
