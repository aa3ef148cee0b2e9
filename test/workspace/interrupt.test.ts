// A terminal's Ctrl+C reaches the Pulumi CLI and agent-iac at once (one process group). The CLI
// says it is cancelling; agent-iac must then not send it a second SIGINT, which makes the CLI stop
// at once and leave the stack locked (while agent-iac said "the stack is unlocked"). A stand-in CLI
// (a real process with the CLI's cancel notice and its second-^C exit) and a busy event loop: on a
// loaded machine agent-iac's forward timer and the CLI's notice become due in the same loop turn.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { InterruptedError } from "../../src/errors/index.ts";
import { type Interrupts, interruptible } from "../../src/workspace/index.ts";

// Its first SIGINT: the Pulumi CLI's notice, then a graceful end; a second: it stops at once (exit 9).
const CLI_STAND_IN = `
let received = 0;
process.on("SIGINT", () => {
  received += 1;
  if (received === 2) process.exit(9);
  process.stdout.write("^C received; cancelling. If you would like to terminate immediately, press ^C again.\\n");
  setTimeout(() => process.exit(0), 1500);
});
process.stdout.write("ready\\n");
setInterval(() => {}, 1000);
`;

describe("interruptible: a signal the Pulumi CLI got itself", () => {
  it("is not forwarded a second time when the CLI's notice arrived while the event loop was busy", async () => {
    let deliver: ((signal: NodeJS.Signals, repeat: boolean) => void) | undefined;
    const interrupts: Interrupts = (listener) => {
      deliver = listener;
      return () => {
        deliver = undefined;
      };
    };
    let cliExit: number | null = null;
    const run = interruptible(
      () => {},
      async ({ signal, onOutput }) => {
        const cli = spawn(process.execPath, ["-e", CLI_STAND_IN], { stdio: ["ignore", "pipe", "inherit"] });
        // As the Automation API does: an abort is one SIGINT to the CLI.
        signal.addEventListener("abort", () => cli.kill("SIGINT"));
        cli.stdout.setEncoding("utf8");
        let said = "";
        cli.stdout.on("data", (text: string) => {
          said += text;
          onOutput(text);
          if (text.includes("ready")) {
            // The terminal's Ctrl+C: the CLI and agent-iac at the same moment.
            cli.kill("SIGINT");
            deliver?.("SIGINT", false);
            // Busy past the forward delay: the CLI's notice waits in the pipe.
            const until = Date.now() + 1500;
            while (Date.now() < until) {}
          }
        });
        [cliExit] = (await once(cli, "exit")) as [number | null];
        return said;
      },
      interrupts,
    );
    await expect(run).rejects.toBeInstanceOf(InterruptedError);
    // One SIGINT reached the CLI (exit 0, its graceful end), not two (exit 9: stopped at once).
    expect(cliExit).toBe(0);
  });
});
