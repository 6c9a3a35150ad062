/** A knowledge-base document as the Clinic API takes it: an id keeps re-uploads to one document. */
export type KbDocument = { id?: string; title: string; text: string };

/** Uploads (or replaces) one knowledge-base document; the caller checks the status it expects. */
export const uploadKb = (base: string, headers: Record<string, string>, doc: KbDocument): Promise<Response> =>
  fetch(`${base}/v1/clinic/kb/documents`, { method: "POST", headers, body: JSON.stringify(doc) });
