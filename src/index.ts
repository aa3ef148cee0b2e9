// The package's main entry (`import … from "agent-iac"`): agents declared in any Pulumi TypeScript
// program, one by one or as a folder of agent files. See README "Use it from your own Pulumi program".
export {
  AGENT_DIRECTORY_TYPE,
  AgentDirectory,
  type AgentDirectoryArgs,
  type DeployedAgent,
} from "./component/index.ts";
export {
  ConversationalAgent,
  type ConversationalAgentArgs,
  type ConversationalAgentConfigArgs,
  type Inputs,
  ProceduralAgent,
  type ProceduralAgentArgs,
  type ProceduralAgentConfigArgs,
  type PromptArgs,
  type ToolArgs,
} from "./provider/index.ts";
