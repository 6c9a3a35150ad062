import type { Sql, Tx } from "../../storage/db";
import { chunkDocument } from "./kb-chunk";
import { replaceChunks, upsertDocument } from "./store/kb";

/**
 * A demo knowledge base for a fresh install (issue 45: the README's first question «Какой у вас
 * адрес?» found nothing, the knowledge base shipped empty). Loaded by main.ts only when the
 * embedded database was created by this start, never over a tenant's own documents; every
 * document's id starts with `demo-` and its title and text say it is demo data, so an operator
 * tells it from real content and removes it in one step (Settings, or DELETE /v1/clinic/kb/demo).
 */
export const DEMO_PREFIX = "demo-";

const NOTE = "Демонстрационные данные (не настоящая клиника) — удалите их в «Настройках», когда загрузите свои.";

export const DEMO_DOCUMENTS: readonly { id: string; title: string; text: string }[] = [
  {
    id: "demo-address",
    title: "Демо: адрес и как добраться",
    text: `# Адрес клиники
Демо-клиника «Здоровье» находится по адресу: г. Москва, ул. Примерная, д. 10, вход со двора, 2 этаж. ${NOTE}

# Как добраться
От метро «Примерная» 5 минут пешком. Парковка для пациентов во дворе, бесплатно первые 2 часа.`,
  },
  {
    id: "demo-hours",
    title: "Демо: часы работы",
    text: `# Часы работы
Режим работы демо-клиники: понедельник–пятница открываемся в 8:00, закрываемся в 21:00; суббота с 9:00 до 18:00; воскресенье — выходной. ${NOTE}

# Праздничные дни
В праздничные дни клиника работает по сокращённому графику с 10:00 до 16:00.`,
  },
  {
    id: "demo-prices",
    title: "Демо: цены на приём",
    text: `# Цены на приём врача
Стоимость (демо-прайс): первичный приём терапевта — 2 500 руб., повторный — 2 000 руб.; ЛОР — 2 800 руб.; кардиолог — 3 200 руб.; невролог — 3 000 руб. ${NOTE}

# Анализы
Общий анализ крови — 600 руб., забор крови — 250 руб. Оплата картой или наличными.`,
  },
];

/** Writes the demo documents and their chunks in one transaction; returns how many were written. */
export async function loadDemoKnowledgeBase(sql: Sql, tenantId = "default"): Promise<number> {
  await sql.begin(async (tx: Tx) => {
    for (const d of DEMO_DOCUMENTS) {
      await upsertDocument(tx, tenantId, { id: d.id, title: d.title, body: d.text, branch: null });
      await replaceChunks(tx, tenantId, d.id, chunkDocument(d.title, d.text));
    }
  });
  return DEMO_DOCUMENTS.length;
}

/** Removes every demo document of the tenant (chunks go with them); returns how many were removed. */
export async function removeDemoKnowledgeBase(sql: Tx, tenantId: string): Promise<number> {
  const r =
    await sql`delete from clinic_kb_documents where tenant_id = ${tenantId} and starts_with(id, ${DEMO_PREFIX})`;
  return r.count;
}
