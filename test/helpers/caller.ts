// The simulator's control-message shapes per profile (docs/simulator.md), as a caller sends them and
// as `agents:callerMessage` / `agents:callerEnd` write them.
import type { ProfileName } from "../../src/simulator/index.ts";

type Shapes = {
  message(text: string): Record<string, unknown>;
  end: Record<string, unknown>;
  /** The stack settings that select these shapes. */
  config: { callerMessage: string; callerEnd: string };
};

export const SIMULATOR_SHAPES: Record<ProfileName, Shapes> = {
  default: {
    message: (text) => ({ type: "user.message", text }),
    end: { type: "end" },
    config: { callerMessage: '{"type": "user.message", "text": "{{text}}"}', callerEnd: '{"type": "end"}' },
  },
  variant: {
    message: (text) => ({ action: "say", message: { content: text } }),
    end: { action: "hangup" },
    config: {
      callerMessage: '{"action": "say", "message": {"content": "{{text}}"}}',
      callerEnd: '{"action": "hangup"}',
    },
  },
};
