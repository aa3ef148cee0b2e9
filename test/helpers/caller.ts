// The simulator's control-message shapes per profile (docs/simulator.md), as a caller sends them and
// as `agents:callerMessage` / `agents:callerEnd` write them.
import type { ProfileName } from "../../src/simulator/index.ts";

/** The templates as stack settings (`callerMessage`) and as the caller's shape settings (`message`). */
const shapeConfig = (message: string, end: string) => ({ callerMessage: message, callerEnd: end, message, end });

type Shapes = {
  message(text: string): Record<string, unknown>;
  end: Record<string, unknown>;
  /** The stack settings that select these shapes. */
  config: { callerMessage: string; callerEnd: string; message: string; end: string };
};

export const SIMULATOR_SHAPES: Record<ProfileName, Shapes> = {
  default: {
    message: (text) => ({ type: "user.message", text }),
    end: { type: "end" },
    config: shapeConfig('{"type": "user.message", "text": "{{text}}"}', '{"type": "end"}'),
  },
  variant: {
    message: (text) => ({ action: "say", message: { content: text } }),
    end: { action: "hangup" },
    config: shapeConfig('{"action": "say", "message": {"content": "{{text}}"}}', '{"action": "hangup"}'),
  },
};
