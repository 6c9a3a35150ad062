import type { Run } from "../../driver/run";
import type { ClinicEvents } from "./contract";
import type { Sql } from "../../storage/db";
import { saveContactPhone, type Handling } from "../../storage/inbox";
import { appendMessages } from "../../storage/messages";
import { CONTACT_SAVED, HOLDING_REPLY, phoneFromText } from "./contact";
import type { ClinicState } from "./types";

/**
 * A patient's message while an operator has the thread (status `taken`): stored with a fixed
 * holding reply and no model call, until the operator releases it. The dialogue machine is not
 * given the message, so its snapshot and event log stay where the operator found them.
 */
export async function holdClinicTurn(a: {
  sql: Sql;
  run: Run<ClinicEvents>;
  threadId: string;
  text: string;
  handling: Handling;
  state: ClinicState;
}): Promise<{ reply: string }> {
  const phone = a.handling.contactPhone ? null : phoneFromText(a.text);
  const reply = phone ? `${CONTACT_SAVED} ${HOLDING_REPLY}` : HOLDING_REPLY;
  a.run.emit("token", { delta: reply });
  const publish = await a.sql.begin(async (tx) => {
    await appendMessages(
      tx,
      a.threadId,
      [
        { role: "user", text: a.text },
        { role: "assistant", text: reply, meta: { events: ["held_by_operator"], activeBranch: a.state.activeBranch } },
      ],
      a.run.id,
    );
    if (phone) await saveContactPhone(tx, a.threadId, phone);
    return a.run.complete(tx, [{ event: "final", data: { reply, state: a.state, events: ["held_by_operator"] } }], {
      outcome: "held_by_operator",
      reasonCodes: ["held_by_operator"],
    });
  });
  publish();
  return { reply };
}
