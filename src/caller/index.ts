// The caller: who speaks to the agent during a smoke call, over the conversation's WebSocket
// session — scripted turns, or a model playing a persona. Knows nothing of smoke or the commands: it
// takes a session port, the control-message shape (configuration) and a source of lines.
export {
  Caller,
  type CallerFailure,
  type CallerLine,
  type CallerTurn,
  type CallerView,
  FIRST_TURN_WAIT_MS,
  QUIET_MS,
  scriptedTurns,
  type TurnSource,
} from "./script.ts";
export {
  CALLER_KEYS,
  type CallerShape,
  type CallerShapeSettings,
  callerShape,
  resolveCallerShapeSettings,
  SIMULATOR_CALLER_SHAPE,
} from "./shape.ts";
