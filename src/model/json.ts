// JSON in a model's text, read once for every reader: the whole text (a server that honours
// `response_format`), a ```json fence, or the outermost braces (one that ignores it: prose around
// the object). The text around the object is returned too: a reader may refuse what it says.

/** The first JSON object in a text and the text around it, or undefined when none parses. */
export function jsonIn(text: string): { value: unknown; around: string } | undefined {
  const candidates: { json: string; around: string }[] = [{ json: text.trim(), around: "" }];
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fence?.[1]) {
    candidates.push({
      json: fence[1].trim(),
      around: text.slice(0, fence.index) + text.slice(fence.index + fence[0].length),
    });
  }
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start >= 0 && end > start) {
    candidates.push({ json: text.slice(start, end + 1), around: text.slice(0, start) + text.slice(end + 1) });
  }
  for (const candidate of candidates) {
    try {
      return { value: JSON.parse(candidate.json), around: candidate.around };
    } catch {
      // the next candidate
    }
  }
  return undefined;
}
