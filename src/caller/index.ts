// The caller: who speaks to the agent during a smoke call, over the conversation's WebSocket
// session — scripted turns, or a model playing a persona. Knows nothing of smoke or the commands: it
// takes a session port, the control-message shape (configuration) and a source of lines.
export { PersonaModel, requirePersona } from "./persona.ts";
export {
  CALLER_OWN_FAILURES,
  Caller,
  type CallerFailure,
  type CallerLine,
  isCallerLine,
  scriptedTurns,
  type TurnSource,
} from "./script.ts";
export {
  type CallerShape,
  callerShape,
} from "./shape.ts";
export { Rephrasings } from "./variations.ts";
