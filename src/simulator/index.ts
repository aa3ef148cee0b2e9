// The local simulator of the service (see README.md in this folder): `startSimulator` serves the
// whole interface on loopback; `agent-iac service` runs it from the command line. Other code can
// find a running simulator by its data file's lock (`readSimulatorLock`) or its address
// (`probeSimulator`).
export {
  type SimulatorDelivery,
  type SimulatorHealth,
  type SimulatorInfo,
  simulatorAgents,
  simulatorDeliveries,
  simulatorHealth,
  simulatorInfo,
} from "./admin-schema.ts";
export { buildApp } from "./app.ts";
export { createContext, type Sim } from "./context.ts";
export { lockFileOf, probeSimulator, readSimulatorLock, type SimulatorLock, SimulatorLockedError } from "./lock.ts";
export { PROFILE_NAMES, type ProfileName } from "./profile.ts";
export {
  DEV_API_KEY,
  resolveSettings,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from "./server.ts";
export { DataFileError, Store } from "./store.ts";
