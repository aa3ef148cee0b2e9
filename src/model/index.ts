// The model port: the one client of every model request (POST /chat/completions), the message
// type, structured answers declared as zod schemas, and JSON in a model's text read once. Its users
// (src/judge, src/caller, src/drafts) build prompts and read meanings; nothing else sends to a model.
export {
  type AnswerShape,
  type ChatMessage,
  ModelClient,
  type ModelEndpoint,
  readShape,
  responseFormat,
} from "./client.ts";
export { jsonIn } from "./json.ts";
