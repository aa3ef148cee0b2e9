// The local simulator of the service (see README.md in this folder): `startSimulator` serves the
// whole interface on loopback; `agent-iac service` runs it from the command line.
export { DEV_API_KEY, type Simulator, type SimulatorOptions, startSimulator } from "./server.ts";
