import { describe, expect, it } from "vitest";
import { parseRouterOutput } from "../../../systems/clinic/router-output";

describe("parseRouterOutput", () => {
  it("accepts a bare code, a quoted or fenced one, and JSON {intent}", () => {
    expect(parseRouterOutput("price_question")).toBe("price_question");
    expect(parseRouterOutput("  general_info.\n")).toBe("general_info");
    expect(parseRouterOutput('"new_booking"')).toBe("new_booking");
    expect(parseRouterOutput('{"intent": "reschedule"}')).toBe("reschedule");
    expect(parseRouterOutput('```json\n{"intent":"escalate_human"}\n```')).toBe("escalate_human");
    expect(parseRouterOutput("Intent: medical_question")).toBe("medical_question");
  });

  it("refuses anything that is not exactly one known code", () => {
    expect(parseRouterOutput("")).toBeNull();
    expect(parseRouterOutput("booking")).toBeNull();
    expect(parseRouterOutput('{"intent": "dentist"}')).toBeNull();
    expect(parseRouterOutput('{"intent": ')).toBeNull();
    expect(parseRouterOutput("price_question или general_info")).toBeNull();
    expect(parseRouterOutput("new_booking_extra")).toBeNull();
  });
});

describe("router codes in upper case", () => {
  it('reads PRICE_QUESTION, {"intent": "ESCALATE_HUMAN"} and Intent: GENERAL_INFO', () => {
    expect(parseRouterOutput("PRICE_QUESTION")).toBe("price_question");
    expect(parseRouterOutput('{"intent": "ESCALATE_HUMAN"}')).toBe("escalate_human");
    expect(parseRouterOutput("Intent: GENERAL_INFO.")).toBe("general_info");
    expect(parseRouterOutput("NOT_A_CODE")).toBeNull();
  });
});
